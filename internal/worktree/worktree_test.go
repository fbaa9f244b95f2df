package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/testrun"
	"github.com/ideate/git-ideate/internal/worktree"
)

var ctx = context.Background()

func newRepo(t *testing.T, files map[string]string) (string, *worktree.Manager) {
	t.Helper()
	dir := gt.NewRepo(t)
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return dir, worktree.Open(g)
}

func start(t *testing.T, m *worktree.Manager, in worktree.StartInput) *worktree.Task {
	t.Helper()
	task, err := m.Start(ctx, in)
	if err != nil {
		t.Fatalf("Start(%s): %v", in.Task, err)
	}
	return task
}

func TestManager_Start_CreatesWorktreeAtBaseWithContract(t *testing.T) {
	dir, m := newRepo(t, map[string]string{"pkg/a.go": "package pkg\n", "README": "r"})
	base := gt.Git(t, dir, "rev-parse", "HEAD")
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "later") // main moves on
	task := start(t, m, worktree.StartInput{Task: "S1-01/T2", Attempt: 1, Role: "red-worker", Base: base,
		Scope: []string{"pkg/**"}, Tests: []string{"pkg::TestA"}, Item: "01ITEM", Holder: "alice (w/1)", Token: 3})
	if task.Path != filepath.Join(dir, ".ideate", "worktrees", "S1-01+T2") {
		t.Errorf("path %s", task.Path)
	}
	if got := gt.Git(t, task.Path, "rev-parse", "HEAD"); got != base {
		t.Errorf("worktree HEAD %s, want base %s", got, base)
	}
	if got := gt.Git(t, task.Path, "symbolic-ref", "HEAD"); got != "refs/heads/ideate/task/S1-01+T2" {
		t.Errorf("worktree branch %s", got)
	}
	if st := gt.Git(t, task.Path, "status", "--porcelain"); st != "" {
		t.Errorf("a fresh worktree is dirty:\n%s", st)
	}
	if st := gt.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the main working tree shows the worktree root:\n%s", st)
	}
	// gitstore reads the linked worktree through its common directory
	// (the part go-git gets right only with EnableDotGitCommonDir).
	r, err := gitstore.Discover(task.Path)
	if err != nil || r.GitDir == r.CommonDir || filepath.Dir(r.CommonDir) != dir {
		t.Fatalf("Discover(worktree) = %+v %v", r, err)
	}
	wg := gitstore.OpenRepo(r, gitstore.Options{})
	if h, err := wg.Head(); err != nil || h.String() != base {
		t.Errorf("HEAD through the worktree = %v %v, want %s", h, err, base)
	}
	wg.Close()
	// The gates' copy: the ref.
	c, err := m.Contract("S1-01/T2")
	if err != nil {
		t.Fatal(err)
	}
	if c.Base != base || c.Attempt != 1 || c.Role != "red-worker" || c.Token != 3 || c.Status != worktree.StatusOpen ||
		strings.Join(c.Scope, ",") != "pkg/**" || strings.Join(c.Tests, ",") != "pkg::TestA" {
		t.Errorf("contract %+v", c)
	}
	if out := gt.Git(t, dir, "log", "--format=%s", worktree.RefName("S1-01/T2")); out != "task S1-01/T2: start attempt 1 (red-worker)" {
		t.Errorf("task ref log %q", out)
	}
	// The worker's copy: read-only, and changing it changes nothing.
	gd := gt.Git(t, task.Path, "rev-parse", "--absolute-git-dir")
	fi, err := os.Stat(filepath.Join(gd, worktree.CopyFile))
	if err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("contract copy %v %v, want read-only", fi, err)
	}
	cp, err := worktree.ReadCopy(task.Path)
	if err != nil || cp.Base != base || cp.Task != "S1-01/T2" {
		t.Fatalf("copy %+v %v", cp, err)
	}
	os.Chmod(filepath.Join(gd, worktree.CopyFile), 0o644)
	os.WriteFile(filepath.Join(gd, worktree.CopyFile), []byte(`{"task":"S1-01/T2","scope":["**"]}`), 0o644)
	if c, _ := m.Contract("S1-01/T2"); strings.Join(c.Scope, ",") != "pkg/**" {
		t.Errorf("editing the copy changed the contract: %v", c.Scope)
	}
	gt.Fsck(t, dir)
}

