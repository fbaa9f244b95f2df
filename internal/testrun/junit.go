package testrun

import (
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/textfmt"
)

type xmlCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	File      string    `xml:"file,attr"`
	Line      string    `xml:"line,attr"`
	Failures  []xmlFail `xml:"failure"`
	Errors    []xmlFail `xml:"error"`
	Skipped   *xmlFail  `xml:"skipped"`
	Flaky     []xmlFail `xml:"flakyFailure"`
	SystemOut string    `xml:"system-out"`
	SystemErr string    `xml:"system-err"`
	suite     string
}

type xmlFail struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// parseJUnit reads a JUnit XML report: <testsuites>/<testsuite> (nested
// suites allowed) of <testcase> elements.
func parseJUnit(r io.Reader, opts Options) (*parsed, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = true
	var cases []xmlCase
	var suites []string
	rootSeen, text := false, false
	rootName := ""
	goSuite := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, apperr.Wrap(Unverifiable, err, "not a readable JUnit XML report: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			if !rootSeen {
				rootSeen = true
				if name != "testsuites" && name != "testsuite" {
					return nil, apperr.New(Unverifiable, "not a JUnit XML report: the root element is <%s>, not <testsuites> or <testsuite>", name)
				}
				rootName = attr(el, "name")
			}
			switch name {
			case "testsuite":
				suites = append(suites, attr(el, "name"))
				if rootName == "" && len(suites) == 1 {
					rootName = attr(el, "name")
				}
			case "testcase":
				var c xmlCase
				if err := dec.DecodeElement(&c, &el); err != nil {
					return nil, apperr.Wrap(Unverifiable, err, "not a readable JUnit XML report: %v", err)
				}
				if len(suites) > 0 {
					c.suite = suites[len(suites)-1]
				}
				cases = append(cases, c)
			case "property":
				if attr(el, "name") == "go.version" {
					goSuite = true
				}
			}
		case xml.CharData:
			if !rootSeen && len(strings.TrimSpace(string(el))) > 0 {
				text = true
			}
		case xml.EndElement:
			if el.Name.Local == "testsuite" && len(suites) > 0 {
				suites = suites[:len(suites)-1]
			}
		}
	}
	if !rootSeen && text {
		return nil, apperr.New(Unverifiable, "not a readable JUnit XML report: it holds no XML element")
	}
	if !rootSeen {
		return nil, apperr.New(Unverifiable, "the output is empty: no JUnit XML report")
	}
	if seen := junitLooksLike(rootName, goSuite); seen != "" && seen != opts.Dialect {
		return nil, apperr.New(Unverifiable, "the report was declared %s but looks like %s's (root name %q)", opts.Dialect, seen, rootName)
	}
	j := &junitReader{opts: opts, p: &parsed{}}
	switch opts.Dialect {
	case DialectPytest:
		j.p.scheme = pyScheme{}
		j.pytest(cases)
	case DialectVitest:
		j.p.scheme = jsScheme{}
		j.vitest(cases)
	case DialectJestJUnit:
		j.p.scheme = jsScheme{}
		j.jestJUnit(cases)
	case DialectGotestsum:
		j.p.scheme = goScheme{}
		j.gotestsum(cases)
	case DialectNextest, DialectLibtest:
		// libtest's own report marks every failure type="assert" and keeps
		// the panic in <system-out>: the panic message decides, as with
		// nextest.
		j.p.scheme = plainScheme{}
		j.nextest(cases)
	case DialectSurefire:
		j.p.scheme = plainScheme{}
		j.surefire(cases)
	}
	return j.p, nil
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// junitLooksLike names the producer when the report says so itself; "" when
// it does not. It is used only to refuse a mismatched declaration, never to
// pick a dialect.
func junitLooksLike(rootName string, goSuite bool) Dialect {
	switch {
	case rootName == "vitest tests":
		return DialectVitest
	case rootName == "jest tests":
		return DialectJestJUnit
	case rootName == "pytest":
		return DialectPytest
	case rootName == "nextest-run":
		return DialectNextest
	case goSuite:
		return DialectGotestsum
	}
	return ""
}

