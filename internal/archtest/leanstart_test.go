package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyInit are standard packages whose package init costs every
// git-ideate process start-up time (issue 19: encoding/gob builds its
// type tables at init, 0.2–0.8 ms measured here; oklog/ulid seeds a
// math/rand source at init, 0.07 ms). The shipped binary must not link
// them; a cache or codec that wants one writes its own form
// (gates/structure_codec.go, record/id.go) instead.
var heavyInit = []string{"encoding/gob", "github.com/oklog/ulid/v2"}

func TestLeanStart_NoHeavyInitInTheBinary(t *testing.T) {
	cmd := exec.Command(goTool(), "list", "-deps", "./cmd/git-ideate")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/ideate/git-ideate/internal/gates"] {
		t.Fatalf("go list -deps printed no module package:\n%s", out)
	}
	for _, h := range heavyInit {
		if deps[h] {
			t.Errorf("the binary links %s, whose package init every process pays; `go list -deps` shows who imports it", h)
		}
	}
}
