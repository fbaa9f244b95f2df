package execlog_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m, writerMain) }

// writerMain appends EXEC_TEST_N verdicts tagged EXEC_TEST_TAG ("loop":
// until killed).
func writerMain(role string) int {
	g, err := gitstore.Open(os.Getenv("EXEC_TEST_DIR"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	l := execlog.Open(g)
	n, _ := strconv.Atoi(os.Getenv("EXEC_TEST_N"))
	tag := os.Getenv("EXEC_TEST_TAG")
	commit := os.Getenv("EXEC_TEST_COMMIT")
	for i := 0; role == "loop" || i < n; i++ {
		_, err := l.Append(context.Background(), execlog.Entry{Task: "S1-01/" + tag, Attempt: i + 1, Phase: "green",
			Event: "verdict", Result: "PASS", Commit: commit, Detail: fmt.Sprintf("%s-%d", tag, i)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			return 1
		}
	}
	return 0
}

type fixture struct {
	dir string
	g   *gitstore.Store
	log *execlog.Log
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return &fixture{dir: dir, g: g, log: execlog.Open(g)}
}

func (fx *fixture) head(t *testing.T) string { return gt.Git(t, fx.dir, "rev-parse", "HEAD") }

func (fx *fixture) commit(t *testing.T, msg string) string {
	gt.Git(t, fx.dir, "commit", "-q", "--allow-empty", "-m", msg)
	return fx.head(t)
}

func verdict(task, phase, result, commit string) execlog.Entry {
	return execlog.Entry{Task: task, Attempt: 1, Phase: phase, Event: "verdict", Result: result, Commit: commit}
}

func TestLog_Append_RoundTripAndNewestFirst(t *testing.T) {
	fx := newFixture(t)
	ctx := t.Context()
	c := fx.head(t)
	tree := gt.Git(t, fx.dir, "rev-parse", "HEAD^{tree}")
	in := execlog.Entry{Actor: "gate", Sprint: 1, Wave: 2, Task: "S1-01/T1", Attempt: 1, Phase: "green", Event: "verdict",
		Result: "FAIL", Commit: c, Tree: tree, Base: c,
		Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "touched b.go", Paths: []string{"b.go"}}},
		Tests:   []execlog.TestResult{{ID: "a_test.go::TestA", Outcome: "PASS"}, {ID: "a_test.go::TestB", Outcome: "FAIL_ASSERT", Detail: "got 1"}},
		Paths:   []string{"b.go"}, Detail: "one\nline"}
	first, err := fx.log.Append(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID == "" || first.At == "" || first.Story != "S1-01" {
		t.Fatalf("Append did not fill id, time and story: %+v", first)
	}
	second, err := fx.log.Append(ctx, execlog.Entry{Task: "S1-01/T2", Phase: "red", Event: "start"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fx.log.List(ctx, execlog.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != second.ID || got[1].ID != first.ID {
		t.Fatalf("List is not newest first: %+v", got)
	}
	if fmt.Sprint(got[1]) != fmt.Sprint(first) {
		t.Fatalf("round trip changed the entry:\n got %+v\nwant %+v", got[1], first)
	}
	if n := gt.Git(t, fx.dir, "rev-list", "--count", execlog.Ref); n != "2" {
		t.Fatalf("%s commits, want one per entry", n)
	}
	msg := gt.Git(t, fx.dir, "log", "-1", "--format=%B", execlog.Ref)
	if !strings.HasPrefix(msg, "red start S1-01/T2") || !strings.Contains(msg, "Ideate-Exec: "+second.ID) {
		t.Fatalf("commit message: %q", msg)
	}
	gt.Fsck(t, fx.dir)
}

func TestLog_Append_NoteOnJudgedCommitKeepsOtherLines(t *testing.T) {
	fx := newFixture(t)
	ctx := t.Context()
	c := fx.commit(t, "work")
	gt.Git(t, fx.dir, "notes", "--ref=ideate", "add", "-m", "ideate-record: 01JD0000000000000000000000 commit-boundary", c)
	e, err := fx.log.Append(ctx, verdict("S1-01/T1", "green", "PASS", c))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.log.Append(ctx, execlog.Entry{Task: "S1-01/T1", Phase: "green", Event: "start", Commit: c}); err != nil {
		t.Fatal(err)
	}
	note := gt.Git(t, fx.dir, "notes", "--ref=ideate", "show", c)
	want := "ideate-record: 01JD0000000000000000000000 commit-boundary\nideate: green PASS S1-01/T1 attempt 1 (exec " + e.ID + ")"
	if note != want {
		t.Fatalf("note:\n%s\nwant:\n%s", note, want)
	}
	if out := gt.Git(t, fx.dir, "log", "-1", "--notes=ideate", c); !strings.Contains(out, "ideate: green PASS S1-01/T1 attempt 1") {
		t.Fatalf("git log --notes=ideate does not show the verdict:\n%s", out)
	}
	gt.Fsck(t, fx.dir)
}

func TestLog_Latest(t *testing.T) {
	fx := newFixture(t)
	ctx := t.Context()
	c1 := fx.commit(t, "one")
	c2 := fx.commit(t, "two")
	must := func(e execlog.Entry) execlog.Entry {
		t.Helper()
		out, err := fx.log.Append(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if _, ok, err := fx.log.Latest(ctx, "S1-01/T1", "red", ""); err != nil || ok {
		t.Fatalf("Latest on an empty log: ok=%v err=%v", ok, err)
	}
	r1 := must(verdict("S1-01/T1", "red", "PASS", c1))
	must(verdict("S1-01/T2", "red", "FAIL", c2))
	must(execlog.Entry{Task: "S1-01/T1", Phase: "red", Event: "start", Commit: c2})
	g2 := must(verdict("S1-01/T1", "green", "FAIL", c2))
	r2 := must(verdict("S1-01/T1", "red", "FAIL", c2))
	for _, tc := range []struct {
		task, phase, commit string
		want                string
	}{
		{"S1-01/T1", "red", "", r2.ID},
		{"S1-01/T1", "red", c1, r1.ID},
		{"S1-01/T1", "red", c1[:10], r1.ID},
		{"S1-01/T1", "green", "", g2.ID},
		{"S1-01/T1", "green", c1, ""},
		{"S1-01/T3", "red", "", ""},
	} {
		e, ok, err := fx.log.Latest(ctx, tc.task, tc.phase, tc.commit)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (tc.want != "") || ok && e.ID != tc.want {
			t.Errorf("Latest(%s, %s, %.10s) = %s %v, want %s", tc.task, tc.phase, tc.commit, e.ID, ok, tc.want)
		}
	}
	got, err := fx.log.List(ctx, execlog.Filter{Task: "S1-01/T1", Event: "verdict", Limit: 2})
	if err != nil || len(got) != 2 || got[0].ID != r2.ID || got[1].ID != g2.ID {
		t.Fatalf("List with a filter and limit: %v %+v", err, got)
	}
	got, _ = fx.log.List(ctx, execlog.Filter{Result: "FAIL", Phase: "red"})
	if len(got) != 2 {
		t.Fatalf("List Result=FAIL Phase=red: %d entries", len(got))
	}
}

func TestLog_Append_RefusesBadInputAndWritesNothing(t *testing.T) {
	fx := newFixture(t)
	c := fx.head(t)
	big := strings.Repeat("x", execlog.MaxEntry)
	for name, e := range map[string]execlog.Entry{
		"no phase":            {Event: "start"},
		"no event":            {Phase: "red"},
		"phase two words":     {Phase: "red green", Event: "start"},
		"upper-case phase":    {Phase: "RED", Event: "start"},
		"verdict no result":   {Phase: "red", Event: "verdict"},
		"verdict bad result":  {Phase: "red", Event: "verdict", Result: "OK"},
		"result on start":     {Phase: "red", Event: "start", Result: "PASS"},
		"negative attempt":    {Phase: "red", Event: "start", Attempt: -1},
		"short commit":        {Phase: "red", Event: "verdict", Result: "PASS", Commit: c[:12]},
		"unknown commit":      {Phase: "red", Event: "verdict", Result: "PASS", Commit: strings.Repeat("ab", 20)},
		"tree not hex":        {Phase: "red", Event: "start", Tree: strings.Repeat("zz", 20)},
		"task with space":     {Phase: "red", Event: "start", Task: "S1-01 T1"},
		"task with NUL":       {Phase: "red", Event: "start", Task: "S1-01/T1\x00"},
		"task with newline":   {Phase: "red", Event: "start", Task: "S1-01/T1\nIdeate-Exec: forged"},
		"story malformed":     {Phase: "red", Event: "start", Story: "story one"},
		"actor control":       {Phase: "red", Event: "start", Actor: "a\x1bb"},
		"reason class spaces": {Phase: "red", Event: "start", Reasons: []execlog.Reason{{Class: "out of scope"}}},
		"reason path NUL":     {Phase: "red", Event: "start", Reasons: []execlog.Reason{{Class: "x", Paths: []string{"a\x00b"}}}},
		"test without id":     {Phase: "red", Event: "start", Tests: []execlog.TestResult{{Outcome: "PASS"}}},
		"test bad outcome":    {Phase: "red", Event: "start", Tests: []execlog.TestResult{{ID: "a::B", Outcome: "pass"}}},
		"empty path":          {Phase: "red", Event: "start", Paths: []string{""}},
		"too large":           {Phase: "red", Event: "start", Detail: big},
	} {
		_, err := fx.log.Append(t.Context(), e)
		want := apperr.Schema
		if name == "unknown commit" {
			want = apperr.NotFound
		}
		if !apperr.Is(err, want) {
			t.Errorf("%s: err = %v, want %s", name, err, want)
		}
	}
	if out, _ := gt.GitErr(fx.dir, "rev-parse", "--verify", "-q", execlog.Ref); out != "" {
		t.Fatalf("a refused entry was written: %s", out)
	}
	// The initial commit's objects only: the empty tree and the commit.
	if out := gt.Git(t, fx.dir, "count-objects"); !strings.HasPrefix(out, "2 objects") {
		t.Fatalf("a refused entry left objects: %s", out)
	}
	gt.Fsck(t, fx.dir)
}

func TestLog_Append_SecretsRedactedBeforeAnyObject(t *testing.T) {
	fx := newFixture(t)
	secret := "ghp_Zq7abcdKx9Tw3Lm8Pv2Rb6Nc4Hd1Fg5Js0Yt"
	e, err := fx.log.Append(t.Context(), execlog.Entry{Actor: "bot " + secret, Task: "S1-01/T1", Phase: "green", Event: "complete",
		Detail: "token " + secret, Paths: []string{secret},
		Reasons: []execlog.Reason{{Class: "x", Detail: secret, Paths: []string{"p/" + secret}}},
		Tests:   []execlog.TestResult{{ID: "a::" + secret, Outcome: "PASS", Detail: secret}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(e), secret) {
		t.Fatalf("the returned entry holds the secret: %+v", e)
	}
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = fx.dir
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(all), "Zq7abcdKx9Tw3Lm8Pv2Rb6Nc4Hd1Fg5Js0Yt") {
		t.Fatal("an object holds the secret")
	}
}

func TestLog_NewerFormatIsRefused(t *testing.T) {
	fx := newFixture(t)
	if _, err := fx.log.Append(t.Context(), execlog.Entry{Phase: "red", Event: "start"}); err != nil {
		t.Fatal(err)
	}
	// A newer writer's tree: same layout, format 2.
	blob := strings.TrimSpace(gt.GitStdin(t, fx.dir, "ideate-exec 2\n", "hash-object", "-w", "--stdin"))
	tip := gt.Git(t, fx.dir, "rev-parse", execlog.Ref)
	ls := gt.Git(t, fx.dir, "ls-tree", tip)
	var lines []string
	for _, l := range strings.Split(ls, "\n") {
		if strings.HasSuffix(l, "\t"+execlog.FormatFile) {
			l = "100644 blob " + blob + "\t" + execlog.FormatFile
		}
		lines = append(lines, l)
	}
	tree := strings.TrimSpace(gt.GitStdin(t, fx.dir, strings.Join(lines, "\n")+"\n", "mktree"))
	c := gt.Git(t, fx.dir, "commit-tree", tree, "-p", tip, "-m", "newer")
	gt.Git(t, fx.dir, "update-ref", execlog.Ref, c, tip)
	if _, err := fx.log.List(t.Context(), execlog.Filter{}); !apperr.Is(err, apperr.FormatVersion) {
		t.Fatalf("List on a newer format: %v", err)
	}
	if _, err := fx.log.Append(t.Context(), execlog.Entry{Phase: "red", Event: "start"}); !apperr.Is(err, apperr.FormatVersion) {
		t.Fatalf("Append on a newer format: %v", err)
	}
	if got := gt.Git(t, fx.dir, "rev-parse", execlog.Ref); got != c {
		t.Fatal("Append wrote over a newer format")
	}
}

// The playbook's gate-ledger-format check, verbatim, with budget|replan.
var ledgerRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T.* wave-\d+ (red|green|scaffold|review|gate|budget|replan) `)

func TestLine(t *testing.T) {
	c := strings.Repeat("0123456789", 4)
	for _, tc := range []struct {
		e    execlog.Entry
		want string
	}{
		{execlog.Entry{At: "2026-11-30T10:00:04.123Z", Wave: 1, Story: "S1-01", Task: "S1-01/T1", Attempt: 1, Phase: "red", Event: "start"},
			"2026-11-30T10:00:04Z wave-1 red S1-01 start task=T1 attempt=1"},
		{execlog.Entry{At: "2026-11-30T10:30:55.000Z", Wave: 1, Story: "S1-01", Task: "S1-01/T1", Attempt: 2, Phase: "green", Event: "verdict",
			Result: "FAIL", Commit: c, Reasons: []execlog.Reason{{Class: "out_of_scope"}, {Class: "suppression"}, {Class: "out_of_scope"}}},
			"2026-11-30T10:30:55Z wave-1 green S1-01 verdict task=T1 attempt=2 result=FAIL class=out_of_scope,suppression commit=012345678901"},
		{execlog.Entry{At: "2026-11-30T11:00:00.000Z", Story: "S1-02", Task: "S1-02/T1", Attempt: 1, Phase: "final", Event: "verdict", Result: "PASS"},
			"2026-11-30T11:00:00Z wave-0 gate S1-02 verdict phase=final task=T1 attempt=1 result=PASS"},
		{execlog.Entry{At: "2026-11-30T11:00:00.000Z", Wave: 3, Phase: "escalate", Event: "halt", Task: "misc"},
			"2026-11-30T11:00:00Z wave-3 gate - halt phase=escalate task=misc"},
	} {
		got := execlog.Line(tc.e)
		if got != tc.want {
			t.Errorf("Line:\n got %s\nwant %s", got, tc.want)
		}
		if !ledgerRe.MatchString(got) {
			t.Errorf("%s fails gate-ledger-format", got)
		}
	}
}

func startWriter(t *testing.T, dir, role, tag, commit string, n int) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, proctest.Spec{Role: role, Env: []string{"EXEC_TEST_DIR=" + dir,
		"EXEC_TEST_N=" + strconv.Itoa(n), "EXEC_TEST_TAG=" + tag, "EXEC_TEST_COMMIT=" + commit}})
}

// details returns detail → count over every entry, and checks there is one
// commit per entry.
func details(t *testing.T, dir string) map[string]int {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	all, err := execlog.Open(g).List(context.Background(), execlog.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for i, e := range all {
		out[e.Detail]++
		if i > 0 && all[i-1].ID <= e.ID {
			t.Fatalf("entries out of order: %s before %s", all[i-1].ID, e.ID)
		}
	}
	if n, _ := strconv.Atoi(gt.Git(t, dir, "rev-list", "--count", execlog.Ref)); n != len(all) {
		t.Fatalf("%d commits but %d entries", n, len(all))
	}
	return out
}

// Four processes append 40 verdicts each about one commit: every entry is
// there once, in id order, and the commit's note has every line once.
func TestLog_Append_ConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	dir := gt.NewRepo(t)
	c := gt.Git(t, dir, "rev-parse", "HEAD")
	const procs, each = 4, 40
	bar := proctest.NewBarrier(t)
	var ps []*proctest.Proc
	for p := 0; p < procs; p++ {
		ps = append(ps, proctest.Start(t, proctest.Spec{Role: "count", Barrier: bar, Env: []string{"EXEC_TEST_DIR=" + dir,
			"EXEC_TEST_N=" + strconv.Itoa(each), "EXEC_TEST_TAG=" + fmt.Sprintf("w%d", p), "EXEC_TEST_COMMIT=" + c}}))
	}
	bar.Release(t)
	for _, p := range ps {
		if err := p.WaitErr(); err != nil {
			t.Fatalf("writer failed: %v\n%s", err, p.Stderr())
		}
	}
	got := details(t, dir)
	for p := 0; p < procs; p++ {
		for i := 0; i < each; i++ {
			if n := got[fmt.Sprintf("w%d-%d", p, i)]; n != 1 {
				t.Fatalf("w%d-%d present %d times", p, i, n)
			}
		}
	}
	note := gt.Git(t, dir, "notes", "--ref=ideate", "show", c)
	lines := strings.Split(note, "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Fatalf("note line twice: %s", l)
		}
		seen[l] = true
	}
	if len(lines) != procs*each {
		t.Fatalf("the note has %d lines, want %d", len(lines), procs*each)
	}
	gt.Fsck(t, dir)
}

// A writer killed with SIGKILL at random points: the ref stays intact,
// every entry is whole, fsck stays clean, and the next append works.
func TestLog_Append_SurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop")
	}
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.staleLockMs", "200")
	c := gt.Git(t, dir, "rev-parse", "HEAD")
	first := startWriter(t, dir, "loop", "k-first", c, 0)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := gt.GitErr(dir, "rev-parse", "--verify", "-q", execlog.Ref); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first writer wrote no entry in 30 s")
		}
	}
	first.Kill()
	for round := 0; round < 30; round++ {
		w := startWriter(t, dir, "loop", fmt.Sprintf("k%d", round), c, 0)
		time.Sleep(time.Duration(5+round%7*6) * time.Millisecond)
		w.Kill()
		if _, err := gt.GitErr(dir, "rev-parse", "--verify", "-q", execlog.Ref); err != nil {
			t.Fatalf("round %d: ref broken or missing", round)
		}
	}
	got := details(t, dir)
	for d, n := range got {
		if n != 1 {
			t.Fatalf("%s present %d times", d, n)
		}
	}
	g, _ := gitstore.Open(dir)
	defer g.Close()
	if _, err := execlog.Open(g).Append(t.Context(), execlog.Entry{Phase: "red", Event: "start"}); err != nil {
		t.Fatalf("append after crashes: %v", err)
	}
	// Each note line names an entry that exists (the note comes after the
	// entry, never before).
	ids := map[string]bool{}
	all, _ := execlog.Open(g).List(t.Context(), execlog.Filter{})
	for _, e := range all {
		ids[e.ID] = true
	}
	// No note at all is allowed (every writer was killed between its
	// entry and its note); git then says so on stderr and exits 1.
	note, err := gt.GitErr(dir, "notes", "--ref=ideate", "show", c)
	if err != nil {
		if !strings.Contains(note, "no note found") {
			t.Fatalf("git notes show: %v %s", err, note)
		}
		note = ""
	}
	for _, l := range strings.Split(strings.TrimSpace(note), "\n") {
		if l == "" {
			continue
		}
		i := strings.Index(l, "(exec ")
		if i < 0 || !ids[strings.TrimSuffix(l[i+6:], ")")] {
			t.Fatalf("note line %q names no entry", l)
		}
	}
	t.Logf("%d entries survived", len(all))
	gt.Fsck(t, dir)
}