type junitReader struct {
	opts Options
	p    *parsed
}

func (j *junitReader) stub(s string) bool { return stubIn(s, j.opts.StubMarkers) }

func (j *junitReader) add(id string, o Outcome, reason, file string, line int) {
	j.p.add(Result{ID: id, Outcome: o, Reason: oneLine(reason), File: relPath(file, j.opts.Root), Line: line})
}

// firstFail returns the case's first failure or error element.
func (c *xmlCase) firstFail() (*xmlFail, bool) {
	if len(c.Failures) > 0 {
		return &c.Failures[0], false
	}
	if len(c.Errors) > 0 {
		return &c.Errors[0], true
	}
	return nil, false
}

var pyLoc = textfmt.Regexp(`(?m)^([^\s:][^:\n]*\.py):(\d+): `)

// pytest: <failure> is any exception in the test body; <error> is an
// exception in setup, teardown or collection.
func (j *junitReader) pytest(cases []xmlCase) {
	collect, ranOn := "", false
	for _, c := range cases {
		id := c.Classname + "::" + c.Name
		if c.Classname == "" {
			id = c.Name
		}
		file, line := "", 0
		if f, _ := c.firstFail(); f != nil {
			if m := pyLoc().FindAllStringSubmatch(f.Text, -1); len(m) > 0 {
				last := m[len(m)-1]
				file = last[1]
				line, _ = strconv.Atoi(last[2])
			}
		}
		switch {
		case len(c.Failures) > 0:
			f := c.Failures[0]
			msg := f.Message
			switch {
			case j.stub(msg):
				j.add(id, FailStub, msg, file, line)
			case strings.HasPrefix(msg, "assert ") || msg == "assert" || strings.HasPrefix(msg, "AssertionError") ||
				strings.HasPrefix(msg, "Failed: ") || strings.HasPrefix(msg, "[XPASS(strict)]"):
				j.add(id, FailAssert, msg, file, line)
			default:
				j.add(id, FailError, msg, file, line)
			}
		case len(c.Errors) > 0:
			e := c.Errors[0]
			if e.Message == "collection failure" || (c.Classname == "" && strings.HasPrefix(e.Message, "collection")) {
				// A module that cannot import what it tests is the RED
				// state before GREEN writes it, as a compile error is in
				// Go: BUILD_FAIL. Any other collection error (a syntax
				// error in the test file, an exception at module level) is
				// the module's own setup failing: ERROR_SETUP. Either way
				// it is that module's tests' outcome only.
				msg := pyLastError(e.Text)
				o, reason := BuildFail, "the test module cannot import what it tests: "+msg
				if !pyImportError(msg) {
					o, reason = ErrorSetup, "the test module could not be collected: "+msg
				}
				j.add(id, o, reason, file, line)
				j.p.groups = append(j.p.groups, group{key: c.Name, outcome: o, reason: reason, file: file, line: line})
				if collect == "" {
					collect = c.Name
				}
				continue
			}
			j.add(id, ErrorSetup, e.Message, file, line)
		case c.Skipped != nil:
			msg := c.Skipped.Message
			if c.Skipped.Type == "pytest.xfail" {
				msg = "xfail: " + msg
			}
			j.add(id, Skip, msg, "", 0)
		default:
			j.add(id, Pass, "", "", 0)
		}
		ranOn = true // a test of the session reported: it ran past collection
	}
	if collect != "" && !ranOn {
		// Nothing but collection errors: the session stopped there, so a
		// test of another module never had its chance.
		j.p.groups = append(j.p.groups, group{key: "*", outcome: NotRun,
			reason: "no event for this test: pytest stopped at the collection error in " + collect + " before running any test (without --continue-on-collection-errors a collection error ends the session; with it, a node id in a module that cannot be collected still does): select tests by file ({files}) with --continue-on-collection-errors"})
	}
}

