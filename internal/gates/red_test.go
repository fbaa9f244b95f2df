package gates_test

import (
	"github.com/ideate/git-ideate/internal/execlog"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

const declared = "strutil/reverse_test.go::TestReverse_ASCII"

// RED judges the task's committed HEAD: every declared test fails by
// assertion, nothing that passed at the base breaks, and only test files
// and shims changed. Each way of getting it wrong FAILs with its class.
func TestRed_GoProject(t *testing.T) {
	needGo(t)
	f := newFixture(t, goRunner, withTasks(t, goBase, 10))
	cases := []struct {
		name   string
		files  map[string]string
		result gates.Result
		class  string
	}{
		{"assertion", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest}, gates.PASS, ""},
		{"compile-error", map[string]string{"strutil/reverse.go": reverseShim,
			"strutil/reverse_test.go": strings.Replace(reverseTest, "got != \"cba\"", "got != \"cba\" +", 1)}, gates.FAIL, "build_fail"},
		{"missing-import", map[string]string{"strutil/reverse.go": reverseShim,
			"strutil/reverse_test.go": strings.Replace(reverseTest, `Reverse("abc")`, `Reverse(strings.ToLower("abc"))`, 1)}, gates.FAIL, "build_fail"},
		{"already-passes", map[string]string{"strutil/reverse.go": strings.Replace(reverseImpl, "// Reverse reverses s.", "// Reverse: agentic:shim", 1),
			"strutil/reverse_test.go": reverseTest}, gates.FAIL, "unexpected_pass"},
		{"misspelled-selector", map[string]string{"strutil/reverse.go": reverseShim,
			"strutil/reverse_test.go": strings.Replace(reverseTest, "TestReverse_ASCII", "TestReverseASCII", 1)}, gates.FAIL, "not_run"},
		{"non-test-file", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest,
			"strutil/upper.go": goBase["strutil/upper.go"] + "\n// Lower is new.\nfunc Lower(s string) string { return s }\n"}, gates.FAIL, "not_test_file"},
		{"regression", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest,
			"strutil/upper_test.go": strings.Replace(goBase["strutil/upper_test.go"], `"A"`, `"B"`, 1)}, gates.FAIL, "regression"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // a task each: its own worktree, lock and base run
			task := "S1-01/T" + string(rune('1'+i))
			wt := f.start(t, task, declared)
			head := commit(t, wt, "red: "+c.name, c.files)
			v := f.judge(t, "red", task)
			want(t, v, c.result, c.class)
			if v.Commit != head || v.Task != task || v.Attempt != 1 || v.Base == "" || v.Tree == "" || v.Sprint != 1 || v.Story != "S1-01" || v.Wave != 1 {
				t.Errorf("verdict facts: %+v", v)
			}
			if len(v.Tests) != 1 || v.Tests[0].ID != declared {
				t.Errorf("tests %+v", v.Tests)
			}
			if c.name == "non-test-file" && (len(v.Reasons) != 1 || strings.Join(v.Reasons[0].Paths, " ") != "strutil/upper.go") {
				t.Errorf("not_test_file names %+v", v.Reasons)
			}
			if r, ok, err := f.m.GetRun(task, 1, mustHash(t, head)); err != nil || !ok || r.Label != "red" {
				t.Errorf("red run not recorded: %+v %v %v", r, ok, err)
			}
		})
	}
	// Uncommitted work is not judged: commit first.
	t.Run("uncommitted", func(t *testing.T) {
		wt := f.start(t, "S1-01/T9", declared)
		commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
		writeFiles(t, wt, map[string]string{"strutil/extra_test.go": "package strutil\n"})
		v := f.judge(t, "red", "S1-01/T9")
		want(t, v, gates.FAIL, "uncommitted")
		if !strings.Contains(v.Reasons[0].Detail, "commit first") {
			t.Errorf("detail %q", v.Reasons[0].Detail)
		}
	})
	// No declared test: FAIL no_tests; an unknown task: UNVERIFIABLE.
	t.Run("no-tests", func(t *testing.T) {
		f.start(t, "S1-01/T10")
		want(t, f.judge(t, "red", "S1-01/T10"), gates.FAIL, "no_tests")
		want(t, f.judge(t, "red", "S1-09/T1"), gates.UNVERIFIABLE, "no_contract")
	})
	// A task started under an id the plan's tasks.md does not list has a
	// contract and a worktree, and still is not judged: no verdict is
	// stored by any task gate, not even of a commit that would pass.
	t.Run("not-in-plan", func(t *testing.T) {
		wt := f.start(t, "S1-01/T42", declared)
		commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
		for _, g := range []gates.Name{"red", "green", "structure"} {
			want(t, f.judge(t, g, "S1-01/T42"), gates.UNVERIFIABLE, gates.ClassNotInPlan)
		}
		es, err := execlog.Open(f.g).List(ctx, execlog.Filter{Task: "S1-01/T42"})
		if err != nil || len(es) != 0 {
			t.Errorf("stored for a task outside the plan: %v %v", es, err)
		}
	})
	t.Cleanup(func() { gt.Fsck(t, f.dir) })
}
