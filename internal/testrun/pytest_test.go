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

var pyProject = map[string]string{
	"pkg/__init__.py":   "",
	"tests/__init__.py": "",
	"pkg/calc.py": `def add(a, b):
    raise NotImplementedError("SUB-AGENT-TODO: T1 return a+b")

def sub(a, b):
    return 0
`,
	"tests/test_calc.py": `import pytest
from pkg import calc

def test_sub_assert():
    assert calc.sub(5, 3) == 2

def test_add_stub():
    assert calc.add(1, 2) == 3

def test_missing_attr():
    assert calc.mul(2, 3) == 6

def test_name_error():
    assert undefined_helper() == 1

def test_type_error():
    assert len(None) == 0

@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture boom")

def test_fixture_error(broken_fixture):
    pass

@pytest.fixture
def bad_teardown():
    yield 1
    raise RuntimeError("teardown boom")

def test_teardown_error(bad_teardown):
    pass

def test_passes():
    pass

def test_skipped():
    pytest.skip("not here")

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

def test_fail_call():
    pytest.fail("explicit failure")

@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert x == 1

class TestGroup:
    def test_in_class(self):
        assert 1 == 2
`,
	"tests/test_import.py": `from pkg.missing_module import thing

def test_never():
    assert thing() == 1
`,
}

// pytestCmd finds Debian's pytest: the python3 on PATH may be another
// interpreter without it. GIT_IDEATE_PYTHON names one explicitly.
func pytestCmd(t *testing.T) []string {
	t.Helper()
	cands := []string{os.Getenv("GIT_IDEATE_PYTHON"), "/usr/bin/python3", "python3"}
	for _, py := range cands {
		if py == "" {
			continue
		}
		if err := exec.Command(py, "-c", "import pytest").Run(); err == nil {
			return []string{py, "-m", "pytest", "-p", "no:cacheprovider", "-q"}
		}
	}
	t.Skip("pytest not found: install python3-pytest (apt-get install -y python3-pytest) or set GIT_IDEATE_PYTHON to a python with pytest")
	return nil
}

