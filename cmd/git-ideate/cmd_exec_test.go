package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// gateLedgerFormat is the playbook's gate-ledger-format check (with the
// later budget|replan phases).
var gateLedgerFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T.* wave-\d+ (red|green|scaffold|review|gate|budget|replan) `)

// execFixture is a repository whose log holds five entries over two
// sprints, appended in this order.
func execFixture(t *testing.T) (dir string, ids []string) {
	t.Helper()
	dir = gt.NewRepo(t)
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	defer env.Close()
	l, err := env.Exec()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []execlog.Entry{
		{Sprint: 1, Wave: 1, Task: "S1-01/T1", Attempt: 1, Phase: "red", Event: "start"},
		{Sprint: 1, Wave: 1, Task: "S1-01/T1", Attempt: 1, Phase: "red", Event: "verdict", Result: "PASS", Commit: head},
		{Wave: 1, Task: "S1-01/T1", Attempt: 1, Phase: "green", Event: "verdict", Result: "FAIL", Commit: head,
			Reasons: []execlog.Reason{{Class: "out_of_scope", Paths: []string{"x.go"}}}},
		{Sprint: 1, Wave: 2, Task: "S1-02/T1", Attempt: 1, Phase: "final", Event: "verdict", Result: "UNVERIFIABLE",
			Reasons: []execlog.Reason{{Class: "no_plan_ready"}}},
		{Sprint: 2, Wave: 1, Task: "S2-01/T1", Attempt: 1, Phase: "red", Event: "start"},
	} {
		out, err := l.Append(t.Context(), e)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.ID)
	}
	return dir, ids
}

func TestExecLog_LinesOldestFirstInLedgerFormat(t *testing.T) {
	dir, _ := execFixture(t)
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	r := cli(t, dir, "", "exec", "log")
	if r.code != 0 {
		t.Fatalf("exec log: %d %s", r.code, r.err)
	}
	lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
	want := []string{
		" wave-1 red S1-01 start task=T1 attempt=1",
		" wave-1 red S1-01 verdict task=T1 attempt=1 result=PASS commit=" + head[:12],
		" wave-1 green S1-01 verdict task=T1 attempt=1 result=FAIL class=out_of_scope commit=" + head[:12],
		" wave-2 gate S1-02 verdict phase=final task=T1 attempt=1 result=UNVERIFIABLE class=no_plan_ready",
		" wave-1 red S2-01 start task=T1 attempt=1",
	}
	if len(lines) != len(want) {
		t.Fatalf("exec log printed %d lines:\n%s", len(lines), r.out)
	}
	for i, l := range lines {
		if !gateLedgerFormat.MatchString(l) {
			t.Errorf("line %d fails gate-ledger-format: %s", i+1, l)
		}
		if !strings.HasSuffix(l, want[i]) {
			t.Errorf("line %d:\n got %s\nwant …%s", i+1, l, want[i])
		}
	}
	r = cli(t, dir, "", "exec", "log", "--task", "S1-01/T1", "--phase", "red", "--limit", "1")
	if strings.Count(r.out, "\n") != 1 || !strings.Contains(r.out, "result=PASS") {
		t.Fatalf("exec log --task --phase --limit 1:\n%s", r.out)
	}
	r = cli(t, dir, "", "exec", "log", "--limit", "-1")
	if r.code == 0 || !strings.Contains(r.err, "SCHEMA") {
		t.Fatalf("exec log --limit -1: %d %s", r.code, r.err)
	}
}

func TestExecLog_JSON(t *testing.T) {
	dir, ids := execFixture(t)
	r := cli(t, dir, "", "exec", "log", "--json", "--limit", "2")
	var out struct {
		MessageType string          `json:"message_type"`
		Entries     []execlog.Entry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if out.MessageType != "exec_log" || len(out.Entries) != 2 || out.Entries[0].ID != ids[3] || out.Entries[1].ID != ids[4] {
		t.Fatalf("exec log --json --limit 2: %+v", out)
	}
	empty := gt.NewRepo(t)
	if r := cli(t, empty, "", "exec", "log", "--json"); !strings.Contains(r.out, `"entries": []`) {
		t.Fatalf("an empty log in JSON: %s", r.out)
	}
}

func TestExecExport_WritesTheSprintsLedger(t *testing.T) {
	dir, _ := execFixture(t)
	for _, d := range []string{"docs/agents/sprint1", "docs/agents/sprint2"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Default sprint: the highest (2); one entry.
	r := cli(t, dir, "", "exec", "export")
	if r.code != 0 {
		t.Fatalf("exec export: %d %s", r.code, r.err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "docs/agents/sprint2/execution.log"))
	if err != nil || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), " S2-01 start") {
		t.Fatalf("sprint 2's ledger: %v\n%s", err, b)
	}
	// Sprint 1: four entries (one known only by its story); a stale file
	// is replaced whole.
	path := filepath.Join(dir, "docs/agents/sprint1/execution.log")
	os.WriteFile(path, []byte("stale line\n"), 0o644)
	r = cli(t, dir, "", "exec", "export", "--sprint", "1", "--json")
	if r.code != 0 || !strings.Contains(r.out, `"lines": 4`) {
		t.Fatalf("exec export --sprint 1: %d %s %s", r.code, r.out, r.err)
	}
	b, _ = os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 4 || strings.Contains(string(b), "stale") {
		t.Fatalf("sprint 1's ledger:\n%s", b)
	}
	for _, l := range lines {
		if !gateLedgerFormat.MatchString(l) {
			t.Errorf("fails gate-ledger-format: %s", l)
		}
	}
	// --out anywhere, no plan needed with --sprint.
	out := filepath.Join(t.TempDir(), "x", "ledger.log")
	if r := cli(t, dir, "", "exec", "export", "--sprint", "2", "--out", out); r.code != 0 {
		t.Fatalf("exec export --out: %s", r.err)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "S2-01") {
		t.Fatalf("--out file: %v %s", err, b)
	}
	// No sprint directory and no --sprint: the plan's NOT_FOUND.
	if r := cli(t, gt.NewRepo(t), "", "exec", "export"); r.code == 0 || !strings.Contains(r.err, "NOT_FOUND") {
		t.Fatalf("exec export without a plan: %d %s", r.code, r.err)
	}
	// A temporary file an export killed before its rename left behind is
	// removed by the next export.
	stale := filepath.Join(dir, "docs/agents/sprint1", ".execution.log.tmp-123")
	os.WriteFile(stale, []byte("half"), 0o644) // just now: the next export may follow the kill at once
	mustOK(t, cli(t, dir, "", "exec", "export", "--sprint", "1"))
	entries, _ := os.ReadDir(filepath.Join(dir, "docs/agents/sprint1"))
	for _, e := range entries {
		if e.Name() != "execution.log" {
			t.Errorf("export left %s behind", e.Name())
		}
	}
}

// git ideate gate final through the composition root: FAIL (exit 3) while
// the task's boxes are open, PASS (exit 0) once the ticks that a stored
// GREEN PASS allows are made; each verdict lands on the execution log with
// its task and on the judged commit's note.
func TestGateFinal_CLI_StoresItsVerdict(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	goEnv := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := gt.NewRepo(t)
	t.Setenv("GOCACHE", goEnv[0]) // NewRepo's empty HOME would make go vet build from nothing
	t.Setenv("GOMODCACHE", goEnv[1])
	t.Setenv("GOTOOLCHAIN", "local")
	files := map[string]string{
		"go.mod":                           "module example.com/m\n\ngo 1.21\n",
		"strutil/reverse.go":               "package strutil\n\n// Reverse returns s.\nfunc Reverse(s string) string { return s }\n",
		"docs/agents/sprint1/standards.md": "---\ntype: standards\nsprint: 1\n---\n\n# Standards\n\n## Gate matrix\n\n```sh\ngo vet ./...\n```\n",
		"docs/agents/sprint1/s1-01-reverse/plan-ready.md": "---\ntype: plan-ready\nstory: S1-01\n---\n\n# S1-01 plan-ready\n\n" +
			"## T1 — Reverse\n- [ ] `strutil/reverse_test.go::TestReverse_ASCII` — FAIL: shim\n",
		"docs/agents/sprint1/s1-01-reverse/tasks.md": "---\ntype: tasks\nstory: S1-01\n---\n\n# S1-01 tasks\n\n## T1 — Reverse\n\nFiles: `strutil/**`\nDepends on: none\n",
	}
	for p, data := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	mustOK(t, cli(t, dir, "", "task", "start", "S1-01/T1", "--test", "strutil/reverse_test.go::TestReverse_ASCII", "--scope", "strutil/**"))
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	head := gt.Git(t, wt, "rev-parse", "HEAD")

	r := cli(t, dir, "", "gate", "final", "--task", "S1-01/T1")
	if r.code != 3 || !strings.Contains(r.out, "no_green") || !strings.Contains(r.out, "unticked") {
		t.Fatalf("final before GREEN: exit %d\n%s%s", r.code, r.out, r.err)
	}
	// A GREEN PASS at the worktree's HEAD, then the ticks it allows.
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	defer env.Close()
	x, err := env.Exec()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Append(t.Context(), execlog.Entry{Task: "S1-01/T1", Attempt: 1, Phase: "green", Event: "verdict", Result: "PASS", Commit: head,
		Tests: []execlog.TestResult{{ID: "strutil/reverse_test.go::TestReverse_ASCII", Outcome: "PASS"}}}); err != nil {
		t.Fatal(err)
	}
	reg, _, err := gatesFor(env, planFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Tick(t.Context(), "S1-01/T1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "docs/agents/sprint1/s1-01-reverse/plan-ready.md")); !strings.Contains(string(b), "- [x] `strutil/reverse_test.go::TestReverse_ASCII`") {
		t.Fatalf("not ticked:\n%s", b)
	}
	r = cli(t, dir, "", "gate", "final", "--task", "S1-01/T1")
	if r.code != 0 {
		t.Fatalf("final after the ticks: exit %d\n%s%s", r.code, r.out, r.err)
	}
	log := mustOK(t, cli(t, dir, "", "exec", "log", "--task", "S1-01/T1", "--phase", "final")).out
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "gate S1-01 verdict phase=final task=T1 attempt=1 result=FAIL class=no_green,unticked commit="+head[:12]) ||
		!strings.HasSuffix(lines[1], "gate S1-01 verdict phase=final task=T1 attempt=1 result=PASS commit="+head[:12]) {
		t.Fatalf("exec log of the final verdicts:\n%s", log)
	}
	note := gt.Git(t, dir, "notes", "--ref=ideate", "show", head)
	if !strings.Contains(note, "ideate: final FAIL S1-01/T1 attempt 1") || !strings.Contains(note, "ideate: final PASS S1-01/T1 attempt 1") {
		t.Fatalf("the judged commit's note:\n%s", note)
	}
	gt.Fsck(t, dir)
}

// exec export killed with SIGKILL at any moment, through the built binary,
// leaves no temporary file behind once the next export has run, even one
// that follows the kill at once.
func TestExecExport_KilledLeavesNoTemporaryFile(t *testing.T) {
	dir, _ := execFixture(t)
	sprint := filepath.Join(dir, "docs", "agents", "sprint1")
	os.MkdirAll(sprint, 0o755)
	for i := 0; i < 20; i++ {
		cmd := exec.Command(binPath, "exec", "export", "--sprint", "1")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%10) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	mustOK(t, bin(t, dir, "", "exec", "export", "--sprint", "1"))
	entries, _ := os.ReadDir(sprint)
	if len(entries) != 1 || entries[0].Name() != "execution.log" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the sprint directory after killed exports and one more: %v", names)
	}
}