// pyImportError reports whether a collection error's last line is an
// import that failed: a module or a name that does not exist (yet).
func pyImportError(msg string) bool {
	return strings.HasPrefix(msg, "ModuleNotFoundError:") || strings.HasPrefix(msg, "ImportError:")
}

// pyLastError returns the "E   ..." line of a pytest traceback, else its
// first line.
func pyLastError(text string) string {
	last := ""
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "E ") {
			last = strings.TrimSpace(t[1:])
		}
	}
	if last != "" {
		return last
	}
	return oneLine(text)
}

var jsLoc = textfmt.Regexp(`(?:❯ (?:\S+ )?|At file: |File: )([^\s:]+):(\d+):\d+`)

// jsLocIn returns the first location in text outside node_modules.
func jsLocIn(text string) (string, int) {
	for _, m := range jsLoc().FindAllStringSubmatch(text, 20) {
		if strings.Contains(m[1], "node_modules") {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		return m[1], n
	}
	return "", 0
}

// vitest: every failure is a <failure> with type = the error's class; a
// file that cannot load is a <testcase> named after the file; a failing
// beforeAll/afterAll is a <testcase> named after its describe block, with
// the tests under it skipped.
func (j *junitReader) vitest(cases []xmlCase) {
	hooks := map[string]string{} // "file::describe path" -> reason
	fileCase := map[string]bool{}
	for _, c := range cases {
		if c.Name == c.Classname {
			fileCase[c.Classname] = true
		}
	}
	siblings := map[string][]string{}
	for _, c := range cases {
		siblings[c.Classname] = append(siblings[c.Classname], c.Name)
	}
	for _, c := range cases {
		f, _ := c.firstFail()
		if f == nil || c.Name == c.Classname {
			continue
		}
		for _, s := range siblings[c.Classname] {
			if strings.HasPrefix(s, c.Name+" > ") {
				hooks[c.Classname+"::"+c.Name] = failText(f)
				break
			}
		}
	}
	for _, c := range cases {
		id := c.Classname + "::" + c.Name
		f, _ := c.firstFail()
		file, line := "", 0
		if f != nil {
			file, line = jsLocIn(f.Text)
		}
		switch {
		case f != nil && c.Name == c.Classname:
			if len(siblings[c.Classname]) > 1 {
				reason := "a file-level hook failed: " + failText(f)
				j.add(c.Classname, ErrorSetup, reason, file, line)
				j.p.groups = append(j.p.groups, group{key: c.Classname, outcome: ErrorSetup, reason: reason})
				continue
			}
			reason := "the file failed to load: " + failText(f)
			j.add(c.Classname, BuildFail, reason, file, line)
			j.p.groups = append(j.p.groups, group{key: c.Classname, outcome: BuildFail, reason: reason, file: file, line: line})
		case f != nil && hooks[id] != "":
			j.add(id, ErrorSetup, "a beforeAll/afterAll hook of this block failed: "+hooks[id], file, line)
		case f != nil:
			msg := failText(f)
			switch {
			case j.stub(msg):
				j.add(id, FailStub, msg, file, line)
			case f.Type == "AssertionError" || strings.HasPrefix(f.Type, "AssertionError"):
				j.add(id, FailAssert, msg, file, line)
			case strings.HasPrefix(f.Message, "Test timed out in "):
				j.add(id, Timeout, msg, file, line)
			default:
				j.add(id, FailError, msg, file, line)
			}
		case c.Skipped != nil:
			if h := hookOf(hooks, c.Classname, c.Name); h != "" {
				j.add(id, ErrorSetup, "not run: a beforeAll hook failed: "+h, "", 0)
				continue
			}
			if fileCase[c.Classname] {
				j.add(id, ErrorSetup, "not run: a file-level hook failed", "", 0)
				continue
			}
			j.add(id, Skip, c.Skipped.Message, "", 0)
		default:
			j.add(id, Pass, "", "", 0)
		}
	}
}

// hookOf returns the failed hook reason of the nearest enclosing block.
func hookOf(hooks map[string]string, file, name string) string {
	for {
		i := strings.LastIndex(name, " > ")
		if i < 0 {
			return ""
		}
		name = name[:i]
		if h, ok := hooks[file+"::"+name]; ok {
			return h
		}
	}
}

// failText is "Type: message" (or the body's first line).
func failText(f *xmlFail) string {
	msg := f.Message
	if msg == "" {
		msg = oneLine(f.Text)
		return msg
	}
	if f.Type != "" && f.Type != "failure" && f.Type != "error" && !strings.HasPrefix(msg, f.Type) {
		return f.Type + ": " + oneLine(msg)
	}
	return oneLine(msg)
}

var (
	jestExpect = textfmt.Regexp(`^(?:Error: )?expect\(`)
	jestLoc    = textfmt.Regexp(`\(([^()\s]+):(\d+):\d+\)`)
)

// jest-junit: <failure> holds the error's text; the element is the same
// for expect() failures and thrown errors, so the text decides. A file
// that cannot load appears only with reportTestSuiteErrors=true, as a
// testcase "Test suite failed to run".
func (j *junitReader) jestJUnit(cases []xmlCase) {
	for _, c := range cases {
		id := c.Name
		if c.File != "" {
			id = c.File + "::" + c.Name
		}
		f, _ := c.firstFail()
		if f == nil {
			if c.Skipped != nil {
				j.add(id, Skip, c.Skipped.Message, "", 0)
			} else {
				j.add(id, Pass, "", "", 0)
			}
			continue
		}
		text := f.Text
		if text == "" {
			text = f.Message
		}
		file, line := "", 0
		if m := jestLoc().FindStringSubmatch(text); m != nil && !strings.Contains(m[1], "node_modules") {
			file = m[1]
			line, _ = strconv.Atoi(m[2])
		}
		first := oneLine(text)
		switch {
		case strings.Contains(c.Name, "Test suite failed to run") || strings.Contains(text, "Test suite failed to run"):
			key := c.File
			if key == "" {
				key = c.Classname
			}
			reason := "the file failed to load: " + jestSuiteReason(text)
			j.add(id, BuildFail, reason, file, line)
			if key != "" {
				j.p.groups = append(j.p.groups, group{key: key, outcome: BuildFail, reason: reason})
			}
		case j.stub(first):
			j.add(id, FailStub, first, file, line)
		case jestExpect().MatchString(first) || strings.HasPrefix(first, "AssertionError") || strings.HasPrefix(first, "JestAssertionError") || jestNodeAssert().MatchString(first):
			j.add(id, FailAssert, first, file, line)
		case strings.Contains(text, "Exceeded timeout of"):
			j.add(id, Timeout, first, file, line)
		case strings.Contains(text, "_callCircusHook"):
			j.add(id, ErrorSetup, "a beforeAll/beforeEach hook failed: "+first, file, line)
		default:
			j.add(id, FailError, first, file, line)
		}
	}
}

// jestSuiteReason picks the line after "Test suite failed to run".
func jestSuiteReason(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.Contains(l, "Test suite failed to run") {
			for _, n := range lines[i+1:] {
				if t := strings.TrimSpace(n); t != "" {
					return clip(t, 300)
				}
			}
		}
	}
	return oneLine(text)
}

