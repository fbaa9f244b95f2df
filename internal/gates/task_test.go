package gates_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/worktree"
)

var ctx = context.Background()

const goRunner = `
## Test runners

### go

- Extensions: ` + "`.go`" + `
- Test files: ` + "`**/*_test.go`" + `
- Run: ` + "`go test -json -count=1 -run '{go_regex}' {packages}`" + `
- Format: ` + "`go-test-json`" + `
- Isolate on crash: yes
`

// The base of the Go project: strutil with Upper and its passing test.
var goBase = map[string]string{
	"go.mod":                "module example.com/m\n\ngo 1.21\n",
	"README.md":             "m\n",
	"strutil/upper.go":      "package strutil\n\nimport \"strings\"\n\n// Upper upper-cases s.\nfunc Upper(s string) string { return strings.ToUpper(s) }\n",
	"strutil/upper_test.go": "package strutil\n\nimport \"testing\"\n\nfunc TestUpper(t *testing.T) {\n\tif Upper(\"a\") != \"A\" {\n\t\tt.Fatal(\"Upper(a) != A\")\n\t}\n}\n",
}

const reverseTest = `package strutil

import "testing"

func TestReverse_ASCII(t *testing.T) {
	if got := Reverse("abc"); got != "cba" {
		t.Fatalf("Reverse(abc) = %q, want cba", got)
	}
}
`

const reverseShim = "package strutil\n\n// Reverse is a RED shim. agentic:shim\nfunc Reverse(s string) string { return s }\n"
const reverseStub = "package strutil\n\n// Reverse reverses s.\nfunc Reverse(s string) string { panic(\"SUB-AGENT-TODO: Reverse\") }\n"
const reverseImpl = "package strutil\n\n// Reverse reverses s.\nfunc Reverse(s string) string {\n\tr := []rune(s)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n"

type fixture struct {
	dir string
	g   *gitstore.Store
	m   *worktree.Manager
	reg *gates.Registry
	log gates.VerdictLog
}

func needGo(t testing.TB) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if body == "" {
			os.Remove(full)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newFixture makes a repository holding the example plan set (its
// standards with runner) and files, committed as the base.
// withTasks is files with the example S1-01's tasks.md holding tasks T3
// to T<n> besides its own: a table test works one task per case, and the
// gates judge only tasks of the plan.
func withTasks(t testing.TB, files map[string]string, n int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "plan", "testdata", "example", "docs", "agents", "sprint1", "s1-01-rune-helpers", "tasks.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 3; i <= n; i++ {
		s += fmt.Sprintf("\n## T%d — case %d\n\nFiles: `strutil/**`, `textutil/**`\nDepends on: none\n", i, i)
	}
	out := map[string]string{"docs/agents/sprint1/s1-01-rune-helpers/tasks.md": s}
	for k, v := range files {
		out[k] = v
	}
	return out
}

func newFixture(t testing.TB, runner string, files map[string]string) *fixture {
	t.Helper()
	dir := gt.NewRepo(t)
	src := filepath.Join("..", "plan", "testdata", "example", "docs")
	if out, err := exec.Command("cp", "-r", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	std := filepath.Join(dir, "docs", "agents", "sprint1", "standards.md")
	b, _ := os.ReadFile(std)
	os.WriteFile(std, plantest.ReplaceRunners(b, runner), 0o644)
	writeFiles(t, dir, files)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f := &fixture{dir: dir, g: g}
	var err2 error
	if f.reg, f.log, f.m, err2 = buildGates(g, dir); err2 != nil {
		t.Fatal(err2)
	}
	return f
}

// buildGates is what the composition root does: the task gates over the
// repository at dir, with the execution log and the per-task lock.
func buildGates(g *gitstore.Store, dir string) (*gates.Registry, gates.VerdictLog, *worktree.Manager, error) {
	m := worktree.Open(g)
	log := gates.ExecLog(execlog.Open(g))
	d := gates.Deps{Git: g, Tasks: m, Log: log, Plan: func(ctx context.Context) (*plan.Sprint, error) {
		return plan.Load(ctx, os.DirFS(dir), plan.Options{Root: plan.DefaultRoot})
	}, Symbols: gates.ScaffoldSymbols(g)}
	reg := gates.NewRegistry()
	reg.Lock = gates.TaskLock(g)
	for name, g := range map[gates.Name]gates.Gate{"red": gates.Red(d), "scaffold": gates.Scaffold(d), "green": gates.Green(d), "structure": gates.Structure(d)} {
		if err := reg.Register(name, g); err != nil {
			return nil, nil, nil, err
		}
	}
	return reg, log, m, nil
}

func (f *fixture) start(t testing.TB, task string, tests ...string) string {
	t.Helper()
	tk, err := f.m.Start(ctx, worktree.StartInput{Task: task, Scope: []string{"strutil/**", "tests/**", "calc.py"}, Tests: tests})
	if err != nil {
		t.Fatal(err)
	}
	return tk.Path
}

func commit(t testing.TB, wt, msg string, files map[string]string) string {
	t.Helper()
	writeFiles(t, wt, files)
	gt.Git(t, wt, "add", "-A")
	gt.Git(t, wt, "commit", "-q", "--allow-empty", "-m", msg)
	return gt.Git(t, wt, "rev-parse", "HEAD")
}

func (f *fixture) judge(t testing.TB, name gates.Name, task string) gates.Verdict {
	t.Helper()
	v, err := gates.Judge(ctx, f.reg, f.log, name, gates.Input{Task: task})
	if err != nil {
		t.Fatalf("judge %s %s: %v", name, task, err)
	}
	return v
}

// withoutCost is rs less the pinning check's cost note.
func withoutCost(rs []gates.Reason) []gates.Reason {
	var out []gates.Reason
	for _, r := range rs {
		if r.Class != gates.ClassPinCost {
			out = append(out, r)
		}
	}
	return out
}

func reasonClasses(v gates.Verdict) string {
	var c []string
	for _, r := range v.Reasons {
		c = append(c, r.Class)
	}
	return strings.Join(c, ",")
}

// want checks v's result and that one of its reasons has class, or, with
// class "", that it has none but the pinning check's cost note.
func want(t testing.TB, v gates.Verdict, result gates.Result, class string) {
	t.Helper()
	if v.Result != result || !strings.Contains(","+reasonClasses(v)+",", ","+class+",") && class != "" || class == "" && len(withoutCost(v.Reasons)) != 0 {
		t.Errorf("verdict %s, want %s %s", v.String(), result, class)
	}
}

func mustHash(t testing.TB, s string) gitstore.Hash {
	t.Helper()
	h, err := gitstore.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
