package scaffold_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/scaffold"
	"github.com/ideate/git-ideate/internal/testrun"
)

// nodeRunners is the directory whose node_modules holds vitest (.ci/run
// installs it and names it by GIT_IDEATE_NODE_RUNNERS), or skips.
func nodeRunners(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GIT_IDEATE_NODE_RUNNERS")
	if dir == "" {
		t.Skip("GIT_IDEATE_NODE_RUNNERS is not set: set it to a directory where `npm install vitest@3` was run")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "vitest")); err != nil {
		t.Skipf("vitest is not installed under %s/node_modules", dir)
	}
	return dir
}

const wordsTS = "export function words(s: string): string[] {\n  return s.split(/\\s+/).filter(Boolean);\n}\n"

// TestRun_TypeScript: the shim file goes, the stub lands in the task's
// file, the module still loads under the real vitest, the declared test
// ends FAIL_STUB through vitest's JSON report and our parser, an
// implemented body is never overwritten, and a second run is a no-op.
func TestRun_TypeScript(t *testing.T) {
	runners := nodeRunners(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"package.json":           `{"name":"slugs","private":true,"type":"module"}` + "\n",
		"src/words.ts":           wordsTS,
		"src/zz_agentic_shim.ts": "// agentic:shim\nexport function slugify(s: string): string {\n  return \"\";\n}\n\nexport function words(s: string): string[] {\n  return [];\n}\n",
		"src/slug.test.ts": "import { test, expect } from 'vitest';\nimport { slugify } from './slug';\nimport { words } from './words';\n\n" +
			"test('slugify joins words', () => {\n  expect(slugify(words('a b').join(' '))).toBe('a-b');\n});\n",
	})
	in := scaffold.Input{Declared: []string{"slugify", "words"}, Files: []string{"src/slug.ts", "src/slug.test.ts"}}
	r := run(t, dir, in)
	want := "create src/slug.ts src/slug.slugify; delete src/zz_agentic_shim.ts src/zz_agentic_shim.slugify; delete src/zz_agentic_shim.ts src/zz_agentic_shim.words"
	if got := ops(r); got != want {
		t.Fatalf("actions:\n%s\nwant:\n%s", got, want)
	}
	if len(r.Undecided) != 0 {
		t.Fatalf("undecided %+v", r.Undecided)
	}
	src := read(t, filepath.Join(dir, "src/slug.ts"))
	if !strings.Contains(src, "export function slugify(s: string): string {\n  throw new Error(\"SUB-AGENT-TODO: implement src/slug.slugify\");\n}") {
		t.Fatalf("stub file:\n%s", src)
	}
	if w := read(t, filepath.Join(dir, "src/words.ts")); w != wordsTS {
		t.Fatalf("implemented words touched:\n%s", w)
	}
	if _, err := os.Stat(filepath.Join(dir, "src/zz_agentic_shim.ts")); !os.IsNotExist(err) {
		t.Fatalf("shim not deleted: %v", err)
	}
	if err := os.Symlink(filepath.Join(runners, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	id := "src/slug.test.ts::slugify joins words"
	res, err := testrun.Run(ctx, testrun.Spec{
		Argv:       []string{"node", filepath.Join(dir, "node_modules/vitest/vitest.mjs"), "run", "--reporter=json", "--outputFile=report.json"},
		Dir:        dir,
		Format:     testrun.JestJSON,
		Dialect:    testrun.DialectVitest,
		ReportFile: "report.json",
		Declared:   []string{id},
		Timeout:    3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("vitest: %v\n%s", err, res.Output)
	}
	if got, _ := res.Report.Result(id); got.Outcome != testrun.FailStub {
		t.Fatalf("outcome %s (%s)\n%s", got.Outcome, got.Reason, res.Output)
	}
	if err := os.Remove(filepath.Join(dir, "report.json")); err != nil {
		t.Fatal(err)
	}
	if again := run(t, dir, in); len(again.Actions) != 0 || len(again.Undecided) != 0 {
		t.Fatalf("second run: %s %+v", ops(again), again.Undecided)
	}
	if src2 := read(t, filepath.Join(dir, "src/slug.ts")); src2 != src {
		t.Fatalf("second run changed the stub file")
	}
}
