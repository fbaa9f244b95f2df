package gates_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/worktree"
)

// pinTasks is an S1-01 tasks.md whose T1 declares syms.
func pinTasks(syms ...string) string {
	return "# S1-01 tasks\n\n## T1 — the task\n\nFiles: `src/**`, `calc.py`\nSymbols: `" + strings.Join(syms, "`, `") + "`\nDepends on: none\n"
}

// langGreen takes S1-01/T1 through RED (red files) to GREEN (green
// files) in a worktree scoped to src/** and calc.py, and judges GREEN.
func langGreen(t *testing.T, f *fixture, tests []string, red, green map[string]string, link string) gates.Verdict {
	t.Helper()
	tk, err := f.m.Start(ctx, worktree.StartInput{Task: "S1-01/T1", Scope: []string{"src/**", "calc.py", "tests/**"}, Tests: tests})
	if err != nil {
		t.Fatal(err)
	}
	if link != "" {
		if err := os.Symlink(link, filepath.Join(tk.Path, "node_modules")); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, tk.Path, "red", red)
	if v := f.judge(t, "red", "S1-01/T1"); v.Result != gates.PASS {
		t.Fatalf("red: %s", v)
	}
	commit(t, tk.Path, "green", green)
	v := f.judge(t, "green", "S1-01/T1")
	for _, r := range v.Reasons {
		if r.Class == gates.ClassPinCost {
			t.Log(r.Detail)
		}
	}
	return v
}

// pytest: an honest GREEN whose test pins calc.sub passes clean; a
// declared calc.mul that only meets mul(0, 5) == 0 is named unpinned.
func TestGreen_Pinning_Pytest(t *testing.T) {
	py := pythonWithPytest(t)
	for _, c := range []struct {
		name   string
		syms   []string
		result gates.Result
		class  string
	}{
		{"honest", []string{"calc.sub"}, gates.PASS, ""},
		{"hollow", []string{"calc.sub", "calc.mul"}, gates.FAIL, gates.ClassUnpinned},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, pytestRunner(py), map[string]string{
				"calc.py": "def add(a, b):\n    return a + b\n",
				"docs/agents/sprint1/s1-01-rune-helpers/tasks.md": pinTasks(c.syms...),
			})
			tests := []string{"tests/test_sub.py::test_sub", "tests/test_sub.py::test_mul"}
			v := langGreen(t, f, tests,
				map[string]string{"tests/test_sub.py": "from calc import sub, mul\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n\n\ndef test_mul():\n    assert mul(0, 5) == 0\n",
					"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):  # agentic:shim\n    return 0\n\n\ndef mul(a, b):  # agentic:shim\n    return 1\n"},
				map[string]string{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"}, "")
			wantPin(t, v, c.result, c.class)
			if c.class != "" && !strings.Contains(v.String(), "calc.mul") {
				t.Errorf("verdict does not name calc.mul: %s", v)
			}
		})
	}
}

// vitest: the same pair in TypeScript, through the real vitest.
func TestGreen_Pinning_Vitest(t *testing.T) {
	runners := os.Getenv("GIT_IDEATE_NODE_RUNNERS")
	if runners == "" {
		t.Skip("GIT_IDEATE_NODE_RUNNERS is not set: set it to a directory where `npm install vitest@3` was run")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	nm := filepath.Join(runners, "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "vitest")); err != nil {
		t.Skipf("vitest is not installed under %s", nm)
	}
	runner := "\n## Test runners\n\n### typescript\n\n- Extensions: `.ts`\n- Test files: `**/*.test.ts`\n" +
		"- Run: `node " + filepath.Join(nm, "vitest", "vitest.mjs") + " run --reporter=json --outputFile={report} {files}`\n- Format: `jest-json`\n- Dialect: `vitest`\n"
	for _, c := range []struct {
		name   string
		syms   []string
		result gates.Result
		class  string
	}{
		{"honest", []string{"src/calc.sub"}, gates.PASS, ""},
		{"hollow", []string{"src/calc.sub", "src/calc.mul"}, gates.FAIL, gates.ClassUnpinned},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, runner, map[string]string{
				"package.json": `{"name":"calc","private":true,"type":"module"}` + "\n",
				".gitignore":   "node_modules\n",
				"docs/agents/sprint1/s1-01-rune-helpers/tasks.md": pinTasks(c.syms...),
			})
			tests := []string{"src/calc.test.ts::sub subtracts", "src/calc.test.ts::mul of zero"}
			v := langGreen(t, f, tests,
				map[string]string{"src/calc.test.ts": "import { test, expect } from 'vitest';\nimport { sub, mul } from './calc';\n\ntest('sub subtracts', () => {\n  expect(sub(3, 1)).toBe(2);\n});\n\ntest('mul of zero', () => {\n  expect(mul(0, 5)).toBe(0);\n});\n",
					"src/calc.ts": "// agentic:shim\nexport function sub(a: number, b: number): number {\n  return 0;\n}\n\nexport function mul(a: number, b: number): number {\n  return 1;\n}\n"},
				map[string]string{"src/calc.ts": "export function sub(a: number, b: number): number {\n  return a - b;\n}\n\nexport function mul(a: number, b: number): number {\n  return a * b;\n}\n"}, nm)
			wantPin(t, v, c.result, c.class)
			if c.class != "" && !strings.Contains(v.String(), "calc.mul") {
				t.Errorf("verdict does not name calc.mul: %s", v)
			}
		})
	}
}

// wantPin is want, where a note that the check was weaker (no tree-sitter
// helper in this build) may stand beside the expected reasons.
func wantPin(t *testing.T, v gates.Verdict, result gates.Result, class string) {
	t.Helper()
	var rs []gates.Reason
	for _, r := range v.Reasons {
		if r.Class == gates.ClassWeakerCheck && r.Severity == gates.SevInfo && strings.Contains(r.Detail, "weaker check") {
			continue
		}
		rs = append(rs, r)
	}
	v.Reasons = rs
	want(t, v, result, class)
}
