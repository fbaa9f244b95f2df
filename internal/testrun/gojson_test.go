package testrun

import (
	"context"
	"github.com/ideate/git-ideate/internal/apperr"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// goModule is a small module with one package per way a Go test can end.
var goModule = map[string]string{
	"go.mod": "module example.com/gm\n\ngo 1.22\n",
	"calc/calc.go": `package calc

func Sub(a, b int) int { return 0 }
func Add(a, b int) int { panic("SUB-AGENT-TODO: T1 return a+b") }
`,
	"calc/calc_test.go": `package calc

import "testing"

func TestSubAssert(t *testing.T) {
	if got := Sub(5, 3); got != 2 {
		t.Errorf("Sub(5,3) = %d, want 2", got)
	}
}
func TestPasses(t *testing.T) {}
func TestStubErr(t *testing.T) { t.Fatal("SUB-AGENT-TODO: not there") }
func TestSkipped(t *testing.T) { t.Skip("not on this platform") }
`,
	"stub/stub.go": `package stub

func Add(a, b int) int { panic("SUB-AGENT-TODO: T1 return a+b") }
`,
	"stub/stub_test.go": `package stub

import "testing"

func TestBefore(t *testing.T) {}
func TestAddPanicsInStub(t *testing.T) { _ = Add(1, 2) }
func TestAfterStub(t *testing.T) {}
`,
	"crash/c.go": `package crash

type T struct{ X int }

func Get() *T { return nil }
`,
	"crash/c_test.go": `package crash

import "testing"

func TestFirst(t *testing.T) {}
func TestNil(t *testing.T) { _ = Get().X }
func TestAfter(t *testing.T) {}
`,
	"tout/t_test.go": `package tout

import ("testing"; "time")

func TestQuick(t *testing.T) {}
func TestSlow(t *testing.T) { time.Sleep(time.Hour) }
func TestNever(t *testing.T) {}
`,
	"exit/e_test.go": `package exit

import ("os"; "testing")

func TestA(t *testing.T) {}
func TestExit1(t *testing.T) { os.Exit(1) }
func TestExit0(t *testing.T) { os.Exit(0) }
func TestB(t *testing.T) {}
`,
	"sub/s_test.go": `package sub

import "testing"

func TestTable(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("bad case", func(t *testing.T) { t.Error("nope") })
	t.Run("stub", func(t *testing.T) { panic("SUB-AGENT-TODO: sub stub") })
}
func TestLater(t *testing.T) {}
`,
	"subok/s_test.go": `package subok

import "testing"

func TestTable(t *testing.T) {
	t.Run("one", func(t *testing.T) {})
	t.Run("two", func(t *testing.T) { t.Errorf("two: got %d", 3) })
}
`,
	"bld/b_test.go": `package bld

import "testing"

func TestUsesMissing(t *testing.T) { _ = Mul(2, 3) }
`,
	"setup/s_test.go": `package setup

import ("fmt"; "os"; "testing")

func TestMain(m *testing.M) { fmt.Println("db connect: connection refused"); os.Exit(3) }
func TestNeedsDB(t *testing.T) {}
`,
	"imp/i_test.go": `package imp

import ("testing"; "example.com/nope/missing")

func TestI(t *testing.T) { missing.X() }
`,
	"vet/v_test.go": `package vet

import ("fmt"; "testing")

func TestV(t *testing.T) { fmt.Printf("%d\n", "str") }
`,
	"nt/n_test.go": `package nt

import "testing"

func TestReal(t *testing.T) {}
`,
	"notests/x.go": "package notests\n",
}

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
}

// goEnv keeps the child go command local and quiet.
var goEnv = []string{"GOTOOLCHAIN=local", "GOFLAGS=", "GO111MODULE=on", "CGO_ENABLED=0"}