// gotestsum: every failure is <failure message="Failed"> with the test's
// go test output as text, read the way go-test-json reads a test's output.
// A testcase "TestMain" without classname stands for the package: "[build
// failed]" or "[setup failed]" is BUILD_FAIL, "panic: test timed out" a
// timeout (the tests it lists as running are TIMEOUT), anything else
// before a test ran ERROR_SETUP. A failed test whose text has no "---
// FAIL" line ended with its binary (os.Exit, or a crash elsewhere). As in
// go-test-json, a panic printed under a parent belongs to its last subtest
// that failed without a message.
func (j *junitReader) gotestsum(cases []xmlCase) {
	type pkgInfo struct {
		main     string // the TestMain pseudo-case's text
		hasMain  bool
		tests    int
		timedOut bool
		running  map[string]bool
	}
	pkgs := map[string]*pkgInfo{}
	pkgOf := func(c *xmlCase) string {
		if c.Classname == "" {
			return c.suite
		}
		return c.Classname
	}
	info := func(pkg string) *pkgInfo {
		if pkgs[pkg] == nil {
			pkgs[pkg] = &pkgInfo{running: map[string]bool{}}
		}
		return pkgs[pkg]
	}
	byName := map[string]*xmlCase{}
	for i := range cases {
		c := &cases[i]
		pi := info(pkgOf(c))
		if c.Classname == "" && c.Name == "TestMain" {
			if f, _ := c.firstFail(); f != nil {
				pi.main, pi.hasMain = f.Text+"\n"+c.SystemOut, true
				if strings.Contains(pi.main, "panic: test timed out") {
					pi.timedOut = true
					for _, l := range strings.Split(pi.main, "\n") {
						if t := strings.TrimSpace(l); strings.HasPrefix(l, "\t\t") && strings.Contains(t, " (") {
							pi.running[t[:strings.Index(t, " (")]] = true
						}
					}
				}
			}
			continue
		}
		pi.tests++
		byName[pkgOf(c)+"::"+c.Name] = c
	}
	// A panic under a parent goes to its last subtest failed bare.
	panicOf := map[string]string{}
	for i := range cases {
		c := &cases[i]
		f, _ := c.firstFail()
		if f == nil {
			continue
		}
		p := goPanicLine(f.Text)
		if p == "" {
			continue
		}
		target := pkgOf(c) + "::" + c.Name
		for k := range cases {
			kc := &cases[k]
			if pkgOf(kc) == pkgOf(c) && strings.HasPrefix(kc.Name, c.Name+"/") {
				if kf, _ := kc.firstFail(); kf != nil && goMessages(kf.Text) == "" && goPanicLine(kf.Text) == "" {
					target = pkgOf(kc) + "::" + kc.Name
				}
			}
		}
		panicOf[target] = p
	}
	crashed := map[string]string{}
	results := map[string]int{}
	for i := range cases {
		c := &cases[i]
		pkg := pkgOf(c)
		pi := pkgs[pkg]
		if c.Classname == "" && c.Name == "TestMain" {
			continue
		}
		id := pkg + "::" + c.Name
		f, _ := c.firstFail()
		if f == nil {
			if c.Skipped != nil {
				j.add(id, Skip, oneLine(goMessages(c.Skipped.Message+"\n"+c.Skipped.Text)), "", 0)
			} else {
				j.add(id, Pass, "", "", 0)
			}
			results[id] = len(j.p.results) - 1
			continue
		}
		text := f.Text + "\n" + c.SystemOut
		var o Outcome
		var reason, file string
		var line int
		switch {
		case pi.timedOut && (pi.running[c.Name] || !strings.Contains(text, "--- FAIL: ")):
			o, reason = Timeout, "still running when the package timed out ("+oneLine(goPanicLine(pi.main))+")"
		case panicOf[id] != "":
			o, reason = FailError, panicOf[id]
			if stubIn(reason, j.opts.StubMarkers) {
				o = FailStub
			}
			crashed[pkg] = c.Name
		default:
			o, reason, file, line = goTextOutcome(text, j.opts.StubMarkers)
			if o == FailAssert && reason == "" && !strings.Contains(text, "--- FAIL: ") {
				o, reason = FailError, "the test binary exited while this test was running, with no result (os.Exit or a crash in another goroutine)"
				crashed[pkg] = c.Name
			}
		}
		if o == FailAssert && reason == "" {
			// Failed through its subtests: take the worst.
			worst, wr := "", -1
			for k := range cases {
				kc := &cases[k]
				if pkgOf(kc) != pkg || !strings.HasPrefix(kc.Name, c.Name+"/") {
					continue
				}
				if ri, ok := results[pkg+"::"+kc.Name]; ok {
					if r := familyRank(j.p.results[ri].Outcome); r > wr && j.p.results[ri].Outcome != Pass {
						worst, wr = kc.Name, r
					}
				}
			}
			if worst != "" {
				kr := j.p.results[results[pkg+"::"+worst]]
				o, reason, file, line = kr.Outcome, "subtest "+worst+": "+kr.Reason, kr.File, kr.Line
			} else {
				reason = "failed without a message (t.Fail)"
			}
		}
		j.add(id, o, reason, file, line)
		results[id] = len(j.p.results) - 1
	}
	for pkg, pi := range pkgs {
		switch {
		case pi.hasMain && (strings.Contains(pi.main, "[build failed]") || strings.Contains(pi.main, "[setup failed]")):
			j.p.groups = append(j.p.groups, group{key: pkg, outcome: BuildFail, reason: "build failed: " + oneLine(goMessages(pi.main))})
		case pi.timedOut:
			j.p.groups = append(j.p.groups, group{key: pkg, outcome: NotRun, crashed: true, reason: "not reached: the package's test binary timed out first"})
		case crashed[pkg] != "":
			j.p.groups = append(j.p.groups, group{key: pkg, outcome: NotRun, crashed: true, reason: "not reached: the test binary crashed in " + crashed[pkg]})
		case pi.hasMain && pi.tests == 0:
			j.p.groups = append(j.p.groups, group{key: pkg, outcome: ErrorSetup, reason: "the package failed before any test ran: " + oneLine(goMessages(pi.main))})
		case pi.hasMain:
			j.p.groups = append(j.p.groups, group{key: pkg, outcome: NotRun, crashed: true, reason: "not reached: the package failed (" + oneLine(goMessages(pi.main)) + ")"})
		default:
			j.p.groups = append(j.p.groups, group{key: pkg, outcome: NotRun, reason: pkg + " finished without running this test: the selector did not match it, or it does not exist"})
		}
	}
}

