package gates_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
)

// WriteReady creates plan-ready.md at a task's first RED PASS, adds the
// next task's section beside it and replaces a task's own section when
// its RED passes again; the plan reads each box back under its task.
func TestWriteReady_SectionPerTask(t *testing.T) {
	dir := gt.NewRepo(t)
	story := filepath.Join(dir, "docs", "agents", "sprint1", "s1-01-reverse")
	write(t, filepath.Join(story, "tasks.md"), "# S1-01 tasks\n\n## T1 — Reverse\n\nFiles: `strutil/reverse.go`\n\n## T2 — Later\n\nFiles: `strutil/later.go`\n")
	write(t, filepath.Join(story, "plan.md"), "# S1-01 test plan\n\n## T1 — Reverse\n\n- [ ] `strutil/reverse_test.go::TestReverse_ASCII` — ascii\n- [ ] `strutil/reverse_test.go::TestReverse_Empty` — empty\n\n## T2 — Later\n\n- [ ] `strutil/later_test.go::TestLater` — later\n")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	d := gates.PlanDeps{Git: g, Root: dir, Plan: func(ctx context.Context) (*plan.Sprint, error) { return plan.LoadDir(ctx, dir, plan.Options{}) }}
	red := func(task string, tests ...gates.TestOutcome) *gates.ReadyResult {
		t.Helper()
		r, err := gates.WriteReady(t.Context(), d, gates.Verdict{Gate: "red", Result: gates.PASS, Task: task, Attempt: 1, Commit: "0123456789abcdef", Tests: tests})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := red("S1-01/T2", gates.TestOutcome{ID: "strutil/later_test.go::TestLater", Outcome: "FAIL_ASSERT", Detail: "got 0"}); !r.Created || r.Boxes != 1 {
		t.Fatalf("first RED: %+v", r)
	}
	red("S1-01/T1", gates.TestOutcome{ID: "strutil/reverse_test.go::TestReverse_ASCII", Outcome: "FAIL_ASSERT"})
	if r := red("S1-01/T1", gates.TestOutcome{ID: "strutil/reverse_test.go::TestReverse_ASCII", Outcome: "FAIL_STUB"}); r.Created || r.Boxes != 2 {
		t.Fatalf("RED again: %+v", r)
	}
	b, _ := os.ReadFile(filepath.Join(story, "plan-ready.md"))
	text := string(b)
	if strings.Count(text, "## T1") != 1 || strings.Count(text, "## T2") != 1 || !strings.Contains(text, "RED: FAIL_STUB") || strings.Contains(text, "RED: FAIL_ASSERT\n- [ ] `strutil/reverse") ||
		!strings.Contains(text, "`strutil/later_test.go::TestLater` — RED: FAIL_ASSERT — got 0") || !strings.Contains(text, "`strutil/reverse_test.go::TestReverse_Empty` — RED: not run") {
		t.Fatalf("plan-ready.md:\n%s", text)
	}
	s, err := plan.LoadDir(t.Context(), dir, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr := s.StoryDirOf("S1-01").PlanReady
	var got []string
	for _, bx := range pr.Boxes {
		got = append(got, bx.TestID)
		if bx.Checked || bx.Task == 0 {
			t.Errorf("box %+v", bx)
		}
	}
	if len(got) != 3 {
		t.Fatalf("boxes %v", got)
	}
	if fs := plan.Check(s); len(fs) > 0 {
		for _, f := range fs {
			if strings.HasPrefix(f.Rule, "ready.") {
				t.Errorf("plan check on the written file: %+v", f)
			}
		}
	}
}

// A gate asked twice about the same commit, with the same result, stores
// one verdict; a different result on that commit is stored.
func TestJudge_SameVerdictOnTheSameCommitIsStoredOnce(t *testing.T) {
	f := newFakeFixture(t)
	wt := f.start(t, "S1-01/T1", declared)
	commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	f.judge(t, "red", "S1-01/T1")
	f.judge(t, "red", "S1-01/T1")
	if es := verdicts(t, f, "S1-01/T1"); len(es) != 1 {
		t.Fatalf("two identical RED verdicts stored %d entries", len(es))
	}
	f.judge(t, "green", "S1-01/T1")
	if es := verdicts(t, f, "S1-01/T1"); len(es) != 2 {
		t.Fatalf("a GREEN verdict after the RED one: %d entries", len(es))
	}
}

// The final gate judges the sprint: while another task of the same wave
// (or an earlier one) has no GREEN PASS it is FAIL sprint_unfinished,
// naming that task; a later wave's task is not due.
func TestFinal_RefusesWhileTheSprintIsUnfinished(t *testing.T) {
	f := newFakeFixture(t)
	wt := f.start(t, "S1-01/T1", declared)
	head := commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	l := execlog.Open(f.g)
	green := func(task, commit string) {
		t.Helper()
		if _, err := l.Append(t.Context(), execlog.Entry{Task: task, Attempt: 1, Phase: "green", Event: "verdict", Result: "PASS", Commit: commit}); err != nil {
			t.Fatal(err)
		}
	}
	green("S1-01/T1", head)
	final := gates.Final(gates.FinalDeps{PlanDeps: gates.PlanDeps{Git: f.g, Tasks: f.m, Exec: l, Root: f.dir,
		Plan: func(ctx context.Context) (*plan.Sprint, error) { return plan.LoadDir(ctx, f.dir, plan.Options{}) }}, Timeout: time.Minute})
	unfinished := func() string {
		t.Helper()
		v, err := final.Run(t.Context(), gates.Input{Task: "S1-01/T1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Reasons {
			if r.Class == gates.ClassSprintUnfinished {
				if v.Result != gates.FAIL {
					t.Errorf("verdict %s with %s", v.Result, r.Detail)
				}
				return r.Detail
			}
		}
		return ""
	}
	if d := unfinished(); !strings.Contains(d, "S1-01/T2") || strings.Contains(d, "S1-02/T1") {
		t.Fatalf("sprint_unfinished: %q", d)
	}
	green("S1-01/T2", head)
	if d := unfinished(); d != "" {
		t.Fatalf("after S1-01/T2's GREEN PASS: %q", d)
	}
}
