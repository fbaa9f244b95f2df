package scaffold_test

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/scaffold"
	"github.com/ideate/git-ideate/internal/testrun"
)

var ctx = context.Background()

func write(t *testing.T, dir string, files map[string]string) []string {
	t.Helper()
	var list []string
	for p, s := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return list
}

// listFiles is the source files under dir, the way WorkTreeFiles lists a
// worktree's.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func run(t *testing.T, dir string, in scaffold.Input) *scaffold.Result {
	t.Helper()
	in.Dir = dir
	in.Paths = listFiles(t, dir)
	r, err := scaffold.Run(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ops(r *scaffold.Result) string {
	var out []string
	for _, a := range r.Actions {
		out = append(out, a.Op+" "+a.Path+" "+a.Symbol)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const goTest = `package strutil

import "testing"

func TestReverse_ASCII(t *testing.T) {
	if got := Reverse("abc"); got != "cba" {
		t.Fatalf("Reverse(abc) = %q", got)
	}
}

func TestWords(t *testing.T) {
	if got := Words(Text("a b")); len(got) != 2 {
		t.Fatalf("Words = %v", got)
	}
}
`

// TestRun_Go: the shim file goes, one stub per symbol comes, the package
// still compiles, the declared test ends FAIL_STUB, and a second run is a
// no-op; an implemented body is never overwritten.
func TestRun_Go(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"go.mod":                              "module example.com/m\n\ngo 1.21\n",
		"strutil/reverse_test.go":             goTest,
		"strutil/words.go":                    "package strutil\n\nimport \"strings\"\n\n// Words is implemented already.\nfunc Words(t Text) []string { return strings.Fields(string(t)) }\n",
		"strutil/zz_agentic_shim_s1_01_t1.go": "// agentic:shim\npackage strutil\n\nimport \"strings\"\n\ntype Text string\n\nfunc Reverse(s string) string { return strings.ToUpper(s) }\n\nfunc Words(t Text) []string { return nil }\n",
	})
	in := scaffold.Input{Declared: []string{"strutil.Reverse", "strutil.Words"},
		Files: []string{"strutil/reverse.go", "strutil/reverse_test.go", "strutil/types.go"}}
	r := run(t, dir, in)
	want := "create strutil/reverse.go strutil.Reverse; create strutil/reverse.go strutil.Text; delete strutil/zz_agentic_shim_s1_01_t1.go strutil.Reverse; delete strutil/zz_agentic_shim_s1_01_t1.go strutil.Text; delete strutil/zz_agentic_shim_s1_01_t1.go strutil.Words"
	if got := ops(r); got != want {
		t.Fatalf("actions:\n%s\nwant:\n%s", got, want)
	}
	if len(r.Undecided) != 0 {
		t.Fatalf("undecided %+v", r.Undecided)
	}
	src := read(t, filepath.Join(dir, "strutil/reverse.go"))
	if !strings.Contains(src, `panic("SUB-AGENT-TODO: implement strutil.Reverse")`) || strings.Contains(src, "ToUpper") || strings.Contains(src, "import") {
		t.Fatalf("stub file:\n%s", src)
	}
	if w := read(t, filepath.Join(dir, "strutil/words.go")); !strings.Contains(w, "strings.Fields") {
		t.Fatalf("implemented Words touched:\n%s", w)
	}
	if _, err := os.Stat(filepath.Join(dir, "strutil/zz_agentic_shim_s1_01_t1.go")); !os.IsNotExist(err) {
		t.Fatalf("shim not deleted: %v", err)
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", "-run", "^TestReverse_ASCII$", "./strutil/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, _ := cmd.Output()
	rep, err := testrun.Classify(bytes.NewReader(out), testrun.Options{Format: testrun.GoJSON,
		Declared: []string{"example.com/m/strutil::TestReverse_ASCII"}})
	if err != nil {
		t.Fatalf("classify: %v\n%s", err, out)
	}
	if res, _ := rep.Result("example.com/m/strutil::TestReverse_ASCII"); res.Outcome != testrun.FailStub {
		t.Fatalf("outcome %s (%s)\n%s", res.Outcome, res.Reason, out)
	}
	if again := run(t, dir, in); len(again.Actions) != 0 || len(again.Undecided) != 0 {
		t.Fatalf("second run: %s %+v", ops(again), again.Undecided)
	}
	if src2 := read(t, filepath.Join(dir, "strutil/reverse.go")); src2 != src {
		t.Fatalf("second run changed the stub file")
	}
}

// TestRun_GoMarkedDefinition: a single marked definition is cut from a
// file that keeps its other code; its stub lands in the task's file.
func TestRun_GoMarkedDefinition(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"p/p.go": "package p\n\n// Keep stays.\nfunc Keep() int { return 1 }\n\n// Size is a RED shim. agentic:shim\nfunc Size(b []byte) int { return -1 }\n",
	})
	r := run(t, dir, scaffold.Input{Declared: []string{"p.Size"}, Files: []string{"p/size.go"}})
	if got := ops(r); got != "create p/size.go p.Size; update p/p.go p.Size" {
		t.Fatalf("actions %s", got)
	}
	if p := read(t, filepath.Join(dir, "p/p.go")); strings.Contains(p, "Size") || !strings.Contains(p, "func Keep") {
		t.Fatalf("p.go:\n%s", p)
	}
	if s := read(t, filepath.Join(dir, "p/size.go")); !strings.Contains(s, "func Size(b []byte) int {\n\tpanic(") {
		t.Fatalf("size.go:\n%s", s)
	}
}