// goPanicLine returns the first "panic: …" line of a test's output,
// without Go's "[recovered]" suffixes.
func goPanicLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "panic: ") {
			return strings.TrimSuffix(strings.TrimSuffix(l, " [recovered, repanicked]"), " [recovered]")
		}
	}
	return ""
}

// goMessages returns the message lines of go test output (no === / ---
// framing).
func goMessages(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}

// goTextOutcome classifies one Go test's plain-text output.
func goTextOutcome(text string, markers []string) (Outcome, string, string, int) {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "panic: ") {
			msg := strings.TrimSuffix(strings.TrimSuffix(l, " [recovered, repanicked]"), " [recovered]")
			switch {
			case strings.HasPrefix(msg, "panic: test timed out"):
				return Timeout, msg, "", 0
			case stubIn(msg, markers):
				return FailStub, msg, "", 0
			}
			return FailError, msg, "", 0
		}
	}
	msgs := goMessages(text)
	if stubIn(msgs, markers) {
		for _, l := range strings.Split(msgs, "\n") {
			if stubIn(l, markers) {
				m, f, n := msgLoc(l)
				return FailStub, m, f, n
			}
		}
	}
	first := oneLine(msgs)
	if first == "" {
		return FailAssert, "", "", 0
	}
	m, f, n := msgLoc(first)
	return FailAssert, m, f, n
}

