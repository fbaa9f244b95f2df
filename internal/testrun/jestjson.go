package testrun

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/textfmt"
)

type jestReport struct {
	TestResults *[]jestFile `json:"testResults"`
}

type jestFile struct {
	Name          string `json:"name"`
	Status        string `json:"status"`
	Message       string `json:"message"`
	TestExecError *struct {
		Message string `json:"message"`
	} `json:"testExecError"`
	AssertionResults []jestTest `json:"assertionResults"`
}

type jestTest struct {
	AncestorTitles  []string          `json:"ancestorTitles"`
	Title           string            `json:"title"`
	Status          string            `json:"status"`
	FailureMessages []string          `json:"failureMessages"`
	FailureDetails  []json.RawMessage `json:"failureDetails"`
	Location        *struct {
		Line int `json:"line"`
	} `json:"location"`
}

var jsFrame = textfmt.Regexp(`(?:\(|at )((?:file://)?/[^()\s]+?|[^()\s/][^()\s]*?\.[cm]?[jt]sx?):(\d+):\d+\)?`)

// parseJestJSON reads `jest --json` or `vitest --reporter=json`: one JSON
// document with testResults[] (one per file) of assertionResults[].
func parseJestJSON(r io.Reader, opts Options) (*parsed, error) {
	var rep jestReport
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		if err == io.EOF {
			return nil, apperr.New(Unverifiable, "the output is empty: no jest/vitest JSON report")
		}
		return nil, apperr.Wrap(Unverifiable, err, "not a readable jest/vitest JSON report: %v", err)
	}
	if rep.TestResults == nil {
		return nil, apperr.New(Unverifiable, "not a jest/vitest JSON report: it has no testResults")
	}
	p := &parsed{scheme: jsScheme{}}
	markers := opts.StubMarkers
	for _, f := range *rep.TestResults {
		file := relPath(f.Name, opts.Root)
		if len(f.AssertionResults) == 0 && f.Status == "failed" {
			msg := f.Message
			if f.TestExecError != nil && f.TestExecError.Message != "" {
				msg = f.TestExecError.Message
			}
			reason := "the file failed to load: " + jestSuiteReason(msg)
			p.add(Result{ID: file, Outcome: BuildFail, Reason: reason})
			p.groups = append(p.groups, group{key: file, outcome: BuildFail, reason: reason})
			continue
		}
		if f.TestExecError != nil && f.TestExecError.Message != "" {
			p.groups = append(p.groups, group{key: file, outcome: ErrorSetup, reason: "the file's run failed: " + oneLine(f.TestExecError.Message)})
		}
		for _, t := range f.AssertionResults {
			title := strings.Join(append(append([]string{}, t.AncestorTitles...), t.Title), " > ")
			res := Result{ID: file + "::" + title}
			if t.Location != nil && t.Location.Line > 0 {
				res.File, res.Line = file, t.Location.Line
			}
			switch t.Status {
			case "passed":
				res.Outcome = Pass
			case "pending", "skipped", "todo", "disabled":
				res.Outcome = Skip
			default:
				msg := strings.Join(t.FailureMessages, "\n")
				first := oneLine(msg)
				res.Reason = first
				if res.File == "" {
					if fl, n := jsFrameLoc(msg, opts.Root); fl != "" {
						res.File, res.Line = fl, n
					}
				}
				switch {
				case t.Status != "failed":
					res.Outcome, res.Reason = NotRun, "status "+strconv.Quote(t.Status)
				case stubIn(first, markers):
					res.Outcome = FailStub
				case hasMatcherResult(t.FailureDetails) || strings.HasPrefix(first, "AssertionError") || strings.HasPrefix(first, "JestAssertionError") || jestNodeAssert().MatchString(first):
					res.Outcome = FailAssert
				case strings.Contains(msg, "Exceeded timeout of") || strings.Contains(first, "Test timed out in"):
					res.Outcome = Timeout
				case first == "Error: STACK_TRACE_ERROR":
					// vitest's JSON reporter writes a timed-out test's error
					// with the stack of the timer it set, losing the message.
					res.Outcome, res.Reason = Timeout, "timed out (vitest reports STACK_TRACE_ERROR)"
				case strings.Contains(msg, "_callCircusHook"):
					res.Outcome, res.Reason = ErrorSetup, "a beforeAll/beforeEach hook failed: "+first
				default:
					res.Outcome = FailError
				}
			}
			p.add(res)
		}
	}
	return p, nil
}

// jestNodeAssert matches the first line jest writes for a node:assert
// failure: "assert.strictEqual(received, expected)", "assert(received)".
var jestNodeAssert = textfmt.Regexp(`^assert(\.[A-Za-z]+)?\(`)

func hasMatcherResult(details []json.RawMessage) bool {
	for _, d := range details {
		if bytes.Contains(d, []byte(`"matcherResult"`)) {
			var m map[string]json.RawMessage
			if json.Unmarshal(d, &m) == nil {
				if _, ok := m["matcherResult"]; ok {
					return true
				}
			}
		}
	}
	return false
}

// jsFrameLoc returns the first stack location outside node_modules and
// node's internals.
func jsFrameLoc(stack, root string) (string, int) {
	for _, m := range jsFrame().FindAllStringSubmatch(stack, 20) {
		f := strings.TrimPrefix(m[1], "file://")
		if strings.Contains(f, "node_modules") || strings.HasPrefix(f, "node:") {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		return relPath(f, root), n
	}
	return "", 0
}
