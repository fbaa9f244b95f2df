package gates_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/confine"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/worktree"
)

// The project: a Go module with one package, a sprint whose standards.md
// declares a gate matrix, and a story whose plan-ready.md has two boxes of
// T1 and one of T2.
const (
	goMod   = "module example.com/finalproj\n\ngo 1.22\n"
	revGo   = "package strutil\n\n// Reverse returns s reversed.\nfunc Reverse(s string) string {\n\tr := []rune(s)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n"
	revTest = "package strutil\n\nimport \"testing\"\n\nfunc TestReverse_ASCII(t *testing.T) {\n\tif got := Reverse(\"abc\"); got != \"cba\" {\n\t\tt.Fatalf(\"got %q\", got)\n\t}\n}\n\nfunc TestReverse_Empty(t *testing.T) {\n\tif got := Reverse(\"\"); got != \"\" {\n\t\tt.Fatalf(\"got %q\", got)\n\t}\n}\n"
	ready   = "---\r\ntype: plan-ready\r\nstory: S1-01\r\nfrom_red_at: 2026-11-30T10:12:00Z\r\n---\r\n\r\n# S1-01 plan-ready (RED verified at chain/s1-01 @ 5d0e7b2)\r\n\r\n## T1 — Reverse\r\n- [ ] `strutil/reverse_test.go::TestReverse_ASCII` — FAIL: Reverse(\"abc\") = \"shim\" [ ] want \"cba\"\r\n- [ ] `strutil/reverse_test.go::TestReverse_Empty` — FAIL: Reverse(\"\") = \"shim\"\r\n\r\n## T2 — Later\r\n- [ ] `strutil/later_test.go::TestLater` — FAIL: not yet\r\n"
)

func standards(matrix ...string) string {
	return "---\ntype: standards\nsprint: 1\n---\n\n# Standards\n\n## Gate matrix\n\n```sh\n" + strings.Join(matrix, "\n") + "\n```\n"
}

type finalFx struct {
	dir  string
	g    *gitstore.Store
	m    *worktree.Manager
	log  *execlog.Log
	deps gates.FinalDeps
	wt   string // the task's worktree
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newFinalFx commits the project, writes the plan into the main working
// tree (ticks are not committed) and starts S1-01/T1's worktree.
func newFinalFx(t *testing.T, matrix ...string) *finalFx {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	// The go command keeps the user's build cache: gt.NewRepo points HOME
	// at an empty directory, where a cold cache makes `go vet` take
	// minutes on a loaded machine.
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := gt.NewRepo(t)
	t.Setenv("GOCACHE", env[0])
	t.Setenv("GOMODCACHE", env[1])
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOFLAGS", "")
	write(t, filepath.Join(dir, "go.mod"), goMod)
	write(t, filepath.Join(dir, "strutil", "reverse.go"), revGo)
	write(t, filepath.Join(dir, "strutil", "reverse_test.go"), revTest)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "project")
	sprint := filepath.Join(dir, "docs", "agents", "sprint1")
	write(t, filepath.Join(sprint, "standards.md"), standards(matrix...))
	write(t, filepath.Join(sprint, "s1-01-reverse", "plan-ready.md"), ready)
	write(t, filepath.Join(sprint, "s1-01-reverse", "tasks.md"), "---\ntype: tasks\nstory: S1-01\n---\n\n# S1-01 tasks\n\n## T1 — Reverse\n\nFiles: `strutil/**`\n\n## T2 — Later\n\nFiles: `strutil/later*`\n")
	write(t, filepath.Join(dir, ".git", "info", "exclude"), "docs/\n.ideate/\n")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	m := worktree.Open(g)
	task, err := m.Start(t.Context(), worktree.StartInput{Task: "S1-01/T1", Scope: []string{"strutil/**"},
		Tests: []string{"strutil/reverse_test.go::TestReverse_ASCII", "strutil/reverse_test.go::TestReverse_Empty"}})
	if err != nil {
		t.Fatal(err)
	}
	l := execlog.Open(g)
	deps := gates.FinalDeps{PlanDeps: gates.PlanDeps{Git: g, Tasks: m, Exec: l, Root: dir,
		Plan: func(ctx context.Context) (*plan.Sprint, error) { return plan.LoadDir(ctx, dir, plan.Options{}) }},
		Timeout: time.Minute}
	return &finalFx{dir: dir, g: g, m: m, log: l, deps: deps, wt: task.Path}
}