var (
	rustPanic    = textfmt.Regexp(`panicked at ([^\s:]+):(\d+):\d+:\n(.+)`)
	rustPanicLoc = textfmt.Regexp(`panicked at ([^\s:]+):(\d+):\d+`)
)

// cargo-nextest: a <failure> whose type says how the test process ended
// ("test failure with exit code 101", "test abort", "test timeout",
// "flaky failure"); every Rust test failure is a panic, so the panic
// message decides between assertion, stub and runtime error.
func (j *junitReader) nextest(cases []xmlCase) {
	for _, c := range cases {
		id := c.Classname + "::" + c.Name
		if strings.HasPrefix(c.suite, "@setup-script:") || strings.HasPrefix(c.Classname, "@setup-script:") {
			if f, _ := c.firstFail(); f != nil {
				j.p.groups = append(j.p.groups, group{key: "*", outcome: ErrorSetup, reason: "setup script " + c.Name + " failed: " + failText(f)})
			}
			continue
		}
		f, isErr := c.firstFail()
		if f == nil {
			if c.Skipped != nil {
				j.add(id, Skip, c.Skipped.Message, "", 0)
			} else {
				j.add(id, Pass, "", "", 0)
			}
			continue
		}
		text := f.Text + "\n" + c.SystemErr + "\n" + c.SystemOut + "\n" + f.Message
		file, line, pmsg := "", 0, ""
		if m := rustPanic().FindStringSubmatch(text); m != nil {
			file = m[1]
			line, _ = strconv.Atoi(m[2])
			pmsg = strings.TrimSpace(m[3])
		} else if m := rustPanicLoc().FindStringSubmatch(text); m != nil {
			file = m[1]
			line, _ = strconv.Atoi(m[2])
		}
		reason := pmsg
		if reason == "" {
			reason = failText(f)
		}
		if reason == "" {
			reason = f.Type
		}
		switch {
		case strings.Contains(f.Type, "timeout"):
			j.add(id, Timeout, reason, file, line)
		case isErr && strings.Contains(f.Type, "execution failure"):
			j.add(id, ErrorSetup, "the test process could not start: "+failText(f), "", 0)
		case j.stub(pmsg) || (pmsg == "" && j.stub(text)):
			j.add(id, FailStub, reason, file, line)
		case strings.HasPrefix(pmsg, "assertion `left") || strings.HasPrefix(pmsg, "assertion failed"):
			j.add(id, FailAssert, reason, file, line)
		case strings.Contains(f.Type, "abort"):
			j.add(id, FailError, "the test process was killed: "+failText(f), file, line)
		default:
			j.add(id, FailError, reason, file, line)
		}
	}
}

