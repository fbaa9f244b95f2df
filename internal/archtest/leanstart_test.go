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
	for _, bin := range []string{"./cmd/git-ideate", "./cmd/git-ideate-full"} {
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

// leanExcluded are what the lean git-ideate binary must not link: kong
// (its os/user import makes a default build a cgo binary), cgo itself
// (libc and cgo's runtime start before main: 1.3 ms a call here), the
// resolver, and the packages that pull in tree-sitter, the JUnit reader
// and the Go parser. A command that needs one runs in git-ideate-full.
var leanExcluded = []string{
	"github.com/alecthomas/kong", "runtime/cgo", "os/user", "net",
	"github.com/tree-sitter/go-tree-sitter", "encoding/xml", "go/parser",
	"github.com/ideate/git-ideate/internal/gates",
	"github.com/ideate/git-ideate/internal/hooks",
	"github.com/ideate/git-ideate/internal/mcpserver",
}

func TestLeanStart_TheLeanBinaryLinksNoCgoKongOrGates(t *testing.T) {
	deps := goDeps(t, "./cmd/git-ideate")
	if !deps["github.com/ideate/git-ideate/internal/board"] {
		t.Fatal("go list -deps ./cmd/git-ideate lists no board: the lean binary runs the board commands")
	}
	for _, x := range leanExcluded {
		if deps[x] {
			t.Errorf("the lean git-ideate binary links %s; `go list -deps ./cmd/git-ideate` shows who imports it (a command needing it belongs in git-ideate-full)", x)
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
