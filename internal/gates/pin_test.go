package gates_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
)

// A queue in package strutil: S1-01/T1 declares its Push, Peek and Len;
// S1-02/T1 (wave 2, after S1-01) is the later task.
const (
	queueShim = "package strutil\n\n// agentic:shim\ntype Queue struct{ items []int }\n\nfunc (q *Queue) Push(v int) {}\n\nfunc (q *Queue) Peek() int { return -1 }\n\nfunc (q *Queue) Len() int { return -1 }\n"
	queueImpl = "package strutil\n\n// Queue is a FIFO of ints.\ntype Queue struct{ items []int }\n\n// Push appends v.\nfunc (q *Queue) Push(v int) { q.items = append(q.items, v) }\n\n// Peek is the first item, 0 when empty.\nfunc (q *Queue) Peek() int {\n\tif len(q.items) == 0 {\n\t\treturn 0\n\t}\n\treturn q.items[0]\n}\n\n// Len is the number of items.\nfunc (q *Queue) Len() int { return len(q.items) }\n"
	// queueTest pins Push and Peek; Len only ever meets an empty queue,
	// so a Len that returns 0 passes it.
	queueTest    = "package strutil\n\nimport \"testing\"\n\nfunc TestQueue_Empty(t *testing.T) {\n\tvar q Queue\n\tif q.Len() != 0 {\n\t\tt.Fatal(\"empty queue has items\")\n\t}\n}\n\nfunc TestQueue_Push(t *testing.T) {\n\tvar q Queue\n\tq.Push(3)\n\tif q.Peek() != 3 {\n\t\tt.Fatal(\"Peek after Push(3)\")\n\t}\n}\n"
	queueLenTest = "package strutil\n\nimport \"testing\"\n\nfunc TestQueue_LenCounts(t *testing.T) {\n\tvar q Queue\n\tq.Push(1)\n\tq.Push(2)\n\tif q.Len() != 2 {\n\t\tt.Fatalf(\"Len = %d, want 2\", q.Len())\n\t}\n}\n"
	queueEmpty   = "strutil/queue_test.go::TestQueue_Empty"
	queuePush    = "strutil/queue_test.go::TestQueue_Push"
	queueLen     = "strutil/queuelen_test.go::TestQueue_LenCounts"
)

func queueTasks(laterUsesLen bool) string {
	uses := ""
	if laterUsesLen {
		uses = "Uses: `strutil.Queue.Len` (S1-01/T1)\n"
	}
	return "# S1-01 tasks\n\n## T1 — Queue\n\nFiles: `strutil/queue.go`, `strutil/queue_test.go`\nSymbols: `strutil.Queue.Push`, `strutil.Queue.Peek`, `strutil.Queue.Len`\nDepends on: none\n" +
		"\n## T2 — Truncate\n\nFiles: `strutil/truncate.go`\nSymbols: `strutil.Truncate`\nDepends on: none\n" +
		"\n@@S1-02@@" + uses
}

// newQueueFixture is the example sprint with S1-01/T1 declaring the
// queue's symbols; S1-02/T1 names Len in its Uses: line when laterUses.
func newQueueFixture(t testing.TB, laterUses bool) *fixture {
	t.Helper()
	needGo(t)
	userGoCache(t)
	tasks := strings.SplitN(queueTasks(laterUses), "\n@@S1-02@@", 2)
	later := "# S1-02 tasks\n\n## T1 — Queue length\n\nFiles: `strutil/queuelen_test.go`\nSymbols: `strutil.Slugify`\n" + tasks[1] + "Depends on: S1-01/T1\n"
	return newFixture(t, goRunner, map[string]string{
		"go.mod":                           goBase["go.mod"],
		"strutil/upper.go":                 goBase["strutil/upper.go"],
		"docs/agents/sprint1/standards.md": "---\ntype: standards\nsprint: 1\n---\n\n# Standards\n\n## Gate matrix\n\n```sh\ntrue\n```\n" + goRunner,
		"docs/agents/sprint1/s1-01-rune-helpers/tasks.md": tasks[0],
		"docs/agents/sprint1/s1-01-rune-helpers/plan.md":  "# S1-01 test plan\n\n## T1 — Queue\n\n- [ ] `" + queueEmpty + "` — empty\n- [ ] `" + queuePush + "` — push\n",
		"docs/agents/sprint1/s1-02-slugify/tasks.md":      later,
		"docs/agents/sprint1/s1-02-slugify/plan.md":       "# S1-02 test plan\n\n## T1 — Queue length\n\n- [ ] `" + queueLen + "` — counts\n",
	})
}