// surefire (Ant's schema intent): <failure> is an assertion that failed,
// <error> an unexpected exception. A class whose setup (@BeforeAll,
// @BeforeClass) failed is reported on a testcase with an empty name or
// the class's own name.
func (j *junitReader) surefire(cases []xmlCase) {
	for _, c := range cases {
		id := c.Classname + "::" + c.Name
		f, isErr := c.firstFail()
		line, _ := strconv.Atoi(c.Line)
		switch {
		case f == nil && c.Skipped != nil:
			j.add(id, Skip, c.Skipped.Message, c.File, line)
		case f == nil:
			j.add(id, Pass, "", c.File, line)
		case c.Name == "" || c.Name == c.Classname || c.Name == lastDot(c.Classname):
			reason := "class setup failed: " + failText(f)
			j.add(c.Classname, ErrorSetup, reason, c.File, line)
			j.p.groups = append(j.p.groups, group{key: c.Classname, outcome: ErrorSetup, reason: reason})
		case j.stub(f.Message) || j.stub(oneLine(f.Text)):
			j.add(id, FailStub, failText(f), c.File, line)
		case strings.Contains(f.Type, "Timeout") || strings.Contains(f.Type, "TimedOut"):
			j.add(id, Timeout, failText(f), c.File, line)
		case isErr:
			j.add(id, FailError, failText(f), c.File, line)
		default:
			j.add(id, FailAssert, failText(f), c.File, line)
		}
	}
}

func lastDot(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// plainScheme: ids are "classname::name", matched whole; a group is a
// classname.
type plainScheme struct{}

func (plainScheme) split(id string) (string, string) { return id, "" }
func (plainScheme) qualMatch(string, string) bool    { return true }
func (plainScheme) inGroup(k, _, g string) bool      { return strings.HasPrefix(k, g+"::") }