func goRun(t *testing.T, dir string, declared []string, timeout time.Duration, args ...string) *RunResult {
	t.Helper()
	res, err := Run(context.Background(), Spec{
		Argv:     append([]string{"go", "test", "-json", "-count=1"}, args...),
		Dir:      dir,
		Env:      goEnv,
		Format:   GoJSON,
		Declared: declared,
		Timeout:  timeout,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestRun_GoTestJSON_EveryOutcome(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, goModule)
	declared := []string{
		"example.com/gm/calc::TestSubAssert",
		"example.com/gm/calc::TestStubErr",
		"example.com/gm/stub::TestAddPanicsInStub",
		"example.com/gm/stub::TestAfterStub",
		"example.com/gm/crash::TestNil",
		"example.com/gm/crash::TestAfter",
		"example.com/gm/bld::TestUsesMissing",
		"example.com/gm/setup::TestNeedsDB",
		"example.com/gm/tout::TestSlow",
		"example.com/gm/tout::TestNever",
		"example.com/gm/exit::TestExit1",
		"example.com/gm/exit::TestB",
		"example.com/gm/sub::TestTable",
		"example.com/gm/sub::TestLater",
		"example.com/gm/nt::TestMissing",
		"TestSkipped",
		"example.com/gm/imp::TestI",
		"example.com/gm/vet::TestV",
	}
	res := goRun(t, dir, declared, 2*time.Minute, "-timeout=3s", "./...")
	capture(t, "go-live.jsonl", jsonLines(res.Output), dir)
	rep := res.Report
	want(t, rep, map[string]Outcome{
		"example.com/gm/calc::TestSubAssert":       FailAssert,
		"example.com/gm/calc::TestPasses":          Pass,
		"example.com/gm/calc::TestStubErr":         FailStub,
		"TestSkipped":                              Skip,
		"example.com/gm/stub::TestBefore":          Pass,
		"example.com/gm/stub::TestAddPanicsInStub": FailStub,
		"example.com/gm/stub::TestAfterStub":       NotRun,
		"example.com/gm/crash::TestFirst":          Pass,
		"example.com/gm/crash::TestNil":            FailError,
		"example.com/gm/crash::TestAfter":          NotRun,
		"example.com/gm/bld::TestUsesMissing":      BuildFail,
		"example.com/gm/setup::TestNeedsDB":        ErrorSetup,
		"example.com/gm/tout::TestQuick":           Pass,
		"example.com/gm/tout::TestSlow":            Timeout,
		"example.com/gm/tout::TestNever":           NotRun,
		"example.com/gm/exit::TestA":               Pass,
		"example.com/gm/exit::TestExit1":           FailError,
		"example.com/gm/exit::TestB":               NotRun,
		"example.com/gm/sub::TestTable":            FailStub,
		"example.com/gm/sub::TestTable/ok":         Pass,
		"example.com/gm/sub::TestTable/bad_case":   FailAssert,
		"example.com/gm/sub::TestTable/stub":       FailStub,
		"example.com/gm/sub::TestLater":            NotRun,
		"example.com/gm/subok::TestTable":          FailAssert,
		"example.com/gm/subok::TestTable/two":      FailAssert,
		"example.com/gm/nt::TestReal":              Pass,
		"example.com/gm/nt::TestMissing":           NotRun,
		"example.com/gm/imp::TestI":                BuildFail,
		"example.com/gm/vet::TestV":                BuildFail,
	})
	reasonHas(t, rep, "example.com/gm/imp::TestI", "no required module provides package example.com/nope/missing")
	reasonHas(t, rep, "example.com/gm/vet::TestV", "wrong type string")
	reasonHas(t, rep, "example.com/gm/calc::TestSubAssert", "Sub(5,3) = 0, want 2")
	reasonHas(t, rep, "example.com/gm/stub::TestAddPanicsInStub", "SUB-AGENT-TODO: T1")
	reasonHas(t, rep, "example.com/gm/stub::TestAfterStub", "crashed in TestAddPanicsInStub")
	reasonHas(t, rep, "example.com/gm/crash::TestNil", "nil pointer dereference")
	reasonHas(t, rep, "example.com/gm/bld::TestUsesMissing", "undefined: Mul")
	reasonHas(t, rep, "example.com/gm/setup::TestNeedsDB", "connection refused")
	reasonHas(t, rep, "example.com/gm/tout::TestSlow", "test timed out")
	reasonHas(t, rep, "example.com/gm/exit::TestExit1", "exited")
	reasonHas(t, rep, "example.com/gm/sub::TestTable", "subtest TestTable/stub")
	reasonHas(t, rep, "example.com/gm/nt::TestMissing", "did not match")
	if r, _ := rep.Result("example.com/gm/calc::TestSubAssert"); r.File != "calc_test.go" || r.Line != 7 {
		t.Errorf("TestSubAssert at %s:%d, want calc_test.go:7", r.File, r.Line)
	}
	if r, _ := rep.Result("example.com/gm/bld::TestUsesMissing"); r.File != "bld/b_test.go" || r.Line != 5 {
		t.Errorf("TestUsesMissing at %s:%d, want bld/b_test.go:5", r.File, r.Line)
	}
	if r, _ := rep.Result("example.com/gm/crash::TestNil"); r.File != "crash/c_test.go" || r.Line != 6 {
		t.Errorf("TestNil at %s:%d, want crash/c_test.go:6", r.File, r.Line)
	}
	if rep.Verdict != VerdictFail {
		t.Errorf("verdict %s, want FAIL", rep.Verdict)
	}
}

// jsonLines keeps the lines of a captured output that are JSON (go test
// -json writes its events to stdout, and Run's capture mixes in stderr).
func jsonLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "{") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestRun_GoTestJSON_NoTestsToRunIsNotAPass(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, goModule)
	res := goRun(t, dir, []string{"example.com/gm/nt::TestTypo"}, time.Minute, "-run", "^TestTypo$", "./nt")
	capture(t, "go-no-tests.jsonl", jsonLines(res.Output), dir)
	if res.ExitCode != 0 {
		t.Fatalf("go test exit code %d, want 0 (it passes with no tests to run)", res.ExitCode)
	}
	want(t, res.Report, map[string]Outcome{"example.com/gm/nt::TestTypo": NotRun})
	reasonHas(t, res.Report, "example.com/gm/nt::TestTypo", "no tests to run")
	if res.Report.Verdict == VerdictPass {
		t.Fatal("a selector that matched nothing passed")
	}
	// Nothing declared: still not a pass.
	rep, err := Classify(strings.NewReader(res.Output), Options{Format: GoJSON})
	if err != nil || rep.Verdict != VerdictNoTests {
		t.Fatalf("undeclared no-tests run: %v %v, want NO_TESTS", rep.Verdict, err)
	}
}

