package scaffold_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/confine"
	"github.com/ideate/git-ideate/internal/scaffold"
)

// formatter finds a formatter on PATH, or among the node runners CI
// installs (GIT_IDEATE_NODE_RUNNERS), or skips; it returns its path.
func formatter(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if d := os.Getenv("GIT_IDEATE_NODE_RUNNERS"); d != "" {
		p := filepath.Join(d, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("%s is not on PATH (apt-get install black; npm install prettier@3)", name)
	return ""
}

// check runs a formatter's own check over a file: it must find nothing to
// change.
func check(t *testing.T, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// A shim written carelessly gives its signature to the stub: the stub
// file is written as black writes it (black --check finds nothing), each
// action is reported once and black ran once over the files written; with
// no formatter found the file stays as the scaffold wrote it.
func TestRun_PythonStubIsBlackClean(t *testing.T) {
	formatter(t, "black")
	files := map[string]string{
		"calc/__init__.py":        "",
		"calc/zz_agentic_shim.py": "# agentic:shim\n\ndef add(a,b):\n  return 0\ndef sub( a, b ):\n  return 0\n",
		"tests/test_add.py":       "from calc.ops import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
	}
	in := scaffold.Input{Declared: []string{"calc.ops.add", "calc.ops.sub"}, Files: []string{"calc/ops.py", "tests/test_add.py"}}
	dir := t.TempDir()
	write(t, dir, files)
	r := run(t, dir, in)
	if got := ops(r); got != "create calc/ops.py calc.ops.add; create calc/ops.py calc.ops.sub; delete calc/zz_agentic_shim.py calc.zz_agentic_shim.add; delete calc/zz_agentic_shim.py calc.zz_agentic_shim.sub" {
		t.Fatalf("actions %s", got)
	}
	if len(r.Formatted) != 1 || r.Formatted[0].Tool != "black" || strings.Join(r.Formatted[0].Paths, " ") != "calc/ops.py" || r.Formatted[0].Error != "" {
		t.Fatalf("formatted: %+v", r.Formatted)
	}
	check(t, dir, "black", "--check", "--quiet", "calc/ops.py")
	if src := read(t, dir+"/calc/ops.py"); !strings.Contains(src, "def add(a, b):\n    raise NotImplementedError(") {
		t.Errorf("stub file:\n%s", src)
	}

	bare := t.TempDir()
	write(t, bare, files)
	in.LookPath = func(string) (string, error) { return "", errors.New("none") }
	r = run(t, bare, in)
	if len(r.Formatted) != 0 || !strings.Contains(read(t, bare+"/calc/ops.py"), "def add(a,b):") {
		t.Errorf("without a formatter: %+v\n%s", r.Formatted, read(t, bare+"/calc/ops.py"))
	}
}

// The same for JavaScript with prettier.
func TestRun_JavaScriptStubIsPrettierClean(t *testing.T) {
	prettier := formatter(t, "prettier")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"package.json":           `{"name":"slugs","private":true,"type":"module"}` + "\n",
		"src/zz_agentic_shim.js": "// agentic:shim\nexport function slugify(s,   sep){ return '' }\n",
		"src/slug.test.js":       "import { slugify } from './slug.js';\n",
	})
	r := run(t, dir, scaffold.Input{Declared: []string{"slugify"}, Files: []string{"src/slug.js", "src/slug.test.js"},
		LookPath: func(name string) (string, error) {
			if name == "prettier" {
				return prettier, nil
			}
			return exec.LookPath(name)
		}})
	if got := ops(r); got != "create src/slug.js src/slug.slugify; delete src/zz_agentic_shim.js src/zz_agentic_shim.slugify" {
		t.Fatalf("actions %s", got)
	}
	if len(r.Formatted) != 1 || r.Formatted[0].Tool != "prettier" || r.Formatted[0].Error != "" {
		t.Fatalf("formatted: %+v", r.Formatted)
	}
	check(t, dir, prettier, "--check", "src/slug.js")
}

// A formatter runs the project's configuration, which a worker may have
// written: it can change the worktree, not what lies outside it (here
// a file beside the worktree stands for the main checkout).
func TestRun_FormatterIsConfinedToTheWorktree(t *testing.T) {
	if !confine.Available() {
		t.Skip("no operating-system confinement here")
	}
	outside := filepath.Join(t.TempDir(), "main-checkout-file")
	bin := t.TempDir()
	fake := filepath.Join(bin, "prettier")
	script := "#!/bin/sh\nfor a; do f=$a; done\necho '// formatted' >> \"$f\"\necho escaped > " + outside + " || exit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"package.json":           `{"name":"slugs","private":true,"type":"module"}` + "\n",
		"src/zz_agentic_shim.js": "// agentic:shim\nexport function slugify(s, sep) { return '' }\n",
		"src/slug.test.js":       "import { slugify } from './slug.js';\n",
	})
	r := run(t, dir, scaffold.Input{Declared: []string{"slugify"}, Files: []string{"src/slug.js", "src/slug.test.js"},
		LookPath: func(name string) (string, error) {
			if name == "prettier" {
				return fake, nil
			}
			return "", errors.New("none")
		}})
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the formatter wrote outside the worktree")
	}
	if !strings.Contains(read(t, dir+"/src/slug.js"), "// formatted") {
		t.Errorf("the formatter did not write the worktree: %s", read(t, dir+"/src/slug.js"))
	}
	if len(r.Formatted) != 1 || r.Formatted[0].Error == "" {
		t.Errorf("the refused write is not reported: %+v", r.Formatted)
	}
}
