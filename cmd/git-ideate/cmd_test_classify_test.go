package main

import (
	"encoding/json"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"strings"
	"testing"
)

func testrunFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../internal/testrun/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type classifyOut struct {
	Verdict string `json:"verdict"`
	Tests   []struct {
		ID       string `json:"id"`
		Outcome  string `json:"outcome"`
		Reason   string `json:"reason"`
		Declared bool   `json:"declared"`
	} `json:"tests"`
}

// `git ideate test classify` through git, outside any repository: one
// object per test, declared ids first.
func TestTestClassify_GoJSON(t *testing.T) {
	r := bin(t, t.TempDir(), testrunFixture(t, "evidence-go-test.jsonl"), "test", "classify", "--format", "go-test-json",
		"--declared", "example.com/redprobe/calc::TestAlreadyPasses", "--declared", "example.com/redprobe/broken::TestUsesMissingSymbol")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var out classifyOut
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	got := map[string]string{}
	for _, x := range out.Tests {
		got[x.ID] = x.Outcome
	}
	wantOut := map[string]string{
		"example.com/redprobe/calc::TestAlreadyPasses":       "NOT_RUN",
		"example.com/redprobe/broken::TestUsesMissingSymbol": "BUILD_FAIL",
		"example.com/redprobe/calc::TestSubAssert":           "FAIL_ASSERT",
		"example.com/redprobe/calc::TestAddPanicsInStub":     "FAIL_STUB",
	}
	for id, o := range wantOut {
		if got[id] != o {
			t.Errorf("%s: %q, want %s", id, got[id], o)
		}
	}
	if out.Verdict != "FAIL" || !out.Tests[0].Declared || out.Tests[0].ID != "example.com/redprobe/calc::TestAlreadyPasses" {
		t.Errorf("verdict %s, first %+v", out.Verdict, out.Tests[0])
	}
}

func TestTestClassify_StubMarker(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestX"}
{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:3: TODO(agent): write me\n"}
{"Action":"fail","Package":"p","Test":"TestX"}
`
	r := cli(t, t.TempDir(), in, "test", "classify", "--format=go-test-json", "--stub-marker", "TODO(agent)")
	if r.code != 0 || !strings.Contains(r.out, `"outcome": "FAIL_STUB"`) {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.err)
	}
	r = cli(t, t.TempDir(), in, "test", "classify", "--format=go-test-json")
	if !strings.Contains(r.out, `"outcome": "FAIL_ASSERT"`) {
		t.Fatalf("without the marker: %s", r.out)
	}
}

// An output that cannot be read in the declared format, or no declared
// format, is UNVERIFIABLE with its own exit status (corecmd.ExitUnverifiable),
// never a pass.
func TestTestClassify_Unverifiable(t *testing.T) {
	junit := testrunFixture(t, "evidence-pytest-junit.xml")
	for _, args := range [][]string{
		{"test", "classify"},
		{"test", "classify", "--format", "tap"},
		{"test", "classify", "--format", "junit-xml"},
		{"test", "classify", "--format", "junit-xml", "--dialect", "vitest"},
		{"test", "classify", "--format", "go-test-json"},
	} {
		r := cli(t, t.TempDir(), junit, args...)
		if r.code != corecmd.ExitUnverifiable || !strings.Contains(r.err, "UNVERIFIABLE: ") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.err)
		}
		var out classifyOut
		if err := json.Unmarshal([]byte(r.out), &out); err != nil || out.Verdict != "UNVERIFIABLE" {
			t.Errorf("%v: verdict %q (%v)", args, out.Verdict, err)
		}
	}
}

// --declared takes one id per flag, so a parametrised pytest id keeps the
// commas of its parameters.
func TestTestClassify_ParametrisedIDWithCommas(t *testing.T) {
	report := `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2"><testcase classname="tests.test_add" name="test_add[1, 2]" /><testcase classname="tests.test_add" name="test_add[3, 4]"><failure message="assert 7 == 8">assert 7 == 8</failure></testcase></testsuite></testsuites>`
	r := bin(t, t.TempDir(), report, "test", "classify", "--format", "junit-xml", "--dialect", "pytest",
		"--declared", "tests/test_add.py::test_add[1, 2]", "--declared", "tests/test_add.py::test_add[3, 4]")
	var out classifyOut
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("%v\n%s %s", err, r.out, r.err)
	}
	got := map[string]string{}
	for _, x := range out.Tests {
		if x.Declared {
			got[x.ID] = x.Outcome
		}
	}
	if len(got) != 2 || got["tests/test_add.py::test_add[1, 2]"] != "PASS" || got["tests/test_add.py::test_add[3, 4]"] != "FAIL_ASSERT" {
		t.Fatalf("declared outcomes %v\n%s", got, r.out)
	}
}
