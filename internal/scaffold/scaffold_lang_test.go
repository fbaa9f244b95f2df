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

const wordsRS = "pub fn words(s: &str) -> Vec<String> {\n    s.split_whitespace().map(String::from).collect()\n}\n"

// TestRun_Rust: marked shim definitions are cut from the module that
// keeps its other code, the stub lands in the task's file, the crate
// still builds, the declared test ends FAIL_STUB through the real cargo
// test (libtest's JUnit report, RUSTC_BOOTSTRAP=1 on a stable toolchain)
// and our parser, an implemented body is never overwritten, and a second
// run is a no-op.
func TestRun_Rust(t *testing.T) {
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("cargo is not on PATH: the Rust scaffold sample needs it")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Cargo.toml":   "[package]\nname = \"slugs\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs":   "pub mod slug;\npub mod words;\n",
		"src/words.rs": wordsRS,
		"src/slug.rs": "//! Slugs.\n\npub fn keep() -> u8 {\n    1\n}\n\n// agentic:shim\npub fn slugify(s: &str) -> String {\n    String::new()\n}\n\n" +
			"// agentic:shim\npub fn words(s: &str) -> Vec<String> {\n    Vec::new()\n}\n",
		"tests/slug.rs": "use slugs::slug::slugify;\nuse slugs::words::words;\n\n#[test]\nfn slugify_joins() {\n    assert_eq!(slugify(&words(\"a b\").join(\" \")), \"a-b\");\n}\n",
	})
	in := scaffold.Input{Declared: []string{"slug::slugify", "words"}, Files: []string{"src/slug.rs", "tests/slug.rs"}}
	r := run(t, dir, in)
	want := "update src/slug.rs src::slug.slugify; update src/slug.rs src::slug.words"
	if got := ops(r); got != want {
		t.Fatalf("actions:\n%s\nwant:\n%s", got, want)
	}
	if len(r.Undecided) != 0 {
		t.Fatalf("undecided %+v", r.Undecided)
	}
	src := read(t, filepath.Join(dir, "src/slug.rs"))
	if strings.Contains(src, "agentic:shim") || strings.Contains(src, "String::new()") || strings.Contains(src, "fn words") ||
		!strings.Contains(src, "pub fn keep() -> u8") ||
		!strings.Contains(src, "pub fn slugify(s: &str) -> String {\n    todo!(\"SUB-AGENT-TODO: implement src::slug.slugify\")\n}") {
		t.Fatalf("slug.rs:\n%s", src)
	}
	if w := read(t, filepath.Join(dir, "src/words.rs")); w != wordsRS {
		t.Fatalf("implemented words touched:\n%s", w)
	}
	env := []string{"CARGO_TARGET_DIR=" + filepath.Join(t.TempDir(), "target"), "RUSTC_BOOTSTRAP=1", "CARGO_TERM_COLOR=never"}
	build := exec.Command("cargo", "build", "--offline", "-q")
	build.Dir, build.Env = dir, append(os.Environ(), env...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cargo build after scaffolding: %v\n%s", err, out)
	}
	id := "integration::slugify_joins"
	res, err := testrun.Run(ctx, testrun.Spec{
		Argv:     []string{"cargo", "test", "--offline", "-q", "--test", "slug", "--", "-Z", "unstable-options", "--format", "junit"},
		Dir:      dir,
		Env:      env,
		Format:   testrun.JUnitXML,
		Dialect:  testrun.DialectLibtest,
		Declared: []string{id},
		Timeout:  5 * time.Minute,
	})
	if err != nil {
		t.Fatalf("cargo test: %v\n%s", err, res.Output)
	}
	if got, _ := res.Report.Result(id); got.Outcome != testrun.FailStub {
		t.Fatalf("outcome %s (%s)\n%s", got.Outcome, got.Reason, res.Output)
	}
	if again := run(t, dir, in); len(again.Actions) != 0 || len(again.Undecided) != 0 {
		t.Fatalf("second run: %s %+v", ops(again), again.Undecided)
	}
	if src2 := read(t, filepath.Join(dir, "src/slug.rs")); src2 != src {
		t.Fatalf("second run changed slug.rs:\n%s", src2)
	}
}

// TestRun_GoStubAddsImports: a stub appended to an existing Go file gets
// the imports its signature needs (context, io) whatever the file's
// imports look like, and the package builds and vets with the real go
// command.
func TestRun_GoStubAddsImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	shim := "// agentic:shim\npackage fetch\n\nimport (\n\t\"context\"\n\t\"io\"\n)\n\nfunc Fetch(ctx context.Context, r io.Reader) (int, error) { return 0, nil }\n"
	for name, existing := range map[string]string{
		"no imports":   "package fetch\n\n// Size is implemented.\nfunc Size() int { return 1 }\n",
		"one import":   "package fetch\n\nimport \"strings\"\n\n// Size is implemented.\nfunc Size() int { return len(strings.Repeat(\"a\", 1)) }\n",
		"import block": "// Package fetch fetches.\npackage fetch\n\nimport (\n\t\"io\" // already here\n\t\"strings\"\n)\n\n// Size is implemented.\nfunc Size() int { _ = io.EOF; return len(strings.Repeat(\"a\", 1)) }\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{
				"go.mod":                   "module example.com/m\n\ngo 1.21\n",
				"fetch/fetch.go":           existing,
				"fetch/zz_agentic_shim.go": shim,
				"fetch/fetch_test.go":      "package fetch\n\nimport (\n\t\"context\"\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestFetch(t *testing.T) {\n\tif n, _ := Fetch(context.Background(), strings.NewReader(\"ab\")); n != 2 {\n\t\tt.Fatal(n)\n\t}\n}\n",
			})
			in := scaffold.Input{Declared: []string{"fetch.Fetch"}, Files: []string{"fetch/fetch.go", "fetch/fetch_test.go"}}
			r := run(t, dir, in)
			if got := ops(r); got != "delete fetch/zz_agentic_shim.go fetch.Fetch; update fetch/fetch.go fetch.Fetch" {
				t.Fatalf("actions %s", got)
			}
			src := read(t, filepath.Join(dir, "fetch/fetch.go"))
			if !strings.Contains(src, "func Fetch(ctx context.Context, r io.Reader) (int, error) {\n\tpanic(") || !strings.Contains(src, "func Size() int") {
				t.Fatalf("fetch.go:\n%s", src)
			}
			if strings.Count(src, "\"io\"") != 1 || strings.Count(src, "\"context\"") != 1 {
				t.Fatalf("imports not added once:\n%s", src)
			}
			for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
				cmd := exec.Command("go", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go %s: %v\n%s\nfetch.go:\n%s", args[0], err, out, src)
				}
			}
			if again := run(t, dir, in); len(again.Actions) != 0 {
				t.Fatalf("second run: %s", ops(again))
			}
			if src2 := read(t, filepath.Join(dir, "fetch/fetch.go")); src2 != src {
				t.Fatalf("second run changed fetch.go")
			}
		})
	}
}