func (fx *finalFx) head(t *testing.T) string { return gt.Git(t, fx.wt, "rev-parse", "HEAD") }

// green stores a GREEN verdict for T1 at the worktree's HEAD.
func (fx *finalFx) green(t *testing.T, result string, tests ...execlog.TestResult) {
	t.Helper()
	if tests == nil {
		tests = []execlog.TestResult{{ID: "strutil/reverse_test.go::TestReverse_ASCII", Outcome: "PASS"},
			{ID: "strutil/reverse_test.go::TestReverse_Empty", Outcome: "PASS"}}
	}
	if _, err := fx.log.Append(t.Context(), execlog.Entry{Task: "S1-01/T1", Attempt: 1, Phase: "green", Event: "verdict",
		Result: result, Commit: fx.head(t), Tests: tests}); err != nil {
		t.Fatal(err)
	}
}

func (fx *finalFx) readyFile() string {
	return filepath.Join(fx.dir, "docs", "agents", "sprint1", "s1-01-reverse", "plan-ready.md")
}

func (fx *finalFx) final(t *testing.T) gates.Verdict {
	t.Helper()
	v, err := gates.Final(fx.deps).Run(t.Context(), gates.Input{Task: "S1-01/T1"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func classes(v gates.Verdict) string {
	var out []string
	for _, r := range v.Reasons {
		out = append(out, r.Class)
	}
	return strings.Join(out, ",")
}

func TestTick_OnlyAfterGreenPass(t *testing.T) {
	fx := newFinalFx(t, "go vet ./...")
	ctx := t.Context()
	// No verdict: refused, the file untouched.
	if _, err := gates.Tick(ctx, fx.deps.PlanDeps, "S1-01/T1"); !apperr.Is(err, gates.NoPass) {
		t.Fatalf("Tick without a verdict: %v", err)
	}
	// A GREEN FAIL is no PASS either.
	fx.green(t, "FAIL")
	if _, err := gates.Tick(ctx, fx.deps.PlanDeps, "S1-01/T1"); !apperr.Is(err, gates.NoPass) {
		t.Fatalf("Tick after a FAIL: %v", err)
	}
	if b, _ := os.ReadFile(fx.readyFile()); string(b) != ready {
		t.Fatal("a refused tick changed plan-ready.md")
	}
	fx.green(t, "PASS")
	res, err := gates.Tick(ctx, fx.deps.PlanDeps, "S1-01/T1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ticked) != 2 || res.Boxes != 2 || res.Commit != fx.head(t) {
		t.Fatalf("Tick: %+v", res)
	}
	b, _ := os.ReadFile(fx.readyFile())
	want := strings.Replace(ready, "- [ ] `strutil/reverse_test.go::TestReverse_ASCII`", "- [x] `strutil/reverse_test.go::TestReverse_ASCII`", 1)
	want = strings.Replace(want, "- [ ] `strutil/reverse_test.go::TestReverse_Empty`", "- [x] `strutil/reverse_test.go::TestReverse_Empty`", 1)
	if string(b) != want {
		t.Fatalf("plan-ready.md after the tick:\n%q\nwant\n%q", b, want)
	}
	// Idempotent.
	if res, err := gates.Tick(ctx, fx.deps.PlanDeps, "S1-01/T1"); err != nil || len(res.Ticked) != 0 {
		t.Fatalf("second Tick: %+v %v", res, err)
	}
	// A new commit in the worktree has no verdict yet: refused again.
	gt.Git(t, fx.wt, "commit", "-q", "--allow-empty", "-m", "more")
	if _, err := gates.Tick(ctx, fx.deps.PlanDeps, "S1-01/T1"); !apperr.Is(err, gates.NoPass) {
		t.Fatalf("Tick at a commit without a verdict: %v", err)
	}
	for _, bad := range []string{"S1-01", "S1-01/X1", "S1-01/T0", ""} {
		if _, err := gates.Tick(ctx, fx.deps.PlanDeps, bad); !apperr.Is(err, apperr.Schema) {
			t.Errorf("Tick(%q): %v", bad, err)
		}
	}
}

func TestFinal_PassAfterGreenAndTicks(t *testing.T) {
	fx := newFinalFx(t, "go vet ./...", `test -z "$(gofmt -l .)"`)
	fx.green(t, "PASS")
	if _, err := gates.Tick(t.Context(), fx.deps.PlanDeps, "S1-01/T1"); err != nil {
		t.Fatal(err)
	}
	v := fx.final(t)
	if v.Result != gates.PASS || v.Commit != fx.head(t) {
		t.Fatalf("final: %s", v)
	}
	tree := gt.Git(t, fx.wt, "rev-parse", "HEAD^{tree}")
	if v.Task != "S1-01/T1" || v.Attempt != 1 || v.Story != "S1-01" || v.Sprint != 1 || v.Tree != tree || v.Base == "" {
		t.Fatalf("the verdict does not place what it judged: %+v", v)
	}
}

func TestFinal_UntickedBox(t *testing.T) {
	fx := newFinalFx(t, "go vet ./...")
	fx.green(t, "PASS")
	v := fx.final(t)
	if v.Result != gates.FAIL || classes(v) != "unticked" {
		t.Fatalf("final with open boxes: %s", v)
	}
	if !strings.Contains(v.Reasons[0].Detail, "plan-ready.md:10") || !strings.Contains(v.Reasons[0].Detail, "plan-ready.md:11") {
		t.Fatalf("the reason does not name the open boxes: %s", v.Reasons[0].Detail)
	}
}

func TestFinal_HandTickedBoxIsCaught(t *testing.T) {
	fx := newFinalFx(t, "go vet ./...")
	// Ticked by hand, no GREEN PASS at HEAD.
	b, _ := os.ReadFile(fx.readyFile())
	os.WriteFile(fx.readyFile(), []byte(strings.ReplaceAll(string(b), "- [ ] `strutil/reverse", "- [x] `strutil/reverse")), 0o644)
	v := fx.final(t)
	if v.Result != gates.FAIL || classes(v) != "no_green,unbacked_tick" {
		t.Fatalf("final with hand ticks: %s", v)
	}
	// A PASS at an older commit does not back ticks at a newer one.
	fx.green(t, "PASS")
	gt.Git(t, fx.wt, "commit", "-q", "--allow-empty", "-m", "after the pass")
	if v := fx.final(t); v.Result != gates.FAIL || classes(v) != "no_green,unbacked_tick" {
		t.Fatalf("final with ticks backed only at an older commit: %s", v)
	}
}

func TestFinal_SkipInGreenRun(t *testing.T) {
	fx := newFinalFx(t, "go vet ./...")
	fx.green(t, "PASS", execlog.TestResult{ID: "strutil/reverse_test.go::TestReverse_ASCII", Outcome: "PASS"},
		execlog.TestResult{ID: "strutil/reverse_test.go::TestReverse_Empty", Outcome: "SKIP"})
	if _, err := gates.Tick(t.Context(), fx.deps.PlanDeps, "S1-01/T1"); err != nil {
		t.Fatal(err)
	}
	if v := fx.final(t); v.Result != gates.FAIL || classes(v) != "skip" || !strings.Contains(v.Reasons[0].Detail, "TestReverse_Empty") {
		t.Fatalf("final after a skipped test: %s", v)
	}
}

func TestFinal_Matrix(t *testing.T) {
	for _, tc := range []struct {
		name, cmd, class string
		result           gates.Result
	}{
		{"exit 1", "go vet ./does-not-exist/...", "matrix", gates.FAIL},
		{"shell exit", `test -z "not empty"`, "matrix", gates.FAIL},
		{"unknown program", "no-such-program-x1 --flag", "matrix_unrunnable", gates.UNVERIFIABLE},
		{"unknown in shell", "no-such-program-x1 | cat; exit 127", "matrix_unrunnable", gates.UNVERIFIABLE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFinalFx(t, "go vet ./...", tc.cmd)
			fx.green(t, "PASS")
			if _, err := gates.Tick(t.Context(), fx.deps.PlanDeps, "S1-01/T1"); err != nil {
				t.Fatal(err)
			}
			v := fx.final(t)
			if v.Result != tc.result || classes(v) != tc.class {
				t.Fatalf("final with `%s`: %s", tc.cmd, v)
			}
		})
	}
}

func TestFinal_MatrixTimeoutKillsTheGroup(t *testing.T) {
	fx := newFinalFx(t, "sh -c 'sleep 30 & sleep 30; wait'")
	fx.deps.Timeout = 300 * time.Millisecond
	fx.green(t, "PASS")
	if _, err := gates.Tick(t.Context(), fx.deps.PlanDeps, "S1-01/T1"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v := fx.final(t)
	if v.Result != gates.UNVERIFIABLE || classes(v) != "matrix_timeout" {
		t.Fatalf("final with a hanging matrix: %s", v)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the gate took %s: the group was not killed", d)
	}
}

// The matrix runs the task's code (go test runs the worker's tests), so
// it runs confined as the gates' test runs do: a test whose code writes a
// hook into the repository's git directory and a file beside the
// worktree changes neither when the final gate runs it.
func TestFinal_MatrixRunsConfined(t *testing.T) {
	if !confine.Available() {
		t.Skip("no confinement here: " + confine.Mode())
	}
	fx := newFinalFx(t, "go test -count=1 ./...")
	hook := filepath.Join(fx.dir, ".git", "hooks", "post-checkout")
	beside := filepath.Join(filepath.Dir(fx.wt), "planted")
	evil := fmt.Sprintf("package strutil\n\nimport \"os\"\n\nfunc init() {\n\tos.WriteFile(%q, []byte(\"#!/bin/sh\\necho owned\\n\"), 0o755)\n\tos.WriteFile(%q, []byte(\"x\"), 0o644)\n}\n", hook, beside)
	write(t, filepath.Join(fx.wt, "strutil", "evil_test.go"), evil)
	gt.Git(t, fx.wt, "add", "-A")
	gt.Git(t, fx.wt, "commit", "-q", "-m", "a test that writes outside")
	fx.green(t, "PASS")
	if _, err := gates.Tick(t.Context(), fx.deps.PlanDeps, "S1-01/T1"); err != nil {
		t.Fatal(err)
	}
	v := fx.final(t)
	for _, f := range []string{hook, beside} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the final gate's matrix run wrote %s (verdict %s)", f, v)
		}
	}
}

func TestFinal_UnverifiableWithoutFacts(t *testing.T) {
	// No gate matrix.
	fx := newFinalFx(t)
	fx.green(t, "PASS")
	if _, err := gates.Tick(t.Context(), fx.deps.PlanDeps, "S1-01/T1"); err != nil {
		t.Fatal(err)
	}
	if v := fx.final(t); v.Result != gates.UNVERIFIABLE || classes(v) != "no_matrix" {
		t.Fatalf("final without a matrix: %s", v)
	}
	// No plan-ready.md.
	fx = newFinalFx(t, "go vet ./...")
	fx.green(t, "PASS")
	os.Remove(fx.readyFile())
	if v := fx.final(t); v.Result != gates.UNVERIFIABLE || classes(v) != "no_plan_ready" {
		t.Fatalf("final without plan-ready.md: %s", v)
	}
	// No plan at all.
	os.RemoveAll(filepath.Join(fx.dir, "docs"))
	if v := fx.final(t); v.Result != gates.UNVERIFIABLE || classes(v) != "no_plan" {
		t.Fatalf("final without a plan: %s", v)
	}
	// No task, an unknown task.
	if v, _ := gates.Final(fx.deps).Run(t.Context(), gates.Input{}); v.Result != gates.UNVERIFIABLE {
		t.Fatalf("final without a task: %s", v)
	}
	if v, _ := gates.Final(fx.deps).Run(t.Context(), gates.Input{Task: "S1-09/T1"}); v.Result != gates.UNVERIFIABLE || classes(v) != "no_contract" {
		t.Fatalf("final of an unknown task: %s", v)
	}
}

func TestFinal_UncommittedWork(t *testing.T) {
	fx := newFinalFx(t, "go vet ./...")
	fx.green(t, "PASS")
	write(t, filepath.Join(fx.wt, "strutil", "extra.go"), "package strutil\n")
	if v := fx.final(t); v.Result != gates.FAIL || classes(v) != "uncommitted" {
		t.Fatalf("final with uncommitted work: %s", v)
	}
}
