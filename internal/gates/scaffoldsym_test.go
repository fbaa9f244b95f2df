package gates_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/scaffold"
)

// The scaffolder's own output passes the scaffold guard's symbol checks;
// a body written at scaffold time, a second definition of the declared
// symbol and a file that is not a stub each FAIL with their class.
func TestScaffold_SymbolChecks(t *testing.T) {
	needGo(t)
	f := newFixture(t, goRunner, goBase)
	task := "S1-01/T1" // the plan declares strutil.Reverse
	wt := f.start(t, task, declared)
	red := commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	want(t, f.judge(t, "red", task), gates.PASS, "")

	list := []string{"strutil/reverse.go", "strutil/reverse_test.go", "strutil/upper.go", "strutil/upper_test.go"}
	r, err := scaffold.Run(ctx, scaffold.Input{Dir: wt, Paths: list, Declared: []string{"strutil.Reverse"},
		Files: []string{"strutil/reverse.go", "strutil/reverse_test.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Actions) != 1 || len(r.Undecided) != 0 { // one update of reverse.go: shim cut, stub written
		t.Fatalf("scaffold: %+v", r)
	}
	b, _ := os.ReadFile(filepath.Join(wt, "strutil/reverse.go"))
	if strings.Contains(string(b), "agentic:shim") || !strings.Contains(string(b), "SUB-AGENT-TODO") {
		t.Fatalf("reverse.go after scaffold:\n%s", b)
	}
	stub := commit(t, wt, "scaffold", nil)
	v := f.judge(t, "scaffold", task)
	want(t, v, gates.PASS, "")
	if len(v.Tests) != 1 || v.Tests[0].Outcome != "FAIL_STUB" {
		t.Errorf("tests %+v", v.Tests)
	}

	for _, c := range []struct {
		name, class string
		files       map[string]string
	}{
		{"helper-with-body", gates.ClassBodyImplemented, map[string]string{"strutil/help.go": "package strutil\n\nfunc helper(s string) string { return s + s }\n"}},
		{"second-definition", gates.ClassStubDuplicate, map[string]string{"strutil/other/rev.go": "package strutil\n\nfunc Reverse(s string) string { panic(\"SUB-AGENT-TODO: again\") }\n"}},
		{"not-a-stub", gates.ClassNotStub, map[string]string{"README.md": "changed\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gt.Git(t, wt, "reset", "-q", "--hard", stub)
			commit(t, wt, c.name, c.files)
			want(t, f.judge(t, "scaffold", task), gates.FAIL, c.class)
		})
	}
	_ = red
}
