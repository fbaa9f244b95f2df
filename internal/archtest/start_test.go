package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyInit are standard packages whose package init costs every
// git-ideate process start-up time (encoding/gob builds its type tables
// at init, 0.2–0.8 ms measured here; oklog/ulid seeds a math/rand source
// at init, 0.07 ms). The shipped binary must not link
// them; a cache or codec that wants one writes its own form
// (gates/structure_codec.go, record/id.go) instead.
var heavyInit = []string{"encoding/gob", "github.com/oklog/ulid/v2"}

func TestStart_NoHeavyInitInTheBinary(t *testing.T) {
	for _, bin := range []string{"./cmd/git-ideate"} {
		deps := goDeps(t, bin)
		if !deps["github.com/ideate/git-ideate/internal/corecmd"] {
			t.Fatalf("go list -deps %s printed no module package", bin)
		}
		for _, h := range heavyInit {
			if deps[h] {
				t.Errorf("%s links %s, whose package init every process pays; `go list -deps` shows who imports it", bin, h)
			}
		}
	}
}

// goDeps is `go list -deps pkg` as a set.
func goDeps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	cmd := exec.Command(goTool(), "list", "-deps", pkg)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	return deps
}
