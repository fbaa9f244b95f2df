package testrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeRunners returns a directory holding node_modules with jest,
// jest-junit and vitest, named by GIT_IDEATE_NODE_RUNNERS (.ci/run
// installs them there), or skips.
func nodeRunners(t *testing.T, bins ...string) string {
	t.Helper()
	dir := os.Getenv("GIT_IDEATE_NODE_RUNNERS")
	if dir == "" {
		t.Skip("GIT_IDEATE_NODE_RUNNERS is not set: set it to a directory where `npm install vitest@3 jest jest-junit` was run")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", b)); err != nil {
			t.Skipf("%s is not installed under %s/node_modules", b, dir)
		}
	}
	return dir
}

func jsProject(t *testing.T, runners string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	if err := os.Symlink(filepath.Join(runners, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

var jestProject = map[string]string{
	"package.json": `{"name":"jt","private":true}` + "\n",
	"calc.cjs": `exports.add = (a, b) => { throw new Error("SUB-AGENT-TODO: T1 return a+b"); };
exports.sub = (a, b) => 0;
`,
	"calc.test.cjs": `const calc = require('./calc.cjs');
describe('calc', () => {
  test('sub asserts', () => { expect(calc.sub(5, 3)).toBe(2); });
  test('add stub throws', () => { expect(calc.add(1, 2)).toBe(3); });
  test('mul missing', () => { expect(calc.mul(2, 3)).toBe(6); });
  test('passes', () => { expect(1).toBe(1); });
  test.skip('skipped', () => {});
  test('slow', async () => { await new Promise(r => setTimeout(r, 3000)); }, 200);
});
describe('setup', () => {
  beforeAll(() => { throw new Error("db down"); });
  test('needs db', () => { expect(1).toBe(1); });
});
`,
	"import.test.cjs": `const { thing } = require('./missing.cjs');
test('never runs', () => { expect(thing()).toBe(1); });
`,
}

var jestWant = map[string]Outcome{
	"calc.test.cjs::calc > sub asserts":     FailAssert,
	"calc.test.cjs::calc > add stub throws": FailStub,
	"calc.test.cjs::calc > mul missing":     FailError,
	"calc.test.cjs::calc > passes":          Pass,
	"calc.test.cjs::calc > skipped":         Skip,
	"calc.test.cjs::calc > slow":            Timeout,
	"calc.test.cjs::setup > needs db":       ErrorSetup,
	"import.test.cjs::never runs":           BuildFail,
}

func declaredOf(m map[string]Outcome) []string {
	var ids []string
	for id := range m {
		ids = append(ids, id)
	}
	return ids
}

func TestRun_Jest_JSON(t *testing.T) {
	runners := nodeRunners(t, "jest")
	t.Parallel()
	dir := jsProject(t, runners, jestProject)
	res, err := Run(context.Background(), Spec{
		Argv:       []string{"node", filepath.Join(dir, "node_modules/jest/bin/jest.js"), "--ci", "--rootDir", ".", "--json", "--outputFile=report.json"},
		Dir:        dir,
		Format:     JestJSON,
		Dialect:    DialectJest,
		ReportFile: "report.json",
		Declared:   declaredOf(jestWant),
		Timeout:    3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err == nil {
		capture(t, "jest-live.json", string(b), dir)
	}
	want(t, res.Report, jestWant)
	reasonHas(t, res.Report, "import.test.cjs::never runs", "Cannot find module './missing.cjs'")
}

func TestRun_JestJUnit(t *testing.T) {
	runners := nodeRunners(t, "jest", "jest-junit")
	t.Parallel()
	dir := jsProject(t, runners, jestProject)
	spec := Spec{
		Argv:       []string{"node", filepath.Join(dir, "node_modules/jest/bin/jest.js"), "--ci", "--rootDir", ".", "--reporters=jest-junit"},
		Dir:        dir,
		Env:        []string{"JEST_JUNIT_OUTPUT_FILE=" + filepath.Join(dir, "junit.xml"), "JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true", "JEST_JUNIT_ADD_FILE_ATTRIBUTE=true"},
		Format:     JUnitXML,
		Dialect:    DialectJestJUnit,
		ReportFile: "junit.xml",
		Declared:   declaredOf(jestWant),
		Timeout:    3 * time.Minute,
	}
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "junit.xml")); err == nil {
		capture(t, "jest-junit-live.xml", string(b), dir)
	}
	want(t, res.Report, jestWant)

	// jest-junit's defaults drop a file that cannot load: its tests are
	// NOT_RUN (never a pass), the rest still classify.
	spec.Env = []string{"JEST_JUNIT_OUTPUT_FILE=" + filepath.Join(dir, "junit.xml")}
	res, err = Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	want(t, res.Report, map[string]Outcome{
		"import.test.cjs::never runs":           NotRun,
		"calc.test.cjs::calc > sub asserts":     FailAssert,
		"calc.test.cjs::calc > add stub throws": FailStub,
	})
}

var vitestProject = map[string]string{
	"package.json": `{"name":"vt","private":true,"type":"module"}` + "\n",
	"calc.js": `export const add = (a, b) => { throw new Error("SUB-AGENT-TODO: T1 return a+b"); };
export const sub = (a, b) => 0;
`,
	"calc.test.js": `import { describe, test, expect, beforeAll } from 'vitest';
import * as calc from './calc.js';
describe('calc', () => {
  test('sub asserts', () => { expect(calc.sub(5, 3)).toBe(2); });
  test('add stub throws', () => { expect(calc.add(1, 2)).toBe(3); });
  test('mul missing', () => { expect(calc.mul(2, 3)).toBe(6); });
  test('passes', () => { expect(1).toBe(1); });
  test.skip('skipped', () => {});
  test('slow', async () => { await new Promise(r => setTimeout(r, 3000)); }, 200);
  describe('inner', () => { test('deep', () => {}); });
});
describe('setup', () => {
  beforeAll(() => { throw new Error("db down"); });
  test('needs db', () => { expect(1).toBe(1); });
});
`,
	"import.test.js": `import { test, expect } from 'vitest';
import { thing } from './missing.js';
test('never runs', () => { expect(thing()).toBe(1); });
`,
	"syntax.test.js": "import { test } from 'vitest';\ntest('x', () => { let = ; });\n",
}

var vitestWant = map[string]Outcome{
	"calc.test.js::calc > sub asserts":     FailAssert,
	"calc.test.js::calc > add stub throws": FailStub,
	"calc.test.js::calc > mul missing":     FailError,
	"calc.test.js::calc > passes":          Pass,
	"calc.test.js::calc > skipped":         Skip,
	"calc.test.js::calc > slow":            Timeout,
	"calc.test.js::calc > inner > deep":    Pass,
	"import.test.js::never runs":           BuildFail,
	"syntax.test.js::x":                    BuildFail,
}

func TestRun_Vitest_JSONAndJUnit(t *testing.T) {
	runners := nodeRunners(t, "vitest")
	t.Parallel()
	dir := jsProject(t, runners, vitestProject)
	vitest := filepath.Join(dir, "node_modules/vitest/vitest.mjs")
	res, err := Run(context.Background(), Spec{
		Argv:       []string{"node", vitest, "run", "--reporter=json", "--outputFile=report.json"},
		Dir:        dir,
		Format:     JestJSON,
		Dialect:    DialectVitest,
		ReportFile: "report.json",
		Declared:   declaredOf(vitestWant),
		Timeout:    3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err == nil {
		capture(t, "vitest-live.json", string(b), dir)
	}
	want(t, res.Report, vitestWant)
	// vitest's JSON drops a failed beforeAll: its tests read as skipped.
	// The JUnit report keeps it.
	want(t, res.Report, map[string]Outcome{"calc.test.js::setup > needs db": Skip})

	junitWant := map[string]Outcome{"calc.test.js::setup > needs db": ErrorSetup}
	for k, v := range vitestWant {
		junitWant[k] = v
	}
	res, err = Run(context.Background(), Spec{
		Argv:       []string{"node", vitest, "run", "--reporter=junit", "--outputFile=junit.xml"},
		Dir:        dir,
		Format:     JUnitXML,
		Dialect:    DialectVitest,
		ReportFile: "junit.xml",
		Declared:   declaredOf(junitWant),
		Timeout:    3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "junit.xml")); err == nil {
		capture(t, "vitest-junit-live.xml", string(b), dir)
	}
	want(t, res.Report, junitWant)
	reasonHas(t, res.Report, "calc.test.js::setup > needs db", "db down")
}

// A JavaScript id may name its file either way — "file > describe >
// title" or "file::describe > title" — against jest's real JSON and JUnit
// output; a declared id that matches nothing is NOT_RUN, never another
// file's load error.
func TestClassify_JSIdForms(t *testing.T) {
	for _, x := range []struct {
		fixture string
		format  Format
		dialect Dialect
	}{{"jest-live.json", JestJSON, DialectJest}, {"jest-junit-live.xml", JUnitXML, DialectJestJUnit}} {
		t.Run(x.fixture, func(t *testing.T) {
			rep, err := Classify(strings.NewReader(fixture(t, x.fixture)), Options{Format: x.format, Dialect: x.dialect, Root: "ROOT",
				Declared: []string{"calc.test.cjs > calc > sub asserts", "calc.test.cjs::calc > passes", "calc.test.cjs > calc > no such test", "other.test.cjs > never written"}})
			if err != nil {
				t.Fatal(err)
			}
			want(t, rep, map[string]Outcome{
				"calc.test.cjs > calc > sub asserts":  FailAssert,
				"calc.test.cjs::calc > passes":        Pass,
				"calc.test.cjs > calc > no such test": NotRun,
				"other.test.cjs > never written":      NotRun,
			})
		})
	}
}

// jest with node:assert: its failures are assertions (FAIL_ASSERT) in the
// JSON report and through jest-junit, so an honest RED is not refused as a
// runtime error.
func TestRun_Jest_NodeAssert(t *testing.T) {
	runners := nodeRunners(t, "jest", "jest-junit")
	t.Parallel()
	dir := jsProject(t, runners, map[string]string{
		"package.json": `{"name":"ja","private":true}` + "\n",
		"a.test.cjs": `const assert = require('node:assert');
describe('calc', () => {
  test('strict', () => { assert.strictEqual(1 + 1, 3); });
  test('ok', () => { assert.ok(false); });
  test('deep', () => { assert.deepStrictEqual({a: 1}, {a: 2}); });
  test('throws', () => { null.x; });
});
`})
	outcomes := map[string]Outcome{
		"a.test.cjs > calc > strict": FailAssert, "a.test.cjs > calc > ok": FailAssert,
		"a.test.cjs > calc > deep": FailAssert, "a.test.cjs > calc > throws": FailError,
	}
	jest := filepath.Join(dir, "node_modules/jest/bin/jest.js")
	for _, spec := range []Spec{
		{Argv: []string{"node", jest, "--ci", "--rootDir", ".", "--json", "--outputFile=report.json"}, Format: JestJSON, Dialect: DialectJest, ReportFile: "report.json"},
		{Argv: []string{"node", jest, "--ci", "--rootDir", ".", "--reporters=jest-junit"}, Format: JUnitXML, Dialect: DialectJestJUnit, ReportFile: "junit.xml",
			Env: []string{"JEST_JUNIT_OUTPUT_FILE=" + filepath.Join(dir, "junit.xml"), "JEST_JUNIT_ADD_FILE_ATTRIBUTE=true"}},
	} {
		spec.Dir, spec.Declared, spec.Timeout = dir, declaredOf(outcomes), 3*time.Minute
		res, err := Run(context.Background(), spec)
		if err != nil {
			t.Fatalf("Run %s: %v\n%s", spec.Format, err, res.Output)
		}
		want(t, res.Report, outcomes)
	}
}
