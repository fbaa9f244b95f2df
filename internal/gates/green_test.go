package gates_test

import (
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// One task through RED, the scaffold guard and GREEN, and each way of
// getting the later gates wrong.
func TestGates_GoProject_RedScaffoldGreen(t *testing.T) {
	needGo(t)
	f := newFixture(t, goRunner, goBase)
	task := "S1-01/T1"
	wt := f.start(t, task, declared)

	// Before any RED PASS, scaffold and green have nothing to hold the
	// tests to.
	want(t, f.judge(t, "green", task), gates.FAIL, "no_red")

	red := commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	want(t, f.judge(t, "red", task), gates.PASS, "")

	// Scaffold: a stub with a body, a shim left, a test edited.
	commit(t, wt, "scaffold with a body", map[string]string{"strutil/reverse.go": reverseImpl})
	want(t, f.judge(t, "scaffold", task), gates.FAIL, "stub_implemented")
	gt.Git(t, wt, "reset", "-q", "--hard", red)
	want(t, f.judge(t, "scaffold", task), gates.FAIL, "shim_left")
	commit(t, wt, "scaffold edits a test", map[string]string{"strutil/reverse.go": reverseStub,
		"strutil/reverse_test.go": strings.Replace(reverseTest, `"abc"`, `"ab"`, 1)})
	want(t, f.judge(t, "scaffold", task), gates.FAIL, "test_changed")
	gt.Git(t, wt, "reset", "-q", "--hard", red)
	scaffold := commit(t, wt, "scaffold", map[string]string{"strutil/reverse.go": reverseStub})
	v := f.judge(t, "scaffold", task)
	want(t, v, gates.PASS, "")
	if len(v.Tests) != 1 || v.Tests[0].Outcome != "FAIL_STUB" {
		t.Errorf("scaffold tests %+v", v.Tests)
	}

	// GREEN, wrong four ways, then right.
	green := map[string]string{"strutil/reverse.go": reverseImpl}
	for _, c := range []struct {
		name, class string
		files       map[string]string
	}{
		{"out-of-scope", "out_of_scope", map[string]string{"README.md": "changed\n"}},
		{"regression", "regression", map[string]string{"strutil/upper.go": strings.Replace(goBase["strutil/upper.go"], "strings.ToUpper(s)", "s", 1)}},
		{"edited-test", "test_changed", map[string]string{"strutil/reverse_test.go": strings.Replace(reverseTest, `"abc"`, `"ab"`, 1)}},
		{"new-skip", "suppression", map[string]string{"strutil/upper_test.go": strings.Replace(goBase["strutil/upper_test.go"], "{\n\tif", "{\n\tt.Skip(\"later\")\n\tif", 1)}},
		{"nolint", "suppression", map[string]string{"strutil/reverse.go": strings.Replace(reverseImpl, "string(r)", "string(r) //nolint", 1)}},
	} {
		gt.Git(t, wt, "reset", "-q", "--hard", scaffold)
		files := map[string]string{}
		for k, v := range green {
			files[k] = v
		}
		for k, v := range c.files {
			files[k] = v
		}
		commit(t, wt, "green: "+c.name, files)
		v := f.judge(t, "green", task)
		want(t, v, gates.FAIL, c.class)
		if c.class == "out_of_scope" && strings.Join(v.Reasons[0].Paths, " ") != "README.md" {
			t.Errorf("out of scope paths %+v", v.Reasons)
		}
	}
	gt.Git(t, wt, "reset", "-q", "--hard", scaffold)
	head := commit(t, wt, "green", green)
	v = f.judge(t, "green", task)
	want(t, v, gates.PASS, "")
	if v.Commit != head || len(v.Tests) != 1 || v.Tests[0].Outcome != "PASS" {
		t.Errorf("green verdict %+v", v)
	}
	// The base run was made once and reused.
	runs, err := f.m.Runs(task)
	if err != nil {
		t.Fatal(err)
	}
	bases := 0
	for _, r := range runs {
		if r.Label == "base" {
			bases++
		}
	}
	if bases != 1 {
		t.Errorf("%d base runs recorded, want 1", bases)
	}
	gt.Fsck(t, f.dir)
}
