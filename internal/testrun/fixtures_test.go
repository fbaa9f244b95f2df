package testrun

import (
	"strings"
	"testing"
)

// Every fixture in testdata/ classified, each with the outcomes its run
// really had.
func TestClassify_Fixtures(t *testing.T) {
	cases := []struct {
		file     string
		opts     Options
		outcomes map[string]Outcome
	}{
		{"evidence-go-test.jsonl", Options{Format: GoJSON, Declared: []string{
			"example.com/redprobe/calc::TestAlreadyPasses", "example.com/redprobe/broken::TestUsesMissingSymbol"}},
			map[string]Outcome{
				"example.com/redprobe/calc::TestSubAssert":           FailAssert,
				"example.com/redprobe/calc::TestAddPanicsInStub":     FailStub,
				"example.com/redprobe/calc::TestAlreadyPasses":       NotRun,
				"example.com/redprobe/broken::TestUsesMissingSymbol": BuildFail,
			}},
		{"go-no-tests.jsonl", Options{Format: GoJSON, Declared: []string{"example.com/gm/nt::TestTypo"}},
			map[string]Outcome{"example.com/gm/nt::TestTypo": NotRun}},
		{"evidence-gotestsum-junit.xml", Options{Format: JUnitXML, Dialect: DialectGotestsum, Declared: []string{
			"example.com/redprobe/broken::TestUsesMissingSymbol", "example.com/redprobe/calc::TestAlreadyPasses"}},
			map[string]Outcome{
				"example.com/redprobe/calc::TestSubAssert":           FailAssert,
				"example.com/redprobe/calc::TestAddPanicsInStub":     FailStub,
				"example.com/redprobe/broken::TestUsesMissingSymbol": BuildFail,
				"example.com/redprobe/calc::TestAlreadyPasses":       NotRun,
			}},
		{"gotestsum-live.xml", Options{Format: JUnitXML, Dialect: DialectGotestsum, Declared: []string{"example.com/gm/crash::TestAfter", "example.com/gm/tout::TestNever"}},
			map[string]Outcome{
				"example.com/gm/calc::TestSubAssert":       FailAssert,
				"example.com/gm/stub::TestAddPanicsInStub": FailStub,
				"example.com/gm/crash::TestNil":            FailError,
				"example.com/gm/crash::TestAfter":          NotRun,
				"example.com/gm/exit::TestExit1":           FailError,
				"example.com/gm/tout::TestSlow":            Timeout,
				"example.com/gm/tout::TestNever":           NotRun,
				"example.com/gm/sub::TestTable/stub":       FailStub,
				"example.com/gm/setup::TestNeedsDB":        ErrorSetup,
				"example.com/gm/vet::TestV":                BuildFail,
			}},
		{"evidence-pytest-junit.xml", Options{Format: JUnitXML, Dialect: DialectPytest, Declared: []string{"tests/test_import.py::test_x"}},
			map[string]Outcome{
				"tests/test_import.py::test_x":        BuildFail,
				"tests/test_calc.py::test_sub_assert": FailAssert,
				"tests.test_calc::test_add_stub":      FailStub,
				"tests.test_calc::test_missing_attr":  FailError,
				"tests.test_calc::test_name_error":    FailError,
				"tests.test_calc::test_fixture_error": ErrorSetup,
				"tests.test_calc::test_passes":        Pass,
			}},
		{"pytest-live.xml", Options{Format: JUnitXML, Dialect: DialectPytest},
			map[string]Outcome{
				"tests.test_calc::test_sub_assert":             FailAssert,
				"tests.test_calc::test_add_stub":               FailStub,
				"tests.test_calc::test_type_error":             FailError,
				"tests.test_calc::test_teardown_error":         ErrorSetup,
				"tests.test_calc::test_xfail":                  Skip,
				"tests.test_calc.TestGroup::test_in_class":     FailAssert,
				"tests/test_calc.py::TestGroup::test_in_class": FailAssert,
				"tests.test_import":                            BuildFail,
			}},
		{"pytest-live-abort.xml", Options{Format: JUnitXML, Dialect: DialectPytest, Declared: []string{"tests/test_calc.py::test_passes"}},
			map[string]Outcome{"tests/test_calc.py::test_passes": NotRun, "tests.test_import": BuildFail}},
		{"pytest-live-broken-modules.xml", Options{Format: JUnitXML, Dialect: DialectPytest, Declared: []string{"tests/test_needs_prod.py::test_add", "tests/test_syntax.py::test_broken", "tests/test_module_error.py::test_never", "tests/test_ok.py::test_one"}},
			map[string]Outcome{
				"tests/test_needs_prod.py::test_add":     BuildFail,
				"tests/test_syntax.py::test_broken":      ErrorSetup,
				"tests/test_module_error.py::test_never": ErrorSetup,
				"tests/test_ok.py::test_one":             Pass,
				"tests.test_ok::test_two":                FailAssert,
			}},
		{"evidence-vitest-junit.xml", Options{Format: JUnitXML, Dialect: DialectVitest, Declared: []string{"vt/import.test.js::anything"}},
			map[string]Outcome{
				"vt/calc.test.js::calc > sub asserts":     FailAssert,
				"vt/calc.test.js::calc > add stub throws": FailStub,
				"vt/calc.test.js::calc > mul missing":     FailError,
				"vt/calc.test.js::calc > passes":          Pass,
				"vt/import.test.js::anything":             BuildFail,
			}},
		{"vitest-junit-live.xml", Options{Format: JUnitXML, Dialect: DialectVitest},
			map[string]Outcome{
				"calc.test.js::calc > slow":      Timeout,
				"calc.test.js::setup > needs db": ErrorSetup,
				"syntax.test.js":                 BuildFail,
			}},
		{"evidence-vitest.json", Options{Format: JestJSON, Dialect: DialectVitest},
			map[string]Outcome{
				"calc sub asserts":     FailAssert,
				"calc add stub throws": FailStub,
				"calc mul missing":     FailError,
				"calc passes":          Pass,
			}},
		{"vitest-live.json", Options{Format: JestJSON, Dialect: DialectVitest, Root: "ROOT"},
			map[string]Outcome{
				"calc.test.js::calc > slow": Timeout,
				"import.test.js":            BuildFail,
			}},
		{"evidence-jest.json", Options{Format: JestJSON, Dialect: DialectJest},
			map[string]Outcome{
				"calc sub asserts":     FailAssert,
				"calc add stub throws": FailStub,
				"calc mul missing":     FailError,
				"calc passes":          Pass,
			}},
		{"jest-live.json", Options{Format: JestJSON, Dialect: DialectJest, Root: "ROOT"},
			map[string]Outcome{
				"calc.test.cjs::setup > needs db": ErrorSetup,
				"calc.test.cjs::calc > slow":      Timeout,
				"import.test.cjs":                 BuildFail,
			}},
		{"jest-junit-live.xml", Options{Format: JUnitXML, Dialect: DialectJestJUnit},
			map[string]Outcome{
				"calc.test.cjs::calc > sub asserts": FailAssert,
				"calc.test.cjs::calc > mul missing": FailError,
				"calc.test.cjs::setup > needs db":   ErrorSetup,
			}},
		{"nextest-handwritten.xml", Options{Format: JUnitXML, Dialect: DialectNextest, Declared: []string{"redprobe::calc::sub_asserts", "redprobe::calc::gone"}},
			map[string]Outcome{
				"redprobe::calc::passes":          Pass,
				"redprobe::calc::sub_asserts":     FailAssert,
				"redprobe::calc::add_stub_panics": FailStub,
				"redprobe::calc::unwrap_none":     FailError,
				"redprobe::calc::slow":            Timeout,
				"redprobe::calc::segfaults":       FailError,
				"redprobe::calc::gone":            NotRun,
			}},
		{"surefire-handwritten.xml", Options{Format: JUnitXML, Dialect: DialectSurefire, Declared: []string{"com.example.DbTest::connects"}},
			map[string]Outcome{
				"com.example.CalcTest::subAsserts": FailAssert,
				"com.example.CalcTest::addStub":    FailStub,
				"com.example.CalcTest::nullDeref":  FailError,
				"com.example.CalcTest::slow":       Timeout,
				"com.example.CalcTest::passes":     Pass,
				"com.example.CalcTest::ignored":    Skip,
				"com.example.DbTest::connects":     ErrorSetup,
			}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			// Look results up by declared id: the ids above are declared too.
			opts := c.opts
			for id := range c.outcomes {
				opts.Declared = append(opts.Declared, id)
			}
			rep, err := Classify(strings.NewReader(fixture(t, c.file)), opts)
			if err != nil {
				t.Fatal(err)
			}
			want(t, rep, c.outcomes)
			if rep.Verdict != VerdictFail {
				t.Errorf("verdict %s, want FAIL", rep.Verdict)
			}
			for _, r := range rep.Tests {
				if r.Outcome != Pass && r.Outcome != Skip && r.Reason == "" && r.Outcome != NotRun {
					t.Errorf("%s: %s without a reason", r.ID, r.Outcome)
				}
				if strings.Contains(r.Reason, "\n") {
					t.Errorf("%s: reason is not one line: %q", r.ID, r.Reason)
				}
			}
		})
	}
}

