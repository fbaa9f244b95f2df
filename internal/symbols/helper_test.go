package symbols

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestMain builds the tree-sitter helper, as the release puts it beside
// git-ideate, and names it through HelperEnv (with -trimpath, as the
// release builds it, so that tree-sitter's C is compiled once for both). Where go builds without cgo
// there is no helper, and the tests check the fallback reader instead; a
// cgo toolchain that cannot build the helper is a failure.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "symbols-helper-")
	if err != nil {
		panic(err)
	}
	cgo, _ := exec.Command("go", "env", "CGO_ENABLED").Output()
	if strings.TrimSpace(string(cgo)) == "1" {
		bin := filepath.Join(dir, HelperName)
		if out, err := exec.Command("go", "build", "-trimpath", "-o", bin, "../../cmd/git-ideate-symbols").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build of the helper: %v\n%s", err, out)
			os.Exit(1)
		}
		os.Setenv(HelperEnv, bin)
	} else {
		os.Setenv(HelperEnv, "off")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Files parsed from many goroutines at once (the structure gate's
// workers) each get their own answer, from at most GOMAXPROCS helpers.
func TestHelper_ParallelParses(t *testing.T) {
	if Weaker() {
		t.Skip("built without cgo: no helper")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p, src := range samples {
				f, err := Parse(context.Background(), p, []byte(src))
				if err != nil {
					errs <- err
					return
				}
				if f.Weaker || strings.Join(keys(f.Defs), "\n") != strings.Join(sampleWant[p], "\n") {
					errs <- fmt.Errorf("%s: weaker %v, defs %v", p, f.Weaker, keys(f.Defs))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	helpers.mu.Lock()
	defer helpers.mu.Unlock()
	if helpers.running < 1 || helpers.running > runtime.GOMAXPROCS(0) || len(helpers.idle) != helpers.running {
		t.Fatalf("%d helpers running, %d idle after the parses", helpers.running, len(helpers.idle))
	}
}

// A file with syntax errors still gets the definitions tree-sitter could
// read, and says so.
func TestHelper_SyntaxErrorSaysSo(t *testing.T) {
	if Weaker() {
		t.Skip("built without cgo: no helper")
	}
	f, err := Parse(context.Background(), "a.py", []byte("def ok():\n    return 1\n\ndef broken(:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Weaker || f.ParseError == "" || len(f.Defs) == 0 || f.Defs[0].Name != "ok" {
		t.Fatalf("weaker %v, parse error %q, defs %v", f.Weaker, f.ParseError, keys(f.Defs))
	}
}
