//go:build unix

package plan_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/plan"
)

// A standards.md that is a symlink to /dev/zero, or a FIFO, is refused at
// once as unreadable: the load never reads it.
func TestLoad_RefusesWhatIsNotAFile(t *testing.T) {
	for _, kind := range []string{"zero", "fifo"} {
		root := copyExample(t)
		std := filepath.Join(root, "docs", "agents", "sprint1", "standards.md")
		os.Remove(std)
		if kind == "zero" {
			os.Symlink("/dev/zero", std)
		} else if err := syscall.Mkfifo(std, 0o644); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		s, err := plan.LoadDir(context.Background(), root, plan.Options{})
		if d := time.Since(t0); d > 5*time.Second {
			t.Fatalf("%s: the load took %v", kind, d)
		}
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		found := false
		for _, f := range plan.Check(s) {
			if f.Rule == plan.RuleFileUnreadable && strings.HasSuffix(f.File, "standards.md") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: standards.md is not reported unreadable", kind)
		}
	}
}