func TestRun_Pytest_EveryOutcome(t *testing.T) {
	py := pytestCmd(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, pyProject)
	declared := []string{
		"tests/test_calc.py::test_sub_assert",
		"tests/test_calc.py::test_add_stub",
		"tests/test_calc.py::test_missing_attr",
		"tests/test_calc.py::test_fixture_error",
		"tests/test_calc.py::TestGroup::test_in_class",
		"tests/test_calc.py::test_param[2]",
		"tests/test_import.py::test_never",
		"tests/test_calc.py::test_typo",
		"tests/test_calc.py::test_param",
	}
	res, err := Run(context.Background(), Spec{
		Argv:       append(py, "--continue-on-collection-errors", "--junitxml=report.xml", "tests"),
		Dir:        dir,
		Format:     JUnitXML,
		Dialect:    DialectPytest,
		ReportFile: "report.xml",
		Declared:   declared,
		Timeout:    2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if res.ExitCode != 1 {
		t.Errorf("pytest exit code %d, want 1", res.ExitCode)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.xml")); err == nil {
		capture(t, "pytest-live.xml", string(b), dir)
	}
	rep := res.Report
	want(t, rep, map[string]Outcome{
		"tests/test_calc.py::test_sub_assert":          FailAssert,
		"tests/test_calc.py::test_add_stub":            FailStub,
		"tests/test_calc.py::test_missing_attr":        FailError,
		"tests.test_calc::test_name_error":             FailError,
		"tests.test_calc::test_type_error":             FailError,
		"tests/test_calc.py::test_fixture_error":       ErrorSetup,
		"tests.test_calc::test_teardown_error":         ErrorSetup,
		"tests.test_calc::test_passes":                 Pass,
		"tests.test_calc::test_skipped":                Skip,
		"tests.test_calc::test_xfail":                  Skip,
		"tests.test_calc::test_fail_call":              FailAssert,
		"tests.test_calc::test_param[1]":               Pass,
		"tests/test_calc.py::test_param[2]":            FailAssert,
		"tests/test_calc.py::TestGroup::test_in_class": FailAssert,
		"tests/test_import.py::test_never":             BuildFail,
		"tests/test_calc.py::test_typo":                NotRun,
		"tests/test_calc.py::test_param":               FailAssert,
	})
	reasonHas(t, rep, "tests/test_calc.py::test_param", "worst of 2 parametrized cases (test_param[2])")
	reasonHas(t, rep, "tests/test_import.py::test_never", "No module named 'pkg.missing_module'")
	reasonHas(t, rep, "tests/test_calc.py::test_missing_attr", "AttributeError")
	if r, _ := rep.Result("tests/test_calc.py::test_sub_assert"); r.File != "tests/test_calc.py" || r.Line != 5 {
		t.Errorf("test_sub_assert at %s:%d, want tests/test_calc.py:5", r.File, r.Line)
	}
}

// Without --continue-on-collection-errors one bad file stops the session:
// the other declared tests are NOT_RUN, and the reason says why.
func TestRun_Pytest_CollectionErrorAbortsTheSession(t *testing.T) {
	py := pytestCmd(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, pyProject)
	res, err := Run(context.Background(), Spec{
		Argv:       append(py, "--junitxml=report.xml", "tests"),
		Dir:        dir,
		Format:     JUnitXML,
		Dialect:    DialectPytest,
		ReportFile: "report.xml",
		Declared:   []string{"tests/test_calc.py::test_passes", "tests/test_import.py::test_never"},
		Timeout:    2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 2 {
		t.Errorf("pytest exit code %d, want 2 (interrupted)", res.ExitCode)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.xml")); err == nil {
		capture(t, "pytest-live-abort.xml", string(b), dir)
	}
	want(t, res.Report, map[string]Outcome{
		"tests/test_calc.py::test_passes":  NotRun,
		"tests/test_import.py::test_never": BuildFail,
	})
	reasonHas(t, res.Report, "tests/test_calc.py::test_passes", "--continue-on-collection-errors")
}

// The selection the docs give for pytest, the declared tests' files with
// --continue-on-collection-errors, survives a module that cannot be
// imported: its test is BUILD_FAIL, the other file's tests run and are
// classified. Node ids instead stop the session even with the flag
// (pytest exits 4, "not found"), and the reason says so.
func TestRun_Pytest_OneBrokenModuleByFile(t *testing.T) {
	py := pytestCmd(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, pyProject)
	declared := []string{"tests/test_calc.py::test_passes", "tests/test_calc.py::test_sub_assert", "tests/test_import.py::test_never"}
	spec := Spec{
		Argv:       append(py, "--continue-on-collection-errors", "--junitxml=report.xml", "tests/test_calc.py", "tests/test_import.py"),
		Dir:        dir,
		Format:     JUnitXML,
		Dialect:    DialectPytest,
		ReportFile: "report.xml",
		Declared:   declared,
		Timeout:    2 * time.Minute,
	}
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	want(t, res.Report, map[string]Outcome{
		"tests/test_calc.py::test_passes":     Pass,
		"tests/test_calc.py::test_sub_assert": FailAssert,
		"tests/test_import.py::test_never":    BuildFail,
	})
	spec.Argv = append(py, "--continue-on-collection-errors", "--junitxml=report.xml", "tests/test_calc.py::test_passes", "tests/test_import.py::test_never")
	spec.Declared = []string{"tests/test_calc.py::test_passes", "tests/test_import.py::test_never"}
	if res, err = Run(context.Background(), spec); err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	want(t, res.Report, map[string]Outcome{"tests/test_calc.py::test_passes": NotRun, "tests/test_import.py::test_never": BuildFail})
	reasonHas(t, res.Report, "tests/test_calc.py::test_passes", "select tests by file ({files})")
}

// A runner killed at its deadline writes no report: every declared test
// is TIMEOUT, not UNVERIFIABLE and not a pass.
func TestRun_Pytest_KilledBeforeItsReport(t *testing.T) {
	py := pytestCmd(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(60)\n"})
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Argv:       append(py, "--junitxml=report.xml", "tests"),
		Dir:        dir,
		Format:     JUnitXML,
		Dialect:    DialectPytest,
		ReportFile: "report.xml",
		Declared:   []string{"tests/test_slow.py::test_slow"},
		Timeout:    3 * time.Second,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.TimedOut || time.Since(start) > 15*time.Second {
		t.Fatalf("timed out %v after %s", res.TimedOut, time.Since(start))
	}
	want(t, res.Report, map[string]Outcome{"tests/test_slow.py::test_slow": Timeout})
}

// A session with broken modules, on real pytest: a test module that
// cannot import the code it tests (ModuleNotFoundError, the honest RED
// before GREEN writes it) is BUILD_FAIL; one with a syntax error or an
// exception at module level is ERROR_SETUP; each charges its own tests
// only, and the other module's tests run and are judged.
func TestRun_Pytest_BrokenModulesChargeOnlyTheirTests(t *testing.T) {
	py := pytestCmd(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, brokenPyProject)
	files := []string{"tests/test_ok.py", "tests/test_needs_prod.py", "tests/test_syntax.py", "tests/test_module_error.py"}
	res, err := Run(context.Background(), Spec{
		Argv:       append(append(py, "--continue-on-collection-errors", "--junitxml=report.xml"), files...),
		Dir:        dir,
		Format:     JUnitXML,
		Dialect:    DialectPytest,
		ReportFile: "report.xml",
		Declared:   brokenPyDeclared[:5],
		Timeout:    2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.xml")); err == nil {
		capture(t, "pytest-live-broken-modules.xml", string(b), dir)
	}
	want(t, res.Report, map[string]Outcome{
		"tests/test_ok.py::test_one":             Pass,
		"tests/test_ok.py::test_two":             FailAssert,
		"tests/test_needs_prod.py::test_add":     BuildFail,
		"tests/test_syntax.py::test_broken":      ErrorSetup,
		"tests/test_module_error.py::test_never": ErrorSetup,
	})
	reasonHas(t, res.Report, "tests/test_needs_prod.py::test_add", "No module named 'calc'")
	reasonHas(t, res.Report, "tests/test_syntax.py::test_broken", "SyntaxError")
	reasonHas(t, res.Report, "tests/test_module_error.py::test_never", "JSONDecodeError")
}

// A conftest.py that raises kills the whole pytest session before any
// report is written, whatever the selection. With Spec.Subset the engine
// runs each declared file on its own: the files under the broken conftest
// are ERROR_SETUP naming it, the others keep their own outcomes. Without
// it the run stays UNVERIFIABLE, never a pass.
func TestRun_Pytest_BrokenConftestChargesOnlyItsFiles(t *testing.T) {
	py := pytestCmd(t)
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, brokenPyProject)
	writeTree(t, dir, map[string]string{
		"tests/sub/conftest.py":    "raise RuntimeError(\"conftest blew up\")\n",
		"tests/sub/test_in_sub.py": "def test_sub():\n    assert True\n",
	})
	head := append(py, "--continue-on-collection-errors", "--junitxml=report.xml")
	byFile := func(ids []string) []string {
		argv, seen := append([]string(nil), head...), map[string]bool{}
		for _, id := range ids {
			f, _, _ := strings.Cut(id, "::")
			if !seen[f] {
				seen[f] = true
				argv = append(argv, f)
			}
		}
		return argv
	}
	spec := Spec{
		Argv: byFile(brokenPyDeclared), Dir: dir, Format: JUnitXML, Dialect: DialectPytest,
		ReportFile: "report.xml", Declared: brokenPyDeclared, Timeout: 2 * time.Minute,
	}
	res, err := Run(context.Background(), spec)
	if err == nil || res.Report.Verdict != VerdictUnverifiable || !strings.Contains(res.Output, "while loading conftest") {
		t.Fatalf("without Subset: %v, verdict %s\n%s", err, res.Report.Verdict, res.Output)
	}
	spec.Subset = byFile
	res, err = Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	want(t, res.Report, map[string]Outcome{
		"tests/test_ok.py::test_one":             Pass,
		"tests/test_ok.py::test_two":             FailAssert,
		"tests/test_needs_prod.py::test_add":     BuildFail,
		"tests/test_syntax.py::test_broken":      ErrorSetup,
		"tests/test_module_error.py::test_never": ErrorSetup,
		"tests/sub/test_in_sub.py::test_sub":     ErrorSetup,
	})
	reasonHas(t, res.Report, "tests/sub/test_in_sub.py::test_sub", "pytest could not load tests/sub/conftest.py: RuntimeError: conftest blew up")
	if res.Reruns != 5 {
		t.Errorf("per-file runs: %d, want 5 (one per declared file)", res.Reruns)
	}
}

var brokenPyProject = map[string]string{
	"tests/test_ok.py":           "def test_one():\n    assert 1 == 1\n\ndef test_two():\n    assert 1 == 2\n",
	"tests/test_needs_prod.py":   "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
	"tests/test_syntax.py":       "def test_broken(:\n    pass\n",
	"tests/test_module_error.py": "import json\nx = json.loads(\"{\")\n\ndef test_never():\n    pass\n",
}

var brokenPyDeclared = []string{
	"tests/test_ok.py::test_one", "tests/test_ok.py::test_two", "tests/test_needs_prod.py::test_add",
	"tests/test_syntax.py::test_broken", "tests/test_module_error.py::test_never", "tests/sub/test_in_sub.py::test_sub",
}
