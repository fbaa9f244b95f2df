package testrun

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Outcome is how one test ended, computed from the runner's own output.
type Outcome string

// The outcomes, in the order doc.go describes them.
const (
	Pass       Outcome = "PASS"        // ran and passed
	FailAssert Outcome = "FAIL_ASSERT" // ran; an assertion rejected the behaviour
	FailStub   Outcome = "FAIL_STUB"   // ran; hit a declared stub marker
	FailError  Outcome = "FAIL_ERROR"  // ran; another runtime error (nil deref, TypeError, os.Exit)
	ErrorSetup Outcome = "ERROR_SETUP" // a fixture, setup hook, TestMain or teardown failed
	BuildFail  Outcome = "BUILD_FAIL"  // its package or file could not compile, import or be collected
	NotRun     Outcome = "NOT_RUN"     // declared, but no terminal event
	Timeout    Outcome = "TIMEOUT"     // started and was stopped by a timeout
	Skip       Outcome = "SKIP"        // skipped (also pytest xfail)
	// Unknown is every declared test's outcome in an UNVERIFIABLE report:
	// the output could not be read, so nothing is known of any of them.
	Unknown Outcome = "UNVERIFIABLE"
)

// Outcomes lists every outcome, for validation and stable counts.
var Outcomes = []Outcome{Pass, FailAssert, FailStub, FailError, ErrorSetup, BuildFail, NotRun, Timeout, Skip, Unknown}

// Verdict is the run-level judgement of a report.
type Verdict string

const (
	// VerdictPass: at least one test ran, and every test passed or was
	// skipped, and no declared test was skipped.
	VerdictPass Verdict = "PASS"
	// VerdictFail: the output was read and some test did not pass.
	VerdictFail Verdict = "FAIL"
	// VerdictNoTests: the output was read and holds no test at all (and none
	// was declared). Never a pass.
	VerdictNoTests Verdict = "NO_TESTS"
	// VerdictUnverifiable: the format is unknown or undeclared, or the
	// output could not be read in it. Never a pass.
	VerdictUnverifiable Verdict = "UNVERIFIABLE"
)

// Error codes of this package.
const (
	Unverifiable             = apperr.Unverifiable // the output could not be judged (the CLI exits 4)
	RunnerFailed apperr.Code = "RUNNER"            // the test command could not start
	Canceled     apperr.Code = "CANCELED"          // ctx ended the run
)

// Format names a runner output format.
type Format string

// The formats read.
const (
	GoJSON   Format = "go-test-json" // go test -json (test2json)
	JUnitXML Format = "junit-xml"    // JUnit XML; needs a Dialect
	JestJSON Format = "jest-json"    // jest --json, vitest --reporter=json
)

// Formats lists the formats read.
var Formats = []Format{GoJSON, JUnitXML, JestJSON}

// Dialect names the producer of a format whose meaning varies by producer.
type Dialect string

// JUnit dialects (doc.go gives each one's mapping) and the JSON producers.
const (
	DialectPytest    Dialect = "pytest"
	DialectVitest    Dialect = "vitest"
	DialectJestJUnit Dialect = "jest-junit"
	DialectGotestsum Dialect = "gotestsum"
	DialectNextest   Dialect = "cargo-nextest"
	DialectLibtest   Dialect = "cargo-test"
	DialectSurefire  Dialect = "surefire"
	DialectJest      Dialect = "jest"
)

// JUnitDialects are the dialects accepted with JUnitXML.
var JUnitDialects = []Dialect{DialectPytest, DialectVitest, DialectJestJUnit, DialectGotestsum, DialectNextest, DialectLibtest, DialectSurefire}

// DefaultStubMarkers are used when Options.StubMarkers is empty.
var DefaultStubMarkers = []string{"SUB-AGENT-TODO"}

