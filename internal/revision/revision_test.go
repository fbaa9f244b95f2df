package revision_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/worktree"
)

type fixture struct {
	dir   string
	git   *gitstore.Store
	tasks *worktree.Manager
	exec  *execlog.Log
	board *board.Store
	deps  revision.Deps
	items map[string]string // task → board item
}

// newFixture: a repository with tasks started (task → role) and, when
// edges is not nil, board items for them the way plan import writes them
// (spec key lines, depends_on).
func newFixture(t *testing.T, tasks map[string]string, edges map[string][]string) *fixture {
	t.Helper()
	dir := gt.NewRepo(t)
	os.MkdirAll(filepath.Join(dir, "strutil"), 0o755)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse.go"), []byte("package strutil\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f := &fixture{dir: dir, git: g, tasks: worktree.Open(g), exec: execlog.Open(g), board: board.Open(g, record.Open(g)), items: map[string]string{}}
	for task, role := range tasks {
		if _, err := f.tasks.Start(context.Background(), worktree.StartInput{Task: task, Role: role, Scope: []string{"strutil/**"},
			Tests: []string{"strutil/reverse_test.go::TestReverse"}}); err != nil {
			t.Fatal(err)
		}
	}
	if edges != nil {
		// Create in dependency order: a task's dependencies first.
		var create func(task string)
		create = func(task string) {
			if f.items[task] != "" {
				return
			}
			var deps []string
			for _, d := range edges[task] {
				create(d)
				deps = append(deps, f.items[d])
			}
			out, err := f.board.Create(context.Background(), board.CreateInput{Title: task, SpecFormat: plan.TaskFormat,
				Spec: "ideate-task: " + task + "\nsprint: 1\n", CreatedBy: board.Actor{Human: "sup"}, DependsOn: deps})
			if err != nil {
				t.Fatal(err)
			}
			f.items[task] = out.Item.ID
		}
		for task := range edges {
			create(task)
		}
	}
	f.deps = revision.Deps{Tasks: f.tasks, Exec: f.exec, Board: f.board}
	return f
}

