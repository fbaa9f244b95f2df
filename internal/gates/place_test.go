package gates_test

import (
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// Verdicts are stored only for tasks of the plan, placed in their real
// sprint and wave, and noted only on the commit they judged: a typo'd task
// id (never started: no contract) is answered and not stored; an
// uncommitted worktree's verdict is sprint 1, wave 1 and names no commit,
// so no note lands on the base (the main branch's tip).
func TestJudge_VerdictsOnlyForPlanTasks(t *testing.T) {
	f := newFakeFixture(t)
	for _, task := range []string{"S1-01/T9", "S9-01/T1", "S1-01/T1 "} {
		v := f.judge(t, "red", task)
		if v.Result != gates.UNVERIFIABLE || !gates.Unplaced(v) {
			t.Fatalf("%s: %s", task, v)
		}
		if es := verdicts(t, f, task); len(es) != 0 {
			t.Fatalf("%s: %d verdict(s) stored for a task the plan does not hold", task, len(es))
		}
	}

	wt := f.start(t, "S1-01/T1", declared)
	base := gt.Git(t, wt, "rev-parse", "HEAD")
	writeFiles(t, wt, map[string]string{"strutil/reverse_test.go": reverseTest})
	v := f.judge(t, "red", "S1-01/T1")
	want(t, v, gates.FAIL, gates.ClassUncommitted)
	es := verdicts(t, f, "S1-01/T1")
	if len(es) != 1 || es[0].Sprint != 1 || es[0].Wave != 1 || es[0].Commit != "" {
		t.Fatalf("uncommitted verdict stored as %+v", es)
	}
	if notes := gt.Git(t, f.dir, "notes", "--ref="+execlog.NotesRef, "list"); strings.Contains(notes, base) {
		t.Fatalf("the uncommitted verdict noted the base %s:\n%s", base, notes)
	}
	gt.Fsck(t, f.dir)
}
