package gates_test

import (
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
)

// TestStructure_GoTask judges real task commits in a real repository:
// only what the task added counts, by qualified identity.
func TestStructure_GoTask(t *testing.T) {
	f := newFixture(t, goRunner, withTasks(t, goBase, 10))
	cases := []struct {
		name   string
		files  map[string]string
		result gates.Result
		class  string
	}{
		{"parallel", map[string]string{"strutil/reverse.go": reverseImpl, "strutil/reverse_test.go": reverseTest,
			"textutil/rev.go":      "package textutil\n\n// Reverse reverses too.\nfunc Reverse(s string) string { return s }\n",
			"textutil/rev_test.go": "package textutil\n\nimport \"testing\"\n\nfunc TestRev(t *testing.T) { _ = Reverse(\"\") }\n"}, gates.FAIL, gates.ClassParallelImpl},
		{"clean", map[string]string{"strutil/reverse.go": reverseImpl, "strutil/reverse_test.go": reverseTest}, gates.PASS, ""},
		{"orphan", map[string]string{"strutil/reverse.go": reverseImpl + "\nfunc leftover(s string) string { return s + s }\n",
			"strutil/reverse_test.go": reverseTest}, gates.FAIL, gates.ClassOrphan},
		{"copy", map[string]string{"strutil/reverse.go": reverseImpl + strings.Replace(strings.Replace(reverseImpl[len("package strutil\n"):], "Reverse", "Backwards", 2), "r := ", "rs := ", 1),
			"strutil/reverse_test.go": reverseTest + "\nfunc TestBackwards(t *testing.T) { _ = Backwards(\"\") }\n"}, gates.FAIL, gates.ClassNearCopy},
		// A changed file the parser cannot read whole is not judged.
		{"unreadable", map[string]string{"strutil/reverse.go": reverseImpl, "strutil/reverse_test.go": reverseTest,
			"strutil/broken.go": "package strutil\n\nfunc Broken(s string) string {\n\treturn s +\n"}, gates.UNVERIFIABLE, gates.ClassUnreadable},
	}
	// The plan gives S1-01/T1 the symbol strutil.Reverse: the parallel
	// case runs as T1.
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := "S1-01/T" + string(rune('1'+i))
			wt := f.start(t, task, declared)
			head := commit(t, wt, c.name, c.files)
			v := f.judge(t, "structure", task)
			want(t, v, c.result, c.class)
			if v.Commit != head || v.Task != task || v.Gate != "structure" {
				t.Errorf("verdict facts: %+v", v)
			}
			for _, r := range v.Reasons {
				if r.Severity == "" || len(r.Paths) != 1 {
					t.Errorf("reason without severity or place: %+v", r)
				}
			}
		})
	}
	t.Run("uncommitted", func(t *testing.T) {
		wt := f.start(t, "S1-01/T9", declared)
		commit(t, wt, "x", map[string]string{"strutil/reverse.go": reverseImpl})
		writeFiles(t, wt, map[string]string{"strutil/extra.go": "package strutil\n"})
		want(t, f.judge(t, "structure", "S1-01/T9"), gates.FAIL, gates.ClassUncommitted)
	})
	// A task with no declared test is still judged (a gate-only task).
	t.Run("no-tests", func(t *testing.T) {
		wt := f.start(t, "S1-01/T10")
		commit(t, wt, "x", map[string]string{"strutil/reverse.go": reverseImpl, "strutil/use.go": "package strutil\n\nvar _ = Reverse\n"})
		want(t, f.judge(t, "structure", "S1-01/T10"), gates.PASS, "")
	})
}
