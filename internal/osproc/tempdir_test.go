package osproc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/osproc"
)

// TempDir names its directory by kind and pid, and first removes those of
// processes that are gone; a live process's, and names of another shape,
// are kept.
func TestTempDir_SweepsThoseOfDeadProcesses(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := filepath.Join(tmp, "ideate-testrun-999999999-1")
	mine := filepath.Join(tmp, fmt.Sprintf("ideate-final-%d-2", os.Getpid()))
	other := filepath.Join(tmp, "ideate-run-12345")
	for _, d := range []string{dead, mine, other} {
		if err := os.MkdirAll(filepath.Join(d, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d, err := osproc.TempDir("base")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(d), fmt.Sprintf("ideate-base-%d-", os.Getpid())) || filepath.Dir(d) != tmp {
		t.Errorf("TempDir made %s", d)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead process's directory is still there: %v", err)
	}
	for _, keep := range []string{mine, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
}
