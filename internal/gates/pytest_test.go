package gates_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// pythonWithPytest finds Debian's pytest the way internal/testrun's tests
// do: the python3 on PATH may be another; CI installs python3-pytest.
func pythonWithPytest(t *testing.T) string {
	t.Helper()
	for _, py := range []string{os.Getenv("GIT_IDEATE_PYTHON"), "/usr/bin/python3", "python3"} {
		if py == "" {
			continue
		}
		if err := exec.Command(py, "-c", "import pytest").Run(); err == nil {
			return py
		}
	}
	t.Skip("pytest not found: install python3-pytest (apt-get install -y python3-pytest) or set GIT_IDEATE_PYTHON to a python with pytest")
	return ""
}

func pytestRunner(py string) string {
	return `
## Test runners

### python

- Extensions: ` + "`.py`" + `
- Test files: ` + "`tests/**/test_*.py`" + `
- Run: ` + "`" + py + ` -m pytest -p no:cacheprovider --continue-on-collection-errors --junitxml={report} {node_ids}` + "`" + `
- Format: ` + "`junit-xml`" + `
- Dialect: ` + "`pytest`" + `
`
}

// The RED-by-assertion, RED-with-an-import-error and GREEN trio with
// pytest.
func TestGates_PytestProject(t *testing.T) {
	py := pythonWithPytest(t)
	f := newFixture(t, pytestRunner(py), map[string]string{
		"calc.py":            "def add(a, b):\n    return a + b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
		// The task declares what it builds: GREEN checks calc.sub is pinned.
		"docs/agents/sprint1/s1-01-rune-helpers/tasks.md": pinTasks("calc.sub") + "\n## T2 — the RED that cannot import\n\nFiles: `tests/**`\nDepends on: none\n",
	})
	const id = "tests/test_sub.py::test_sub"
	subTest := "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
	shim := "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):  # agentic:shim\n    return 0\n"

	wt := f.start(t, "S1-01/T2", id)
	commit(t, wt, "red with an import error", map[string]string{"tests/test_sub.py": "from calc import subtract\n\n\ndef test_sub():\n    assert subtract(3, 1) == 2\n"})
	v := f.judge(t, "red", "S1-01/T2")
	want(t, v, gates.FAIL, "build_fail")

	wt = f.start(t, "S1-01/T1", id)
	commit(t, wt, "red", map[string]string{"tests/test_sub.py": subTest, "calc.py": shim})
	v = f.judge(t, "red", "S1-01/T1")
	want(t, v, gates.PASS, "")
	if len(v.Tests) != 1 || v.Tests[0].Outcome != "FAIL_ASSERT" {
		t.Errorf("red tests %+v", v.Tests)
	}
	commit(t, wt, "green", map[string]string{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"})
	v = f.judge(t, "green", "S1-01/T1")
	wantPin(t, v, gates.PASS, "")
	if st := gt.Git(t, wt, "status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the gates' runs left files in the worktree:\n%s", st)
	}
}