// failGreen stores a GREEN FAIL verdict of the task's current attempt
// naming a failing test, and leaves an output.md in the worktree.
func (f *fixture) failGreen(t *testing.T, task string, n int) {
	t.Helper()
	ct, err := f.tasks.Contract(task)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec.Append(context.Background(), execlog.Entry{Task: task, Attempt: ct.Attempt, Phase: "green", Event: execlog.EventVerdict,
		Result: execlog.FAIL, Reasons: []execlog.Reason{{Class: "declared_failing", Detail: "a declared test does not pass"}},
		Tests: []execlog.TestResult{{ID: "strutil/reverse_test.go::TestReverse", Outcome: "FAIL_ASSERT", Detail: "Reverse(abc) = abc, want cba"},
			{ID: "strutil/reverse_test.go::TestEmpty", Outcome: "PASS"}}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(ct.Path, worktree.AttemptDir, worktree.OutputFile)
	if err := os.WriteFile(out, []byte("# output\n\nattempt "+string(rune('0'+n))+": I swapped the bytes, not the runes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A task failing GREEN three times: three turns of init.md, each turn
// after the first with feedback naming the failing test and quoting the
// attempt's output.md; then the escalation, classified from the board:
// with a pending dependent the chain is halted (its worktree abandoned,
// the done dependent kept); without one it is isolated.
func TestOpen_ThreeFailuresThenEscalation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tasks     map[string]string
		edges     map[string][]string
		class     string
		halted    []string
		dependent bool
	}{
		{"with a dependent", map[string]string{"S1-01/T1": "green-worker", "S1-02/T1": "red-worker"},
			map[string][]string{"S1-01/T1": nil, "S1-02/T1": {"S1-01/T1"}, "S1-03/T1": {"S1-01/T1"}}, revision.FoundationPoisoning, []string{"S1-02/T1"}, true},
		{"without", map[string]string{"S1-01/T1": "green-worker", "S1-02/T1": "red-worker"},
			map[string][]string{"S1-01/T1": nil, "S1-02/T1": nil}, revision.Isolated, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, tc.tasks, tc.edges)
			const task = "S1-01/T1"
			var texts []string
			for k := 1; k <= 3; k++ {
				a, err := f.deps.Open(ctx, task)
				if err != nil {
					t.Fatalf("open %d: %v", k, err)
				}
				if a.Escalation != nil || a.Attempt != k || a.Turn != k || !a.Created {
					t.Fatalf("open %d: %+v", k, a)
				}
				fi, err := os.Stat(a.Path)
				if err != nil || fi.Mode().Perm() != 0o444 || !strings.HasSuffix(a.Path, filepath.Join(".ideate", "init.md")) {
					t.Fatalf("materialized init.md %s: %v %v", a.Path, fi, err)
				}
				if b, _ := os.ReadFile(a.Path); string(b) != a.Text {
					t.Fatal("the worktree's init.md is not the ref's")
				}
				if len(texts) > 0 && !strings.HasPrefix(a.Text, texts[len(texts)-1]) {
					t.Fatalf("attempt %d's init.md does not extend attempt %d's", k, k-1)
				}
				texts = append(texts, a.Text)
				if k > 1 {
					for _, want := range []string{"### Feedback on attempt " + string(rune('0'+k-1)), "test strutil/reverse_test.go::TestReverse: FAIL_ASSERT",
						"What to fix:", "make these tests reach their expected outcome: strutil/reverse_test.go::TestReverse",
						"What NOT to touch:", "the test files RED froze: strutil/reverse_test.go", "I swapped the bytes"} {
						if !strings.Contains(a.Text[len(texts[k-2]):], want) {
							t.Fatalf("turn %d lacks %q:\n%s", k, want, a.Text[len(texts[k-2]):])
						}
					}
					if strings.Contains(a.Text[len(texts[k-2]):], "TestEmpty") {
						t.Fatal("a passing test is named in the feedback")
					}
				}
				// Opening again without a new verdict changes nothing.
				if again, err := f.deps.Open(ctx, task); err != nil || again.Created || again.Attempt != k {
					t.Fatalf("second open of attempt %d: %+v %v", k, again, err)
				}
				f.failGreen(t, task, k)
			}
			if strings.Count(texts[2], "\n## Turn ") != 3 || !strings.Contains(texts[0], "# Memory\n\n(none)") {
				t.Fatalf("init.md:\n%s", texts[2])
			}
			// The fourth open escalates: the bound is 3.
			a, err := f.deps.Open(ctx, task)
			if err != nil {
				t.Fatal(err)
			}
			esc := a.Escalation
			if esc == nil || esc.Class != tc.class || esc.Attempt != 3 || esc.Cause != revision.CauseAttempts || esc.Graph != "board" ||
				strings.Join(esc.Halted, ",") != strings.Join(tc.halted, ",") || len(esc.Failing) != 1 {
				t.Fatalf("escalation %+v", esc)
			}
			if tc.dependent && strings.Join(esc.Dependents, ",") != "S1-02/T1,S1-03/T1" || !tc.dependent && len(esc.Dependents) != 0 {
				t.Fatalf("dependents %q", esc.Dependents)
			}
			if ct, _ := f.tasks.Contract(task); ct.Attempt != 3 || ct.Status != worktree.StatusOpen {
				t.Fatalf("the failing task after escalation: %+v", ct)
			}
			dep, _ := f.tasks.Contract("S1-02/T1")
			if tc.dependent != (dep.Status == worktree.StatusAbandoned) {
				t.Fatalf("dependent task: %s", dep.Status)
			}
			// Each attempt's files are on the task's ref.
			shown, err := f.deps.Show(ctx, task)
			if err != nil || len(shown) != 3 || shown[2].Verdict != "green FAIL" || !strings.Contains(shown[1].Output, "attempt 2") || shown[0].Init != texts[0] {
				t.Fatalf("show: %+v %v", shown, err)
			}
			// The log holds it once, with its evidence; asking again
			// returns the same escalation.
			again, err := f.deps.Open(ctx, task)
			if err != nil || again.Escalation == nil || again.Escalation.ID != esc.ID {
				t.Fatalf("second escalation: %+v %v", again, err)
			}
			list, err := f.deps.Escalations(ctx, 0)
			if err != nil || len(list) != 1 || list[0].Class != tc.class || list[0].Decision != map[string]string{revision.FoundationPoisoning: revision.DecideHalt, revision.Isolated: revision.DecideContinue}[tc.class] {
				t.Fatalf("escalations %+v %v", list, err)
			}
			// The entry carries the model's values: the failing test's
			// outcome as the verdict had it, not a made-up "FAIL".
			if es, err := f.deps.Exec.List(ctx, execlog.Filter{Phase: revision.Phase}); err != nil || len(es) != 1 || len(es[0].Tests) != 1 || es[0].Tests[0].Outcome != "FAIL_ASSERT" {
				t.Fatalf("escalation entry: %+v %v", es, err)
			}
			lines, _ := f.deps.PrimeLines(ctx, 5)
			if len(lines) != 1 || !strings.Contains(lines[0], tc.class) || !strings.Contains(lines[0], "S1-01/T1") {
				t.Fatalf("priming lines %q", lines)
			}
		})
	}
}

// The bound comes from .ideate.json's value when standards.md says none;
// a task started beyond it escalates on open.
func TestOpen_BoundFromConfig(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"S1-01/T1": "green-worker"}, nil)
	f.deps.MaxAttempts = 1
	if n, from := f.deps.Bound(ctx); n != 1 || from != ".ideate.json" {
		t.Fatalf("bound %d from %s", n, from)
	}
	if a, err := f.deps.Open(ctx, "S1-01/T1"); err != nil || a.Escalation != nil {
		t.Fatalf("first open: %+v %v", a, err)
	}
	f.failGreen(t, "S1-01/T1", 1)
	a, err := f.deps.Open(ctx, "S1-01/T1")
	if err != nil || a.Escalation == nil || a.Escalation.Class != revision.Isolated || a.Escalation.Graph != "none" {
		t.Fatalf("open after the only attempt failed: %+v %v", a, err)
	}
}