// TestRun_UndecidedWithoutSignature: a declared symbol with no shim and
// no definition is left to the post-planner, and nothing is written.
func TestRun_UndecidedWithoutSignature(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"p/p.go": "package p\n"})
	r := run(t, dir, scaffold.Input{Declared: []string{"p.Missing"}, Files: []string{"p/p.go"}})
	if len(r.Actions) != 0 || len(r.Undecided) != 1 || r.Undecided[0].Symbol != "p.Missing" {
		t.Fatalf("%s %+v", ops(r), r.Undecided)
	}
}

// TestRun_Python: the stub imports and the declared test ends FAIL_STUB
// under pytest.
func TestRun_Python(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-m", "pytest", "--version").Run(); err != nil {
		t.Skip("pytest not installed")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"calc/__init__.py":        "",
		"calc/zz_agentic_shim.py": "# agentic:shim\n\ndef add(a, b):\n    return 0\n",
		"tests/test_add.py":       "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
	})
	// The test imports calc.ops: the task's file for the stub.
	r := run(t, dir, scaffold.Input{Declared: []string{"calc.ops.add"}, Files: []string{"calc/ops.py", "tests/test_add.py"}})
	if got := ops(r); got != "create calc/ops.py calc.ops.add; delete calc/zz_agentic_shim.py calc.zz_agentic_shim.add" {
		t.Fatalf("actions %s", got)
	}
	junit := filepath.Join(t.TempDir(), "r.xml")
	cmd := exec.Command("/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml="+junit, "tests/test_add.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, _ := cmd.CombinedOutput()
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatalf("no report: %v\n%s", err, out)
	}
	rep, err := testrun.Classify(bytes.NewReader(x), testrun.Options{Format: testrun.JUnitXML, Dialect: "pytest",
		Declared: []string{"tests/test_add.py::test_add"}})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rep.Result("tests/test_add.py::test_add"); res.Outcome != testrun.FailStub {
		t.Fatalf("outcome %s (%s)\n%s", res.Outcome, res.Reason, out)
	}
	if again := run(t, dir, scaffold.Input{Declared: []string{"calc.ops.add"}, Files: []string{"calc/ops.py"}}); len(again.Actions) != 0 {
		t.Fatalf("second run: %s", ops(again))
	}
}

// TestRun_JavaScript: the stub module loads in node and the function
// throws the marker.
func TestRun_JavaScript(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"src/zz_agentic_shim.mjs": "// agentic:shim\nexport function slugify(s) {\n  return \"\";\n}\n",
	})
	r := run(t, dir, scaffold.Input{Declared: []string{"slugify"}, Files: []string{"src/slug.mjs", "src/slug.test.mjs"}})
	if got := ops(r); got != "create src/slug.mjs src/slug.slugify; delete src/zz_agentic_shim.mjs src/zz_agentic_shim.slugify" {
		t.Fatalf("actions %s", got)
	}
	cmd := exec.Command("node", "-e", `import("./src/slug.mjs").then(m => { try { m.slugify("a") } catch (e) { console.log(e.message) } })`)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUB-AGENT-TODO") {
		t.Fatalf("node: %v %s", err, out)
	}
}

// The scaffold writes Go as gofmt does — a new stub file, a stub
// appended to an existing file, a file a definition was cut from — even
// when the shims it copies were not formatted; each action is reported
// once.
func TestRun_GoOutputIsGofmtClean(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"go.mod":                  "module example.com/m\n\ngo 1.21\n",
		"strutil/reverse_test.go": goTest,
		"strutil/words.go":        "package strutil\n\n// Words is implemented already.\nfunc Words(s string) []string { return nil }\n",
		"strutil/zz_agentic_shim_s1_01_t1.go": "// agentic:shim\npackage strutil\n\nfunc   Reverse(s string)   string {\n        return s }\n\n" +
			"func Upper(s string) string{ return s}\n",
	})
	in := scaffold.Input{Declared: []string{"strutil.Reverse", "strutil.Upper"},
		Files: []string{"strutil/reverse.go", "strutil/words.go"}}
	r := run(t, dir, in)
	seen := map[string]bool{}
	for _, a := range r.Actions {
		k := a.Op + " " + a.Path + " " + a.Symbol
		if seen[k] {
			t.Errorf("action reported twice: %s", k)
		}
		seen[k] = true
	}
	files, _ := filepath.Glob(filepath.Join(dir, "strutil", "*.go"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if g, err := format.Source(b); err != nil || !bytes.Equal(g, b) {
			t.Errorf("%s is not gofmt-clean (%v):\n%s", filepath.Base(f), err, b)
		}
	}
}