// A format that is not declared, not known, or not what the output is, is
// UNVERIFIABLE: never a guess, never a pass.
func TestClassify_Unverifiable(t *testing.T) {
	goOut := fixture(t, "evidence-go-test.jsonl")
	junit := fixture(t, "evidence-pytest-junit.xml")
	cases := []struct {
		name string
		in   string
		opts Options
		why  string
	}{
		{"no format", goOut, Options{}, "no output format declared"},
		{"unknown format", goOut, Options{Format: "tap"}, "unknown output format"},
		{"junit without dialect", junit, Options{Format: JUnitXML}, "needs a dialect"},
		{"unknown dialect", junit, Options{Format: JUnitXML, Dialect: "mocha"}, "unknown junit-xml dialect"},
		{"dialect contradicts the report", junit, Options{Format: JUnitXML, Dialect: DialectVitest}, "looks like pytest"},
		{"go json given junit", junit, Options{Format: GoJSON}, "none of the"},
		{"junit given go json", goOut, Options{Format: JUnitXML, Dialect: DialectPytest}, "not a readable JUnit"},
		{"jest given junit", junit, Options{Format: JestJSON}, "not a readable jest"},
		{"empty go", "", Options{Format: GoJSON}, "empty"},
		{"empty junit", "", Options{Format: JUnitXML, Dialect: DialectPytest}, "empty"},
		{"empty jest", "", Options{Format: JestJSON}, "empty"},
		{"json without testResults", `{"numTotalTests":3}`, Options{Format: JestJSON}, "no testResults"},
		{"html", "<html><body>hi</body></html>", Options{Format: JUnitXML, Dialect: DialectSurefire}, "root element is <html>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Classify(strings.NewReader(c.in), c.opts)
			if err == nil {
				t.Fatalf("no error; verdict %s", rep.Verdict)
			}
			if rep == nil || rep.Verdict != VerdictUnverifiable {
				t.Fatalf("verdict %v, want UNVERIFIABLE", rep)
			}
			if !strings.Contains(err.Error(), "UNVERIFIABLE: ") || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("error %q, want UNVERIFIABLE naming %q", err, c.why)
			}
		})
	}
}