// Work outside the scope, failed on to the last attempt, is a scope
// defect: a human decides, whatever the graph says.
func TestEscalate_ScopeDefect(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"S1-01/T1": "green-worker", "S1-02/T1": "red-worker"}, map[string][]string{"S1-01/T1": nil, "S1-02/T1": {"S1-01/T1"}})
	v, err := f.exec.Append(ctx, execlog.Entry{Task: "S1-01/T1", Attempt: 1, Phase: "green", Event: execlog.EventVerdict, Result: execlog.FAIL,
		Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "changed outside the scope", Paths: []string{"cmd/main.go"}}}})
	if err != nil {
		t.Fatal(err)
	}
	esc, err := f.deps.Escalate(ctx, "S1-01/T1", revision.CauseAttempts, &v)
	if err != nil || esc.Class != revision.ScopeDefect || esc.Decision != revision.DecideHuman || len(esc.Halted) != 0 {
		t.Fatalf("%+v %v", esc, err)
	}
	if dep, _ := f.tasks.Contract("S1-02/T1"); dep.Status != worktree.StatusOpen {
		t.Fatal("a scope defect halted the chain")
	}
}

// An attempt that writes no output.md of its own is not credited with the
// one an earlier attempt left in the worktree: its feedback says it left
// none.
func TestOpen_OutputIsTheAttemptsOwnOrNone(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"S1-01/T1": "green-worker"}, map[string][]string{"S1-01/T1": nil})
	const task = "S1-01/T1"
	if _, err := f.deps.Open(ctx, task); err != nil {
		t.Fatal(err)
	}
	f.failGreen(t, task, 1) // leaves attempt 1's output.md in the worktree
	a2, err := f.deps.Open(ctx, task)
	if err != nil || a2.Attempt != 2 || !strings.Contains(a2.Text, "attempt 1: I swapped") {
		t.Fatalf("attempt 2: %+v %v", a2, err)
	}
	// Attempt 2 fails without writing an output.md of its own.
	ct, _ := f.tasks.Contract(task)
	if _, err := f.exec.Append(ctx, execlog.Entry{Task: task, Attempt: ct.Attempt, Phase: "green", Event: execlog.EventVerdict, Result: execlog.FAIL,
		Reasons: []execlog.Reason{{Class: "declared_failing", Detail: "d"}}}); err != nil {
		t.Fatal(err)
	}
	a3, err := f.deps.Open(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	_, turn3, _ := strings.Cut(a3.Text, "### Feedback on attempt 2")
	if !strings.Contains(turn3, "The attempt left no output.md.") || strings.Contains(turn3, "I swapped") {
		t.Fatalf("feedback on attempt 2:\n%s", turn3)
	}
}