// Result is one test's outcome.
type Result struct {
	// ID is the test's id: the declared id when the test was declared,
	// otherwise the runner's own (go: "import/path::TestX/sub"; pytest:
	// "dotted.module[.Class]::name"; JavaScript: "file::describe > title").
	ID      string  `json:"id"`
	Outcome Outcome `json:"outcome"`
	// Reason is one line saying why (the assertion message, the panic, the
	// first compile error, what stopped the run).
	Reason string `json:"reason,omitempty"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	// Declared is true for a test named in Options.Declared.
	Declared bool `json:"declared,omitempty"`
	// Rerun is true when the outcome comes from running this test alone
	// after a crash of its first run (see Spec.Isolate).
	Rerun bool `json:"rerun,omitempty"`
	// RunnerID is the runner's id when it differs from ID.
	RunnerID string `json:"runner_id,omitempty"`

	crashed bool // NOT_RUN because the run crashed before reaching it
}

// Report is the classification of one run.
type Report struct {
	Format  Format          `json:"format"`
	Dialect Dialect         `json:"dialect,omitempty"`
	Verdict Verdict         `json:"verdict"`
	Reason  string          `json:"reason,omitempty"`
	Counts  map[Outcome]int `json:"counts"`
	// Tests holds the declared tests first, in declared order, then every
	// other test in the order the runner reported it.
	Tests []Result `json:"tests"`
	// Notes are facts a reader should know that are not one test's outcome
	// (an ambiguous declared id, a selector that matched several tests).
	Notes []string `json:"notes,omitempty"`
}

// Result returns the result for id (as it appears in Tests), if any.
func (r *Report) Result(id string) (Result, bool) {
	for _, t := range r.Tests {
		if t.ID == id {
			return t, true
		}
	}
	return Result{}, false
}

// Options says how to read an output.
type Options struct {
	Format  Format
	Dialect Dialect
	// Declared are the test ids the caller expects. Each gets exactly one
	// result; one the output never mentions is NOT_RUN (or the outcome of
	// its package or file: BUILD_FAIL, ERROR_SETUP).
	Declared []string
	// StubMarkers are the texts that make a failure FAIL_STUB; empty means
	// DefaultStubMarkers.
	StubMarkers []string
	// Root, when set, is cut from the front of absolute file paths.
	Root string
	// TimedOut says the run was killed at its deadline: a test still
	// running then is TIMEOUT, and a report never written leaves every
	// declared test TIMEOUT rather than NOT_RUN.
	TimedOut bool
	// testDone, when set, is called as each test's result streams in.
	testDone func()
}

// maxLine bounds one line of a line-oriented stream; longer lines are cut.
const maxLine = 1 << 20

// Classify reads a runner's output in the declared format and returns one
// result per test. When the format is unknown or undeclared, or the output
// cannot be read in it, the report's verdict is UNVERIFIABLE and the error
// is a typed UNVERIFIABLE error; the report is returned in both cases.
func Classify(r io.Reader, opts Options) (*Report, error) {
	if len(opts.StubMarkers) == 0 {
		opts.StubMarkers = DefaultStubMarkers
	}
	if err := checkFormat(&opts); err != nil {
		return unverifiable(opts, "%s", apperr.Message(err))
	}
	finish, err := parse(r, opts)
	if err != nil {
		return unverifiable(opts, "%s", apperr.Message(err))
	}
	return finish(opts.TimedOut).report(opts), nil
}

// parse reads the output; the returned finish computes the outcomes once
// it is known whether the run was killed at its deadline. A format or
// dialect that is unknown or undeclared is a typed UNVERIFIABLE error.
func parse(r io.Reader, opts Options) (func(timedOut bool) *parsed, error) {
	if err := checkFormat(&opts); err != nil {
		return nil, err
	}
	var p *parsed
	var err error
	switch opts.Format {
	case GoJSON:
		g, err := readGoJSON(r, opts)
		if err != nil {
			return nil, err
		}
		return func(timedOut bool) *parsed { g.opts.TimedOut = timedOut; return g.finish() }, nil
	case JUnitXML:
		p, err = parseJUnit(r, opts)
	default:
		p, err = parseJestJSON(r, opts)
	}
	if err != nil {
		return nil, err
	}
	return func(bool) *parsed { return p }, nil
}

// checkFormat refuses a format or dialect that is unknown or missing, and
// writes the dialect's canonical name into opts.
func checkFormat(opts *Options) error {
	d, err := CheckDialect(opts.Format, opts.Dialect)
	if err != nil {
		return err
	}
	opts.Dialect = d
	return nil
}

func unverifiable(opts Options, format string, args ...any) (*Report, error) {
	e := apperr.New(Unverifiable, format, args...)
	rep := &Report{Format: opts.Format, Dialect: opts.Dialect, Verdict: VerdictUnverifiable, Reason: e.Msg, Counts: map[Outcome]int{}, Tests: []Result{}}
	seen := map[string]bool{}
	for _, d := range opts.Declared {
		if d = strings.TrimSpace(d); d == "" || seen[d] {
			continue
		}
		seen[d] = true
		rep.Tests = append(rep.Tests, Result{ID: d, Declared: true, Outcome: Unknown, Reason: e.Msg})
		rep.Counts[Unknown]++
	}
	return rep, e
}

func formatList() string {
	s := make([]string, len(Formats))
	for i, f := range Formats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// stubIn reports whether s holds one of the markers.
func stubIn(s string, markers []string) bool {
	for _, m := range markers {
		if m != "" && strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// oneLine returns the first non-empty line of s, trimmed and cut to 300
// bytes (on a rune boundary).
func oneLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" {
			return clip(l, 300)
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// readLines calls f for each line of r (without its newline), cutting lines
// longer than maxLine.
func readLines(r io.Reader, f func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if len(long) < maxLine {
				long = append(long, chunk...)
			}
			continue
		case len(long) > 0:
			if len(long) < maxLine {
				long = append(long, chunk...)
			}
			f(bytes.TrimRight(long, "\r\n"))
			long = long[:0]
		case len(chunk) > 0:
			f(bytes.TrimRight(chunk, "\r\n"))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return err
		}
	}
}
