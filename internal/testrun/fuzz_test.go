package testrun

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkReport holds for every report: UNVERIFIABLE iff an error; each
// declared id has exactly one result, first and in order; outcomes are
// known; reasons are one line.
func checkReport(t *testing.T, rep *Report, err error, declared []string) {
	t.Helper()
	if rep == nil {
		t.Fatal("nil report")
	}
	if (err != nil) != (rep.Verdict == VerdictUnverifiable) {
		t.Fatalf("error %v with verdict %s", err, rep.Verdict)
	}
	if err != nil {
		return
	}
	want := dedupe(declared)
	for i, id := range want {
		if i >= len(rep.Tests) || rep.Tests[i].ID != id || !rep.Tests[i].Declared {
			t.Fatalf("declared %q is not result %d: %s", id, i, ids(rep))
		}
	}
	n := 0
	for _, r := range rep.Tests {
		if !slices.Contains(Outcomes, r.Outcome) {
			t.Fatalf("unknown outcome %q", r.Outcome)
		}
		if strings.ContainsAny(r.Reason, "\n") && r.Outcome != Pass {
			// Reasons come from oneLine or msgLoc, which never keep a newline.
			t.Fatalf("%s: reason %q", r.ID, r.Reason)
		}
		if r.Declared {
			n++
		}
	}
	if n != len(want) {
		t.Fatalf("%d declared results, want %d", n, len(want))
	}
	if rep.Verdict == VerdictPass {
		for _, r := range rep.Tests {
			if r.Outcome != Pass && r.Outcome != Skip || r.Declared && r.Outcome != Pass {
				t.Fatalf("verdict PASS with %s %s", r.ID, r.Outcome)
			}
		}
	}
}

func seedFiles(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			continue
		}
		f.Add(b, "TestX,example.com/gm/calc::TestSubAssert", false)
	}
}

func splitDeclared(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// The seeds are whole runner outputs (up to 60 KB): fuzz with
// -fuzzminimizetime 1s, or the engine spends its time minimizing them.
func FuzzClassifyGoJSON(f *testing.F) {
	seedFiles(f, "evidence-go-test.jsonl", "go-live.jsonl", "go-no-tests.jsonl")
	f.Add([]byte(`{"Action":"run","Package":"p","Test":"A"}`+"\n"+`{"Action":"output","Package":"p","Test":"A","Output":"panic: x\n"}`), "p::A,p::B", true)
	f.Fuzz(func(t *testing.T, in []byte, declared string, timedOut bool) {
		d := splitDeclared(declared)
		rep, err := Classify(bytes.NewReader(in), Options{Format: GoJSON, Declared: d, TimedOut: timedOut})
		checkReport(t, rep, err, d)
	})
}

func FuzzClassifyJUnit(f *testing.F) {
	files := []string{"evidence-pytest-junit.xml", "pytest-live.xml", "pytest-live-abort.xml", "evidence-vitest-junit.xml",
		"vitest-junit-live.xml", "jest-junit-live.xml", "evidence-gotestsum-junit.xml", "gotestsum-live.xml", "nextest-handwritten.xml", "surefire-handwritten.xml"}
	for i, n := range files {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err == nil {
			f.Add(b, "a::b,tests/test_calc.py::test_passes", uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, declared string, dialect uint8) {
		d := splitDeclared(declared)
		dl := JUnitDialects[int(dialect)%len(JUnitDialects)]
		rep, err := Classify(bytes.NewReader(in), Options{Format: JUnitXML, Dialect: dl, Declared: d})
		checkReport(t, rep, err, d)
	})
}

func FuzzClassifyJestJSON(f *testing.F) {
	seedFiles(f, "evidence-jest.json", "evidence-vitest.json", "jest-live.json", "vitest-live.json")
	f.Add([]byte(`{"testResults":[{"name":"/a/x.test.js","status":"failed","assertionResults":[]}]}`), "x.test.js::t", false)
	f.Fuzz(func(t *testing.T, in []byte, declared string, vitest bool) {
		d := splitDeclared(declared)
		dl := DialectJest
		if vitest {
			dl = DialectVitest
		}
		rep, err := Classify(bytes.NewReader(in), Options{Format: JestJSON, Dialect: dl, Declared: d, Root: "/a"})
		checkReport(t, rep, err, d)
	})
}
