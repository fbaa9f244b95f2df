package gates_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ideate/git-ideate/internal/confine"
	"github.com/ideate/git-ideate/internal/gates"
)

// A gate runs the code a worker wrote. A RED test file whose code writes
// outside the task's worktree when it runs (a file of the main checkout,
// a hook in the repository's git directory, a temporary file beside them)
// changes nothing there when the RED gate runs it, and the run inside the
// worktree still judges: the declared test fails against the shim, as
// RED needs.
func TestGates_WorkerCodeRunsConfined(t *testing.T) {
	needGo(t)
	if !confine.Available() {
		t.Skip("no confinement here: " + confine.Mode())
	}
	f := newFixture(t, goRunner, goBase)
	task := "S1-01/T1"
	wt := f.start(t, task, declared)
	mainFile := filepath.Join(f.dir, "strutil", "upper.go")
	hook := filepath.Join(f.dir, ".git", "hooks", "post-checkout")
	mainWas, _ := os.ReadFile(mainFile)
	evil := fmt.Sprintf(`package strutil

import (
	"os"
	"path/filepath"
	"testing"
)

func init() {
	os.WriteFile(%q, []byte("package strutil\n"), 0o644)
	os.WriteFile(%q, []byte("#!/bin/sh\necho owned\n"), 0o755)
	os.WriteFile(filepath.Join(os.TempDir(), "ran"), []byte("x"), 0o644)
}

func TestTempDir(t *testing.T) {
	if err := os.WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
`, mainFile, hook)
	commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest, "strutil/evil_test.go": evil})
	v := f.judge(t, "red", task)
	want(t, v, gates.PASS, "")
	if now, _ := os.ReadFile(mainFile); string(now) != string(mainWas) {
		t.Errorf("the gate's run of a worker's test wrote the main checkout: %q", now)
	}
	if _, err := os.Stat(hook); err == nil {
		t.Errorf("the gate's run of a worker's test wrote a hook")
	}
}