func TestRun_GoTestJSON_KilledAtDeadline(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, goModule)
	// Build first, and time a warm run of the quick test: the deadline
	// must fall inside TestSlow, not in go test's start-up, however loaded
	// the machine is.
	warm := func() time.Duration {
		pre := exec.Command("go", "test", "-count=1", "-run", "^TestQuick$", "./tout")
		pre.Dir, pre.Env = dir, append(os.Environ(), goEnv...)
		t0 := time.Now()
		if out, err := pre.CombinedOutput(); err != nil {
			t.Fatalf("prebuild: %v\n%s", err, out)
		}
		return time.Since(t0)
	}
	warm()
	deadline := 3*warm() + 3*time.Second
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Argv:     []string{"go", "test", "-json", "-count=1", "-timeout=2h", "-run", "^(TestQuick|TestSlow|TestNever)$", "./tout"},
		Dir:      dir,
		Env:      goEnv,
		Format:   GoJSON,
		Declared: []string{"example.com/gm/tout::TestQuick", "example.com/gm/tout::TestSlow", "example.com/gm/tout::TestNever"},
		Timeout:  deadline,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("not timed out after %s (exit %d)", time.Since(start), res.ExitCode)
	}
	if d := time.Since(start); d > deadline+10*time.Second {
		t.Fatalf("the kill took %s (deadline %s)", d, deadline)
	}
	want(t, res.Report, map[string]Outcome{
		"example.com/gm/tout::TestQuick": Pass,
		"example.com/gm/tout::TestSlow":  Timeout,
		"example.com/gm/tout::TestNever": Timeout,
	})
}