// A start runs git for the worktree alone (list, add, checkout): the
// HEAD it reports is read with the repository's configuration, already
// read, not with a `git config` of the new worktree.
func TestManager_Start_RunsNoGitConfig(t *testing.T) {
	dir, m := newRepo(t, map[string]string{"a.go": "package a\n"})
	traces := t.TempDir()
	t.Setenv("GIT_TRACE2_PERF", traces+"/")
	task := start(t, m, worktree.StartInput{Task: "S1-01/T1"})
	os.Unsetenv("GIT_TRACE2_PERF")
	if want := gt.Git(t, dir, "rev-parse", "HEAD"); task.Head != want {
		t.Errorf("Head %s, want %s", task.Head, want)
	}
	files, _ := os.ReadDir(traces)
	if len(files) == 0 {
		t.Fatal("no git process traced")
	}
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(traces, f.Name()))
		if strings.Contains(string(b), " config --list") {
			t.Errorf("task start ran git config:\n%s", b)
		}
	}
}

func TestManager_Start_ReuseTakeoverAndRefusals(t *testing.T) {
	_, m := newRepo(t, map[string]string{"a.txt": "a"})
	in := worktree.StartInput{Task: "T1", Role: "red-worker", Holder: "alice", Token: 1, Item: "I1", Scope: []string{"a.txt"}, Tests: []string{"x::T"}}
	first := start(t, m, in)
	in.Scope, in.Tests = nil, nil // a restart that does not restate them keeps them
	if first.Reused {
		t.Error("a first start reports reuse")
	}
	if err := os.WriteFile(filepath.Join(first.Path, "wip.txt"), []byte("work in progress"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Same holder, same token: the same worktree, untouched, next attempt.
	in.Attempt, in.Role = 2, "green-worker"
	again := start(t, m, in)
	if !again.Reused || again.Path != first.Path || again.Attempt != 2 || again.Role != "green-worker" ||
		strings.Join(again.Scope, ",") != "a.txt" || strings.Join(again.Tests, ",") != "x::T" {
		t.Errorf("restart %+v", again)
	}
	if b, err := os.ReadFile(filepath.Join(first.Path, "wip.txt")); err != nil || string(b) != "work in progress" {
		t.Errorf("a restart touched the worktree: %q %v", b, err)
	}
	// Another holder under the same token: refused.
	if _, err := m.Start(ctx, worktree.StartInput{Task: "T1", Holder: "bob", Token: 1}); !apperr.Is(err, worktree.Taken) {
		t.Errorf("bob with token 1: %v, want TASK_TAKEN", err)
	}
	// An older token: refused.
	if _, err := m.Start(ctx, worktree.StartInput{Task: "T1", Holder: "bob", Token: 0}); !apperr.Is(err, worktree.StaleToken) {
		t.Errorf("bob with token 0: %v, want STALE_TOKEN", err)
	}
	// A newer claim takes it over, work included.
	bob := start(t, m, worktree.StartInput{Task: "T1", Holder: "bob", Token: 2})
	if !bob.Reused || bob.Holder != "bob" || !strings.Contains(bob.Note, "alice") {
		t.Errorf("takeover %+v", bob)
	}
	// A stale holder cannot close it.
	if _, err := m.Close(ctx, worktree.CloseInput{Task: "T1", Status: worktree.StatusAbandoned, Token: 1}); !apperr.Is(err, worktree.StaleToken) {
		t.Errorf("close with token 1: %v, want STALE_TOKEN", err)
	}
	// Another base while open: refused.
	if _, err := m.Start(ctx, worktree.StartInput{Task: "T1", Holder: "bob", Token: 2, Base: "main"}); err != nil {
		t.Errorf("the same base named again: %v", err)
	}
}

func TestManager_Start_RefusesBadInput(t *testing.T) {
	_, m := newRepo(t, map[string]string{"a": "a"})
	for _, in := range []worktree.StartInput{
		{Task: ""}, {Task: "a+b"}, {Task: "../x"}, {Task: "a/b/c/d/e"}, {Task: "x.lock"}, {Task: "-x"},
		{Task: "T", Attempt: 100}, {Task: "T", Role: "Red Worker"}, {Task: "T", Scope: []string{"../up"}},
		{Task: "T", Tests: []string{"a", "a"}}, {Task: "T", Tests: []string{"two\nlines"}}, {Task: "T", Token: -1},
	} {
		if _, err := m.Start(ctx, in); !apperr.Is(err, apperr.Schema) {
			t.Errorf("Start(%+v) = %v, want SCHEMA", in, err)
		}
	}
	refs, _ := os.ReadDir(filepath.Join(m.Root))
	if len(refs) != 0 {
		t.Errorf("refused starts left %d worktrees", len(refs))
	}
}

func TestManager_Close_CompletionKeepsBranchAndRefusesDirty(t *testing.T) {
	dir, m := newRepo(t, map[string]string{"a.txt": "a"})
	task := start(t, m, worktree.StartInput{Task: "T1", Holder: "h", Token: 1})
	os.WriteFile(filepath.Join(task.Path, "new.txt"), []byte("new"), 0o644)
	if _, err := m.Close(ctx, worktree.CloseInput{Task: "T1", Status: worktree.StatusCompleted}); !apperr.Is(err, worktree.Dirty) {
		t.Fatalf("completing a dirty worktree: %v, want DIRTY_WORKTREE", err)
	}
	gt.Git(t, task.Path, "add", "-A")
	gt.Git(t, task.Path, "commit", "-q", "-m", "done")
	tip := gt.Git(t, task.Path, "rev-parse", "HEAD")
	closed, err := m.Close(ctx, worktree.CloseInput{Task: "T1", Status: worktree.StatusCompleted, Note: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if closed.Status != worktree.StatusCompleted || closed.Worktree != "removed" {
		t.Errorf("closed %+v", closed)
	}
	if _, err := os.Stat(task.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("worktree directory still there: %v", err)
	}
	if strings.Contains(gt.Git(t, dir, "worktree", "list"), "T1") {
		t.Error("git still lists the worktree")
	}
	if got := gt.Git(t, dir, "rev-parse", "refs/heads/ideate/task/T1"); got != tip {
		t.Errorf("branch at %s, want the completed work %s", got, tip)
	}
	list, err := m.List(ctx, false, nil)
	if err != nil || len(list) != 0 {
		t.Errorf("open tasks after completion: %+v %v", list, err)
	}
	all, _ := m.List(ctx, true, nil)
	if len(all) != 1 || all[0].Worktree != "removed" {
		t.Errorf("all tasks: %+v", all)
	}
	// Started again (reopened), it continues the branch from the same base.
	again := start(t, m, worktree.StartInput{Task: "T1", Holder: "h2", Token: 5})
	if got := gt.Git(t, again.Path, "rev-parse", "HEAD"); got != tip || again.Base != closed.Base {
		t.Errorf("restart after completion at %s base %s, want %s base %s", got, again.Base, tip, closed.Base)
	}
	gt.Fsck(t, dir)
}

func TestManager_Close_AbandonDiscards(t *testing.T) {
	_, m := newRepo(t, map[string]string{"a.txt": "a"})
	task := start(t, m, worktree.StartInput{Task: "T1"})
	os.WriteFile(filepath.Join(task.Path, "a.txt"), []byte("scratch"), 0o644)
	if _, err := m.Close(ctx, worktree.CloseInput{Task: "T1", Status: worktree.StatusAbandoned, Note: "gave up"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(task.Path); !errors.Is(err, os.ErrNotExist) {
		t.Error("abandoned worktree still there")
	}
	c, _ := m.Contract("T1")
	if c.Status != worktree.StatusAbandoned || c.Note != "gave up" {
		t.Errorf("contract %+v", c)
	}
	if _, err := m.Close(ctx, worktree.CloseInput{Task: "T1", Status: worktree.StatusAbandoned}); err != nil {
		t.Errorf("closing twice: %v", err)
	}
	if _, err := m.Close(ctx, worktree.CloseInput{Task: "nope", Status: worktree.StatusAbandoned}); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("closing an unknown task: %v", err)
	}
}

// What a crash or a user leaves — the directory deleted, a worktree git
// left locked "initializing", an empty directory, a worktree never checked
// out — is seen by List and repaired by the next Start.
func TestManager_Start_RepairsLeftovers(t *testing.T) {
	dir, m := newRepo(t, map[string]string{"a.txt": "a", "d/b.txt": "b"})
	task := start(t, m, worktree.StartInput{Task: "T1", Holder: "h", Token: 1})

	os.RemoveAll(task.Path)
	if l, _ := m.List(ctx, false, nil); len(l) != 1 || l[0].Worktree != "missing" {
		t.Errorf("after rm -rf: %+v", l)
	}
	again := start(t, m, worktree.StartInput{Task: "T1", Holder: "h", Token: 1})
	if _, err := os.Stat(filepath.Join(again.Path, "d", "b.txt")); err != nil {
		t.Errorf("not recreated: %v", err)
	}

	// git left it locked "initializing" and unchecked-out (a killed add).
	gt.Git(t, dir, "worktree", "remove", "--force", again.Path)
	gt.Git(t, dir, "worktree", "add", "-q", "--no-checkout", "--lock", "--reason", "initializing", again.Path, "ideate/task/T1")
	if l, _ := m.List(ctx, false, nil); len(l) != 1 || l[0].Worktree != "locked" {
		t.Errorf("after a killed add: %+v", l)
	}
	if out, _ := gt.GitErr(dir, "worktree", "prune"); out != "" {
		t.Logf("prune: %s", out)
	}
	start(t, m, worktree.StartInput{Task: "T1", Holder: "h", Token: 1})
	if st := gt.Git(t, again.Path, "status", "--porcelain"); st != "" {
		t.Errorf("repaired worktree is not whole:\n%s", st)
	}
	if strings.Contains(gt.Git(t, dir, "worktree", "list", "--porcelain"), "locked") {
		t.Error("still locked after repair")
	}

	// An empty directory where no worktree is registered (an add killed
	// before its administrative files), for a task never started.
	empty := m.Path("T2")
	os.MkdirAll(empty, 0o755)
	start(t, m, worktree.StartInput{Task: "T2"})
	// A non-empty stranger is not deleted.
	os.MkdirAll(m.Path("T3"), 0o755)
	os.WriteFile(filepath.Join(m.Path("T3"), "mine.txt"), []byte("x"), 0o644)
	if _, err := m.Start(ctx, worktree.StartInput{Task: "T3"}); !apperr.Is(err, worktree.Blocked) {
		t.Errorf("a foreign directory: %v, want WORKTREE_BLOCKED", err)
	}
	// A worktree registered but without a contract (killed after the add,
	// before the contract): completed and adopted.
	gt.Git(t, dir, "worktree", "add", "-q", "--no-checkout", "-b", "ideate/task/T4", m.Path("T4"))
	t4 := start(t, m, worktree.StartInput{Task: "T4"})
	if st := gt.Git(t, t4.Path, "status", "--porcelain"); st != "" {
		t.Errorf("adopted worktree not checked out:\n%s", st)
	}
	gt.Fsck(t, dir)
}

type fakeClaims map[string]int64

func (f fakeClaims) ClaimHeld(item string, token int64) (bool, string, error) {
	if f[item] == token {
		return true, "", nil
	}
	return false, fmt.Sprintf("claim token is now %d", f[item]), nil
}

func TestManager_List_NoticesLostClaims(t *testing.T) {
	_, m := newRepo(t, map[string]string{"a": "a"})
	start(t, m, worktree.StartInput{Task: "A", Item: "I1", Holder: "x", Token: 1})
	start(t, m, worktree.StartInput{Task: "B", Item: "I2", Holder: "y", Token: 4})
	list, err := m.List(ctx, false, fakeClaims{"I1": 1, "I2": 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Claim != "held" || list[1].Claim != "lost" || !strings.Contains(list[1].ClaimNote, "5") {
		t.Errorf("claims: %+v", list)
	}
}

func TestManager_Scope_NamesOffendingPaths(t *testing.T) {
	_, m := newRepo(t, map[string]string{"pkg/a.go": "a", "pkg/gen/g.go": "g", "cmd/main.go": "m"})
	task := start(t, m, worktree.StartInput{Task: "T1", Scope: []string{"pkg/**", "!pkg/gen/**"}})
	os.WriteFile(filepath.Join(task.Path, "pkg/a.go"), []byte("a2"), 0o644)
	os.WriteFile(filepath.Join(task.Path, "pkg/gen/g.go"), []byte("g2"), 0o644)
	os.Rename(filepath.Join(task.Path, "cmd/main.go"), filepath.Join(task.Path, "pkg/main.go"))
	gt.Git(t, task.Path, "add", "-A")
	gt.Git(t, task.Path, "commit", "-q", "-m", "part")
	os.WriteFile(filepath.Join(task.Path, "stray.txt"), []byte("s"), 0o644)
	rep, err := m.Scope(ctx, "T1")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Outside, ","); got != "cmd/main.go,pkg/gen/g.go,stray.txt" {
		t.Errorf("outside = %s (changed %v)", got, rep.Changed)
	}
	if rep.InScope() {
		t.Error("InScope with offending paths")
	}
	none := start(t, m, worktree.StartInput{Task: "T2"})
	_ = none
	rep, err = m.Scope(ctx, "T2")
	if err != nil || rep.Declared || rep.InScope() {
		t.Errorf("no scope declared: %+v %v", rep, err)
	}
}

func TestManager_Runs_BaselinesRoundTrip(t *testing.T) {
	dir, m := newRepo(t, map[string]string{"a": "a"})
	task := start(t, m, worktree.StartInput{Task: "S1/T1", Tests: []string{"p::TestA"}})
	base, _ := gitstore.ParseHash(task.Base)
	secret := "ghp_" + strings.Repeat("a1B2c3D4e5", 4)
	baseRep := &testrun.Report{Format: testrun.Format("go-json"), Verdict: testrun.Verdict("OK"), Tests: []testrun.Result{
		{ID: "p::TestA", Outcome: testrun.Outcome("BUILD_FAIL"), Reason: "undefined: A"},
	}}
	if _, err := m.PutRun(ctx, "S1/T1", 0, base, "base", baseRep); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(task.Path, "a_test.go"), []byte("package p"), 0o644)
	gt.Git(t, task.Path, "add", "-A")
	gt.Git(t, task.Path, "commit", "-q", "-m", "red")
	red, _ := gitstore.ParseHash(gt.Git(t, task.Path, "rev-parse", "HEAD"))
	redRep := &testrun.Report{Verdict: testrun.Verdict("OK"), Tests: []testrun.Result{
		{ID: "p::TestA", Outcome: testrun.Outcome("FAIL_ASSERT"), Reason: "token " + secret + " mismatch"},
	}}
	if _, err := m.PutRun(ctx, "S1/T1", 1, red, "red", redRep); err != nil {
		t.Fatal(err)
	}
	got, ok, err := m.GetRun("S1/T1", 1, red)
	if err != nil || !ok || got.Label != "red" || got.Report.Tests[0].Outcome != "FAIL_ASSERT" {
		t.Fatalf("GetRun = %+v %v %v", got, ok, err)
	}
	if strings.Contains(got.Report.Tests[0].Reason, secret) {
		t.Error("a secret in a run's reason was stored")
	}
	if out := gt.Git(t, dir, "log", "-p", worktree.RefName("S1/T1")); strings.Contains(out, secret) {
		t.Error("the secret reached the task ref")
	}
	if _, ok, _ := m.GetRun("S1/T1", 2, red); ok {
		t.Error("a run of another attempt was found")
	}
	b, ok, err := m.BaseRun("S1/T1")
	if err != nil || !ok || b.Label != "base" || b.Commit != task.Base {
		t.Errorf("BaseRun = %+v %v %v", b, ok, err)
	}
	runs, _ := m.Runs("S1/T1")
	if len(runs) != 2 {
		t.Errorf("Runs = %d", len(runs))
	}
	if _, err := m.PutRun(ctx, "S1/T9", 1, red, "red", redRep); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("a run for an unstarted task: %v", err)
	}
	gt.Fsck(t, dir)
}

// TestManager_Start_ClaimDecidedBeforeTheWorktreeIsMade: a start's claim
// (through a remote, a push) is decided before anything is made. A claim
// that fails leaves no worktree, branch, contract or git administrative
// directory, and the next start is a fresh one; one that wins gives the
// contract its token.
func TestManager_Start_ClaimDecidedBeforeTheWorktreeIsMade(t *testing.T) {
	dir, m := newRepo(t, map[string]string{"a.go": "package a\n"})
	path := m.Path("S1-01/T1")
	lost := apperr.New(apperr.Conflict, "item 01ITEM is in_progress, held by bob")
	_, err := m.Start(ctx, worktree.StartInput{Task: "S1-01/T1", Item: "01ITEM", Holder: "alice",
		Claim: func(context.Context) (int64, error) {
			// A push takes a while: nothing may be made meanwhile.
			time.Sleep(time.Second)
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				return 0, fmt.Errorf("the worktree was made while the claim was undecided (%v)", err)
			}
			if out := gt.Git(t, dir, "branch", "--list", "ideate/task/*"); out != "" {
				return 0, fmt.Errorf("the branch was made while the claim was undecided: %s", out)
			}
			return 0, lost
		}})
	if err != lost {
		t.Fatalf("Start with a lost claim: %v, want the claim's error", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lost start left its worktree %s (%v)", path, err)
	}
	if out := gt.Git(t, dir, "branch", "--list", "ideate/task/*"); out != "" {
		t.Errorf("the lost start left a branch: %s", out)
	}
	if out := gt.Git(t, dir, "for-each-ref", worktree.RefPrefix); out != "" {
		t.Errorf("the lost start left a contract: %s", out)
	}
	if out := gt.Git(t, dir, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("git still lists the lost start's worktree:\n%s", out)
	}
	task := start(t, m, worktree.StartInput{Task: "S1-01/T1", Item: "01ITEM", Holder: "alice",
		Claim: func(context.Context) (int64, error) { return 7, nil }})
	if task.Token != 7 || task.Reused {
		t.Fatalf("start with a won claim: token %d reused %v, want token 7 in a new worktree", task.Token, task.Reused)
	}
	if c, err := m.Contract("S1-01/T1"); err != nil || c.Token != 7 || c.Holder != "alice" {
		t.Fatalf("contract after the won claim: %+v %v", c, err)
	}
}