// greenQueue takes S1-01/T1 through RED to a GREEN commit with impl and
// judges it.
func greenQueue(t testing.TB, f *fixture, impl string, tests ...string) (string, gates.Verdict) {
	t.Helper()
	task := "S1-01/T1"
	wt := f.start(t, task, tests...)
	files := map[string]string{"strutil/queue.go": queueShim, "strutil/queue_test.go": queueTest}
	commit(t, wt, "red", files)
	if v := f.judge(t, "red", task); v.Result != gates.PASS {
		t.Fatalf("red: %s", v)
	}
	commit(t, wt, "green", map[string]string{"strutil/queue.go": impl})
	return wt, f.judge(t, "green", task)
}

func reasonOf(v gates.Verdict, class string) *gates.Reason {
	for i := range v.Reasons {
		if v.Reasons[i].Class == class {
			return &v.Reasons[i]
		}
	}
	return nil
}

// The held-out hollow GREEN: Len's body replaced by a zero-value return
// fails none of the task's declared tests, and no later task names it, so
// GREEN FAILs naming it as a test defect.
func TestGreen_UnpinnedSymbol_Fails(t *testing.T) {
	f := newQueueFixture(t, false)
	_, v := greenQueue(t, f, queueImpl, queueEmpty, queuePush)
	want(t, v, gates.FAIL, gates.ClassUnpinned)
	r := reasonOf(v, gates.ClassUnpinned)
	if r == nil || !strings.Contains(r.Detail, "strutil.Queue.Len") || !strings.Contains(r.Detail, "back to RED") || r.Severity != "" {
		t.Fatalf("unpinned reason %+v", r)
	}
	if strings.Contains(v.String(), "Queue.Push") || strings.Contains(v.String(), "Queue.Peek") {
		t.Errorf("a pinned symbol is named: %s", v)
	}
	if len(r.Paths) != 1 || !strings.HasPrefix(r.Paths[0], "strutil/queue.go:") {
		t.Errorf("paths %v", r.Paths)
	}
	// The scratch copy is gone: no worktree but the task's is left.
	if wts := gt.Git(t, f.dir, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 2 {
		t.Errorf("worktrees left:\n%s", wts)
	}
	gt.Fsck(t, f.dir)
}

// The hollow Len itself (it returns 0) is the same finding.
func TestGreen_ZeroValueStub_Unpinned(t *testing.T) {
	f := newQueueFixture(t, false)
	hollow := strings.Replace(queueImpl, "return len(q.items)", "return 0", 1)
	_, v := greenQueue(t, f, hollow, queueEmpty, queuePush)
	want(t, v, gates.FAIL, gates.ClassUnpinned)
	if r := reasonOf(v, gates.ClassUnpinned); r == nil || !strings.Contains(r.Detail, "strutil.Queue.Len") {
		t.Fatalf("verdict %s", v)
	}
}

// When a later task names Len, the unpinned Len is a note carried
// forward and GREEN passes; a test that pins Len leaves no note.
func TestGreen_UnpinnedSymbol_CarriedForward(t *testing.T) {
	f := newQueueFixture(t, true)
	_, v := greenQueue(t, f, queueImpl, queueEmpty, queuePush)
	if v.Result != gates.PASS {
		t.Fatalf("verdict %s", v)
	}
	r := reasonOf(v, gates.ClassUnpinned)
	if r == nil || r.Severity != gates.SevInfo || !strings.Contains(r.Detail, "S1-02/T1") || !strings.Contains(r.Detail, "Queue.Len") {
		t.Fatalf("carried-forward note %+v", r)
	}
}

// An honest GREEN whose tests pin every declared symbol passes clean.
func TestGreen_Pinned_Go(t *testing.T) {
	f := newQueueFixture(t, false)
	wt := f.start(t, "S1-01/T1", queueEmpty, queuePush, "strutil/queue_test.go::TestQueue_LenCounts")
	commit(t, wt, "red", map[string]string{"strutil/queue.go": queueShim,
		"strutil/queue_test.go": queueTest + strings.TrimPrefix(queueLenTest, "package strutil\n\nimport \"testing\"\n")})
	want(t, f.judge(t, "red", "S1-01/T1"), gates.PASS, "")
	commit(t, wt, "green", map[string]string{"strutil/queue.go": queueImpl})
	v := f.judge(t, "green", "S1-01/T1")
	want(t, v, gates.PASS, "")
	// The cost is on the verdict: three mutants, one build of the test
	// binary, three runs of it.
	if r := reasonOf(v, gates.ClassPinCost); r == nil || r.Severity != gates.SevInfo ||
		!strings.Contains(r.Detail, "3 mutant(s)") || !strings.Contains(r.Detail, "test binaries built once") || !strings.Contains(r.Detail, "3 run(s)") {
		t.Errorf("cost note %+v", r)
	}
}

// A GREEN whose own run fails runs no mutant, and what the check
// prepared meanwhile (the scratch copy, the binaries) is gone.
func TestGreen_FailingRun_NoMutants(t *testing.T) {
	f := newQueueFixture(t, false)
	_, v := greenQueue(t, f, strings.Replace(queueImpl, "return q.items[0]", "return -q.items[0]", 1), queueEmpty, queuePush)
	want(t, v, gates.FAIL, "fail_assert")
	if r := reasonOf(v, gates.ClassPinCost); r != nil {
		t.Errorf("mutants ran on a failing run: %+v", r)
	}
	if wts := gt.Git(t, f.dir, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 2 {
		t.Errorf("worktrees left:\n%s", wts)
	}
	if _, err := os.Stat(filepath.Join(f.dir, ".git", "ideate", "scratch", "pin-S1-01+T1")); !os.IsNotExist(err) {
		t.Errorf("the scratch copy is left: %v", err)
	}
	gt.Fsck(t, f.dir)
}

// The final gate judges Len at the later task that names it, against
// every declared test of the sprint at that task's HEAD: unpinned there
// is a FAIL naming Len and the task that declares it; a sprint test that
// pins it clears it; the earlier task's final leaves it to the later one.
func TestFinal_Pinning(t *testing.T) {
	f := newQueueFixture(t, true)
	wt, v := greenQueue(t, f, queueImpl, queueEmpty, queuePush)
	if v.Result != gates.PASS {
		t.Fatalf("green: %s", v)
	}
	// S1-01 merged: the later task starts from it.
	gt.Git(t, f.dir, "merge", "-q", "--ff-only", gt.Git(t, wt, "rev-parse", "HEAD"))
	fd := gates.FinalDeps{PlanDeps: gates.PlanDeps{Git: f.g, Tasks: f.m, Exec: execlog.Open(f.g), Root: f.dir,
		Plan: f.planLoader()}, Timeout: time.Minute}
	final := func(task string) gates.Verdict {
		t.Helper()
		v, err := gates.Final(fd).Run(ctx, gates.Input{Task: task})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// S1-01/T1's final hands Len on.
	v = final("S1-01/T1")
	if r := reasonOf(v, gates.ClassUnpinned); r == nil || r.Severity != gates.SevInfo {
		t.Fatalf("S1-01/T1 final: %s", v)
	}
	// The later task's test never looks at Len: still unpinned.
	later := f.start(t, "S1-02/T1", queueLen)
	weak := strings.Replace(queueLenTest, "q.Len() != 2", "q.Peek() != 1", 1)
	weak = strings.Replace(weak, "\"Len = %d, want 2\", q.Len()", "\"Peek = %d\", q.Peek()", 1)
	commit(t, later, "later: a test blind to Len", map[string]string{"strutil/queuelen_test.go": weak})
	v = final("S1-02/T1")
	r := reasonOf(v, gates.ClassUnpinned)
	if v.Result != gates.FAIL || r == nil || r.Severity != "" || !strings.Contains(r.Detail, "strutil.Queue.Len") || !strings.Contains(r.Detail, "declared by S1-01/T1") {
		t.Fatalf("S1-02/T1 final, Len unpinned: %s", v)
	}
	// A sprint test that pins Len: no finding.
	commit(t, later, "later: a test of Len", map[string]string{"strutil/queuelen_test.go": queueLenTest})
	v = final("S1-02/T1")
	if r := reasonOf(v, gates.ClassUnpinned); r != nil {
		t.Fatalf("S1-02/T1 final, Len pinned: %s", v)
	}
	// A hollow Len that reached the later task fails the sprint's test.
	commit(t, later, "later: Len hollowed", map[string]string{"strutil/queue.go": strings.Replace(queueImpl, "return len(q.items)", "return 0", 1)})
	v = final("S1-02/T1")
	if v.Result != gates.FAIL || reasonOf(v, gates.ClassSprintTests) == nil {
		t.Fatalf("S1-02/T1 final, Len hollow: %s", v)
	}
	gt.Fsck(t, f.dir)
}

func (f *fixture) planLoader() func(ctx context.Context) (*plan.Sprint, error) {
	return func(ctx context.Context) (*plan.Sprint, error) {
		return plan.Load(ctx, os.DirFS(f.dir), plan.Options{Root: plan.DefaultRoot})
	}
}

// userGoCache keeps the user's go build cache for the fixture's runs:
// gt.NewRepo points HOME at an empty directory, where every mutant run
// would build the standard library again.
func userGoCache(t testing.TB) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(strings.TrimSpace(string(out)), "\n")
	for k, v := range map[string]string{"GOCACHE": env[0], "GOMODCACHE": env[1], "GOTOOLCHAIN": "local", "GOFLAGS": ""} {
		if tt, ok := t.(interface{ Setenv(string, string) }); ok {
			tt.Setenv(k, v)
		}
	}
}
