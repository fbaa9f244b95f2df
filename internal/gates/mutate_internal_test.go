package gates

import (
	"context"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/symbols"
)

func schemaOf(t *testing.T, p, src string) string {
	t.Helper()
	f, err := symbols.Parse(context.Background(), p, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var ts []bodyTarget
	for i, d := range f.Defs {
		if d.Kind.Callable() {
			ts = append(ts, bodyTarget{Sym: d, ID: i + 1, Zero: zeroValues(d)[0]})
		}
	}
	out, skipped, err := mutantSchema(p, []byte(src), ts)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("%s: skipped %v, err %v", p, skipped, err)
	}
	return string(out)
}

// Every result of every kind of Go function gets its exact zero value,
// and the file still parses and formats.
func TestMutantSchema_Go(t *testing.T) {
	src := `package q

import "errors"

type P struct{ X int }

func A() int                        { return 1 }
func B() (string, error)            { return "", errors.New("x") }
func C() (n, m int, ok bool)        { return 1, 2, true }
func D() P                          { return P{1} }
func E() *P                         { return &P{} }
func F[T any](v T) T                { return v }
func (p *P) G() []int               { return nil }
func (p P) H() (map[string]int, [2]byte) { return nil, [2]byte{} }
func I()                            {}
`
	out := schemaOf(t, "q/q.go", src)
	for _, w := range []string{
		`import ideatemutantos "os"`,
		`if ideatemutantos.Getenv("IDEATE_MUTANT") == "2" {` + "\n\t\treturn 0\n",
		"return \"\", nil\n",
		"return 0, 0, false\n",
		"return *new(P)\n",
		"return nil\n",
		"return *new(T)\n",
		"return nil, *new([2]byte)\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("schema lacks %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "ideatemutantos.Getenv") != 9 {
		t.Errorf("%d guards, want 9:\n%s", strings.Count(out, "ideatemutantos.Getenv"), out)
	}
}

// Python gets its guard as the block's first statement, indented, with a
// zero value read from the annotation; JS and TS after the opening brace.
func TestMutantSchema_PythonTS(t *testing.T) {
	py := schemaOf(t, "calc.py", "def add(a, b):\n    return a + b\n\n\nclass C:\n    def n(self) -> int:\n        \"\"\"doc\"\"\"\n        return 3\n")
	if !strings.Contains(py, "def add(a, b):\n    if __import__(\"os\").environ.get(\"IDEATE_MUTANT\") == \"1\":\n        return None\n    return a + b") ||
		!strings.Contains(py, "    def n(self) -> int:\n        if __import__(\"os\").environ.get(\"IDEATE_MUTANT\") == \"3\":\n            return 0\n") {
		t.Errorf("python schema:\n%s", py)
	}
	ts := schemaOf(t, "src/q.ts", "export function len(s: string): number {\n  return s.length;\n}\nexport function name(): string {\n  return \"x\";\n}\n")
	if !strings.Contains(ts, `{ if (globalThis.process?.env?.IDEATE_MUTANT === "1") return 0;`) || !strings.Contains(ts, `return "";`) {
		t.Errorf("ts schema:\n%s", ts)
	}
	js := schemaOf(t, "src/q.js", "export function len(s) {\n  return s.length;\n}\n")
	if !strings.Contains(js, "return undefined;") {
		t.Errorf("js schema:\n%s", js)
	}
}