func TestRun_GoIsolate_RerunsWhatACrashErased(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, goModule)
	declared := []string{
		"example.com/gm/stub::TestBefore", "example.com/gm/stub::TestAddPanicsInStub", "example.com/gm/stub::TestAfterStub",
		"example.com/gm/exit::TestExit1", "example.com/gm/exit::TestExit0", "example.com/gm/exit::TestB",
		"example.com/gm/sub::TestLater",
	}
	res, err := Run(context.Background(), Spec{
		Argv:     []string{"go", "test", "-json", "-count=1", "./stub", "./exit", "./sub"},
		Dir:      dir,
		Env:      goEnv,
		Format:   GoJSON,
		Declared: declared,
		Timeout:  2 * time.Minute,
		Isolate:  GoIsolate(),
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	want(t, rep, map[string]Outcome{
		"example.com/gm/stub::TestBefore":          Pass,
		"example.com/gm/stub::TestAddPanicsInStub": FailStub,
		"example.com/gm/stub::TestAfterStub":       Pass,
		"example.com/gm/exit::TestExit1":           FailError,
		"example.com/gm/exit::TestExit0":           FailError,
		"example.com/gm/exit::TestB":               Pass,
		"example.com/gm/sub::TestLater":            Pass,
	})
	for _, id := range []string{"example.com/gm/stub::TestAfterStub", "example.com/gm/exit::TestExit0", "example.com/gm/exit::TestB", "example.com/gm/sub::TestLater"} {
		if r, _ := rep.Result(id); !r.Rerun {
			t.Errorf("%s was not re-run alone", id)
		}
	}
	if r, _ := rep.Result("example.com/gm/stub::TestBefore"); r.Rerun {
		t.Error("a test with its own result was re-run")
	}
	reasonHas(t, rep, "example.com/gm/exit::TestExit0", "os.Exit(0)")
	if res.Reruns != 4 {
		t.Errorf("%d re-runs, want 4", res.Reruns)
	}
}

func TestRun_GoCompileStep_AttributesBuildFailures(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, goModule)
	res, err := Run(context.Background(), Spec{
		Compile:  &Step{Argv: []string{"go", "test", "-json", "-count=1", "-run", "^$", "./bld", "./nt"}, Format: GoJSON},
		Argv:     []string{"go", "test", "-json", "-count=1", "-run", "^TestReal$", "./nt"},
		Dir:      dir,
		Env:      goEnv,
		Format:   GoJSON,
		Declared: []string{"example.com/gm/bld::TestUsesMissing", "example.com/gm/nt::TestReal"},
		Timeout:  2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	want(t, res.Report, map[string]Outcome{
		"example.com/gm/bld::TestUsesMissing": BuildFail,
		"example.com/gm/nt::TestReal":         Pass,
	})
	reasonHas(t, res.Report, "example.com/gm/bld::TestUsesMissing", "undefined: Mul")

	// The documented step, go vet {packages}, over a broken package and a
	// sound one: go names the broken package, whose tests alone are
	// BUILD_FAIL; the sound one's tests still run.
	res, err = Run(context.Background(), Spec{
		Compile:  &Step{Argv: []string{"go", "vet", "./bld", "./nt"}},
		Argv:     []string{"go", "test", "-json", "-count=1", "-run", "^TestReal$", "./nt"},
		Dir:      dir,
		Env:      goEnv,
		Format:   GoJSON,
		Declared: []string{"example.com/gm/bld::TestUsesMissing", "example.com/gm/nt::TestReal"},
		Timeout:  2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	want(t, res.Report, map[string]Outcome{
		"example.com/gm/bld::TestUsesMissing": BuildFail,
		"example.com/gm/nt::TestReal":         Pass,
	})
	reasonHas(t, res.Report, "example.com/gm/bld::TestUsesMissing", "undefined: Mul")

	// A plain compile step that fails and names no package stops the run:
	// every declared test is BUILD_FAIL with its first error.
	res, err = Run(context.Background(), Spec{
		Compile:  &Step{Argv: []string{"sh", "-c", "echo 'error: the build broke'; exit 2"}},
		Argv:     []string{"sh", "-c", "echo should not run; exit 3"},
		Dir:      dir,
		Env:      goEnv,
		Format:   GoJSON,
		Declared: []string{"example.com/gm/bld::TestUsesMissing", "example.com/gm/nt::TestReal"},
		Timeout:  2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	want(t, res.Report, map[string]Outcome{"example.com/gm/bld::TestUsesMissing": BuildFail, "example.com/gm/nt::TestReal": BuildFail})
	reasonHas(t, res.Report, "example.com/gm/nt::TestReal", "the build broke")
	if strings.Contains(res.Output, "should not run") {
		t.Error("the tests ran after a failed compile step")
	}
}

// The golden copy of the live run classifies the same without a Go
// toolchain.
func TestClassify_GoLiveFixture(t *testing.T) {
	if _, err := os.Stat("testdata/go-live.jsonl"); err != nil {
		t.Skip("no captured go-live.jsonl (run with -update)")
	}
	rep, err := Classify(strings.NewReader(fixture(t, "go-live.jsonl")), Options{Format: GoJSON, Root: "ROOT",
		Declared: []string{"example.com/gm/stub::TestAfterStub", "example.com/gm/setup::TestNeedsDB", "example.com/gm/bld::TestUsesMissing"}})
	if err != nil {
		t.Fatal(err)
	}
	want(t, rep, map[string]Outcome{
		"example.com/gm/calc::TestSubAssert":       FailAssert,
		"example.com/gm/stub::TestAddPanicsInStub": FailStub,
		"example.com/gm/stub::TestAfterStub":       NotRun,
		"example.com/gm/crash::TestNil":            FailError,
		"example.com/gm/bld::TestUsesMissing":      BuildFail,
		"example.com/gm/setup::TestNeedsDB":        ErrorSetup,
		"example.com/gm/tout::TestSlow":            Timeout,
		"example.com/gm/exit::TestExit1":           FailError,
		"example.com/gm/sub::TestTable/stub":       FailStub,
		"example.com/gm/calc::TestSkipped":         Skip,
	})
}

// gotestsumCmd returns the argv prefix running gotestsum, fetched through
// the Go module proxy by go run (cached after the first time), or skips.
func gotestsumCmd(t *testing.T) []string {
	t.Helper()
	needGo(t)
	argv := []string{"go", "run", "gotest.tools/gotestsum@v1.13.0"}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], "--version")...)
	cmd.Env = append(os.Environ(), goEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("gotestsum is not available through go run (no module proxy?): %v\n%s", err, out)
	}
	return argv
}

func TestRun_Gotestsum_EveryOutcome(t *testing.T) {
	gts := gotestsumCmd(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, goModule)
	declared := []string{
		"example.com/gm/stub::TestAfterStub",
		"example.com/gm/crash::TestAfter",
		"example.com/gm/bld::TestUsesMissing",
		"example.com/gm/imp::TestI",
		"example.com/gm/setup::TestNeedsDB",
		"example.com/gm/tout::TestNever",
		"example.com/gm/exit::TestB",
		"example.com/gm/sub::TestLater",
		"example.com/gm/nt::TestMissing",
	}
	res, err := Run(context.Background(), Spec{
		Argv:       append(gts, "--junitfile", "report.xml", "--format", "standard-quiet", "--", "-count=1", "-timeout=3s", "./..."),
		Dir:        dir,
		Env:        goEnv,
		Format:     JUnitXML,
		Dialect:    DialectGotestsum,
		ReportFile: "report.xml",
		Declared:   declared,
		Timeout:    4 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if b, err := os.ReadFile(dir + "/report.xml"); err == nil {
		capture(t, "gotestsum-live.xml", string(b), dir)
	}
	want(t, res.Report, map[string]Outcome{
		"example.com/gm/calc::TestSubAssert":       FailAssert,
		"example.com/gm/calc::TestStubErr":         FailStub,
		"example.com/gm/calc::TestSkipped":         Skip,
		"example.com/gm/stub::TestAddPanicsInStub": FailStub,
		"example.com/gm/stub::TestAfterStub":       NotRun,
		"example.com/gm/crash::TestNil":            FailError,
		"example.com/gm/crash::TestAfter":          NotRun,
		"example.com/gm/bld::TestUsesMissing":      BuildFail,
		"example.com/gm/imp::TestI":                BuildFail,
		"example.com/gm/setup::TestNeedsDB":        ErrorSetup,
		"example.com/gm/tout::TestQuick":           Pass,
		"example.com/gm/tout::TestSlow":            Timeout,
		"example.com/gm/tout::TestNever":           NotRun,
		"example.com/gm/exit::TestExit1":           FailError,
		"example.com/gm/exit::TestB":               NotRun,
		"example.com/gm/sub::TestTable":            FailStub,
		"example.com/gm/sub::TestTable/bad_case":   FailAssert,
		"example.com/gm/sub::TestTable/stub":       FailStub,
		"example.com/gm/sub::TestLater":            NotRun,
		"example.com/gm/subok::TestTable":          FailAssert,
		"example.com/gm/nt::TestMissing":           NotRun,
	})
	reasonHas(t, res.Report, "example.com/gm/setup::TestNeedsDB", "connection refused")
	reasonHas(t, res.Report, "example.com/gm/sub::TestTable/stub", "SUB-AGENT-TODO: sub stub")
}

// Output the format cannot read (go test without -json, read as
// go-test-json) is UNVERIFIABLE, and the report lists every declared id
// as UNVERIFIABLE: no test is left out, none is guessed.
func TestRun_UnreadableOutputListsEveryDeclaredID(t *testing.T) {
	needGo(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, goModule)
	declared := []string{"example.com/gm/nt::TestReal", "example.com/gm/calc::TestSubAssert"}
	res, err := Run(context.Background(), Spec{
		Argv:     []string{"go", "test", "-count=1", "-run", "^TestReal$", "./nt"},
		Dir:      dir,
		Env:      goEnv,
		Format:   GoJSON,
		Declared: declared,
		Timeout:  2 * time.Minute,
	})
	if !apperr.Is(err, Unverifiable) || res == nil || res.Report == nil || res.Report.Verdict != VerdictUnverifiable {
		t.Fatalf("Run: %v %+v", err, res)
	}
	if len(res.Report.Tests) != len(declared) {
		t.Fatalf("tests %s, want every declared id", ids(res.Report))
	}
	want(t, res.Report, map[string]Outcome{declared[0]: Unknown, declared[1]: Unknown})
}
