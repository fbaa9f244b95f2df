package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyInit are standard packages whose package init costs every
// git-ideate process start-up time (encoding/gob builds its type tables
// at init, 0.2–0.8 ms measured here). The shipped binary must not link
// them; a cache or codec that wants one writes its own form
// (gates/structure_codec.go) instead. (oklog/ulid's init seeds a
// math/rand source; its cost was measured within noise, see
// docs/PERF-LOG.md, and the design card names the library.)
var heavyInit = []string{"encoding/gob"}

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

// git-ideate is one pure-Go binary: no package it links uses cgo, so it
// builds with CGO_ENABLED=0 for every target and starts without libc.
// (Listed as a default build on a machine with a C compiler would list
// it, with the standard library's pure-Go resolver and user lookup, the
// tags the release builds with.) Tree-sitter, which is C, lives in the
// optional helper cmd/git-ideate-symbols.
func TestOneBinary_NoCgoInGitIdeate(t *testing.T) {
	cmd := exec.Command(goTool(), "list", "-deps", "-tags", "netgo,osusergo",
		"-f", "{{.ImportPath}} {{len .CgoFiles}}", "./cmd/git-ideate")
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/git-ideate: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, cgoFiles, _ := strings.Cut(line, " ")
		n++
		if cgoFiles != "0" || pkg == "C" || pkg == "runtime/cgo" || strings.Contains(pkg, "tree-sitter") {
			t.Errorf("git-ideate links %s, which uses cgo; `go list -deps ./cmd/git-ideate` shows who imports it (tree-sitter belongs in cmd/git-ideate-symbols)", pkg)
		}
	}
	if n < 50 {
		t.Fatalf("go list printed %d packages", n)
	}
	helper := goDeps(t, "./cmd/git-ideate-symbols")
	if !helper["github.com/tree-sitter/go-tree-sitter"] {
		t.Fatal("the helper does not link tree-sitter: the test reads the wrong tree")
	}
}