func TestClassify_DeclaredIDs(t *testing.T) {
	out := fixture(t, "go-live.jsonl")
	rep, err := Classify(strings.NewReader(out), Options{Format: GoJSON, Declared: []string{
		"TestSubAssert", // bare and unique: found
		"TestTable",     // bare, in two packages: ambiguous
		"TestSubAssert", // a repeat is one result
		"  ",            // blank: ignored
		"example.com/gm/calc::TestNope",
	}})
	if err != nil {
		t.Fatal(err)
	}
	want(t, rep, map[string]Outcome{"TestSubAssert": FailAssert, "TestTable": NotRun, "example.com/gm/calc::TestNope": NotRun})
	reasonHas(t, rep, "TestTable", "matches 2 tests")
	n := 0
	for _, r := range rep.Tests {
		if r.Declared {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d declared results, want 3", n)
	}
	if r, _ := rep.Result("TestSubAssert"); r.RunnerID != "example.com/gm/calc::TestSubAssert" {
		t.Errorf("runner id %q", r.RunnerID)
	}
	if len(rep.Notes) == 0 {
		t.Error("no note about the ambiguous id")
	}
}

func TestClassify_Verdicts(t *testing.T) {
	pass := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p"}
`
	rep, _ := Classify(strings.NewReader(pass), Options{Format: GoJSON})
	if rep.Verdict != VerdictPass {
		t.Errorf("verdict %s, want PASS", rep.Verdict)
	}
	rep, _ = Classify(strings.NewReader(pass), Options{Format: GoJSON, Declared: []string{"p::TestB"}})
	if rep.Verdict != VerdictFail {
		t.Errorf("declared skip: verdict %s, want FAIL", rep.Verdict)
	}
	rep, _ = Classify(strings.NewReader(`{"Action":"skip","Package":"p","Test":"TestB"}`), Options{Format: GoJSON})
	if rep.Verdict != VerdictNoTests {
		t.Errorf("all skipped: verdict %s, want NO_TESTS", rep.Verdict)
	}
	// A stream cut while a test ran: NOT_RUN, and with the run known to be
	// killed at its deadline, TIMEOUT.
	cut := `{"Action":"run","Package":"p","Test":"TestA"}` + "\n"
	rep, _ = Classify(strings.NewReader(cut), Options{Format: GoJSON})
	want(t, rep, map[string]Outcome{"p::TestA": NotRun})
	rep, _ = Classify(strings.NewReader(cut), Options{Format: GoJSON, TimedOut: true, Declared: []string{"p::TestZ"}})
	want(t, rep, map[string]Outcome{"p::TestA": Timeout, "p::TestZ": Timeout})
}
