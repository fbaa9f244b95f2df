package gates_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/testrun"
)

// A task's pytest run, through the runner standards.md declares, judges
// each module by its own collection and survives a conftest.py that kills
// the session: the gates run each declared file alone with the same
// template, and only the files under the broken conftest are ERROR_SETUP.
func TestRunTask_PytestConftestErrorChargesOnlyItsFiles(t *testing.T) {
	py := ""
	for _, c := range []string{os.Getenv("GIT_IDEATE_PYTHON"), "/usr/bin/python3", "python3"} {
		if c != "" && exec.Command(c, "-c", "import pytest").Run() == nil {
			py = c
			break
		}
	}
	if py == "" {
		t.Skip("pytest not found: apt-get install python3-pytest, or set GIT_IDEATE_PYTHON")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"tests/test_ok.py":         "def test_one():\n    assert 1 == 1\n",
		"tests/test_needs_prod.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
		"tests/test_syntax.py":     "def test_broken(:\n    pass\n",
		"tests/sub/conftest.py":    "raise RuntimeError(\"conftest blew up\")\n",
		"tests/sub/test_in_sub.py": "def test_sub():\n    assert True\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	st := &plan.Standards{Runners: []*plan.Runner{{Language: "python", Extensions: []string{".py"},
		Run:    py + " -m pytest -p no:cacheprovider -q --continue-on-collection-errors --junitxml={report} {files}",
		Format: string(testrun.JUnitXML), Dialect: string(testrun.DialectPytest)}}}
	tests := []string{"tests/test_ok.py::test_one", "tests/test_needs_prod.py::test_add", "tests/test_syntax.py::test_broken", "tests/sub/test_in_sub.py::test_sub"}
	res, err := gates.RunTask(context.Background(), st, dir, tests, gates.RunOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatalf("RunTask: %v\n%s", err, res.Output)
	}
	want := map[string]testrun.Outcome{
		"tests/test_ok.py::test_one":         testrun.Pass,
		"tests/test_needs_prod.py::test_add": testrun.BuildFail,
		"tests/test_syntax.py::test_broken":  testrun.ErrorSetup,
		"tests/sub/test_in_sub.py::test_sub": testrun.ErrorSetup,
	}
	for id, o := range want {
		if r, ok := res.Report.Result(id); !ok || r.Outcome != o {
			t.Errorf("%s: %s (%s), want %s", id, r.Outcome, r.Reason, o)
		}
	}
}
