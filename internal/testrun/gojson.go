package testrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// goEvent is one test2json event.
type goEvent struct {
	Action, Package, Test, Output, FailedBuild, ImportPath []byte
}

// goParser reads a `go test -json` stream event by event; its memory is
// bounded per test (counts and the first message), not by the output.
type goParser struct {
	opts   Options
	pkgs   map[string]*goPkg
	order  []*goPkg
	builds map[string]*goBuild
	lines  int
	events int
}

type goBuild struct {
	lines  []string
	failed bool
}

type goPkg struct {
	path        string
	tests       map[string]*goTest
	order       []*goTest
	action      string // the package's terminal action: pass, fail, skip
	failedBuild string
	buildFailed bool // "[build failed]" or "[setup failed]" in its output
	noTests     bool
	out         []string // the first package-level output lines
	lastBare    *goTest  // the last test reported "--- FAIL" with no message of its own
	timedOut    bool
	timeoutMsg  string
	timeoutList bool
	crashIn     *goTest
	crashMsg    string
	frameFor    *goTest // collecting the first user stack frame of a panic
	prevLine    string
}

type goTest struct {
	name     string
	parent   *goTest
	kids     []*goTest
	state    byte // 'r' running, 'p' pass, 'f' fail, 's' skip
	msgs     int
	msg      string
	file     string
	line     int
	stub     bool
	panicMsg string
	timedOut bool
	resolved bool
	res      Result
}

func readGoJSON(r io.Reader, opts Options) (*goParser, error) {
	g := &goParser{opts: opts, pkgs: map[string]*goPkg{}, builds: map[string]*goBuild{}}
	if err := readLines(r, g.line); err != nil {
		return nil, apperr.Wrap(Unverifiable, err, "read go test -json output: %v", err)
	}
	if g.events == 0 {
		if g.lines == 0 {
			return nil, apperr.New(Unverifiable, "the output is empty: no go test -json events")
		}
		return nil, apperr.New(Unverifiable, "none of the %d lines of the output is a go test -json event", g.lines)
	}
	return g, nil
}

func (g *goParser) line(b []byte) {
	g.lines++
	var e struct{ Action, Package, Test, Output, FailedBuild, ImportPath string }
	if json.Unmarshal(b, &e) != nil || e.Action == "" {
		return
	}
	ev := goEvent{[]byte(e.Action), []byte(e.Package), []byte(e.Test), []byte(e.Output), []byte(e.FailedBuild), []byte(e.ImportPath)}
	g.events++
	var action string // a constant: no allocation per event
	switch string(ev.Action) {
	case "run":
		action = "run"
	case "output":
		action = "output"
	case "pass":
		action = "pass"
	case "fail":
		action = "fail"
	case "skip":
		action = "skip"
	case "build-output":
		bd := g.build(ev.ImportPath)
		if len(bd.lines) < 20 {
			bd.lines = append(bd.lines, strings.TrimRight(string(ev.Output), "\n"))
		}
		return
	case "build-fail":
		g.build(ev.ImportPath).failed = true
		return
	}
	if len(ev.Package) == 0 {
		return
	}
	pk := g.pkg(ev.Package)
	var t *goTest
	if len(ev.Test) > 0 {
		t = pk.test(ev.Test)
	}
	switch action {
	case "run":
		if t != nil {
			t.state = 'r'
			pk.lastBare = nil
			pk.frameFor = nil
		}
	case "output":
		g.output(pk, t, ev.Output)
	case "pass", "fail", "skip":
		if t == nil {
			pk.action = action
			if len(ev.FailedBuild) > 0 {
				pk.failedBuild = string(ev.FailedBuild)
			}
			return
		}
		t.state = action[0]
		if g.opts.testDone != nil {
			g.opts.testDone()
		}
	}
}

func (g *goParser) build(importPath []byte) *goBuild {
	bd := g.builds[string(importPath)]
	if bd == nil {
		bd = &goBuild{}
		g.builds[string(importPath)] = bd
	}
	return bd
}

func (g *goParser) pkg(path []byte) *goPkg {
	pk := g.pkgs[string(path)]
	if pk == nil {
		pk = &goPkg{path: string(path), tests: map[string]*goTest{}}
		g.pkgs[pk.path] = pk
		g.order = append(g.order, pk)
	}
	return pk
}

func (pk *goPkg) test(name []byte) *goTest {
	t := pk.tests[string(name)]
	if t == nil {
		t = &goTest{name: string(name), state: 'r'}
		if i := strings.LastIndexByte(t.name, '/'); i > 0 {
			if p := pk.tests[t.name[:i]]; p != nil {
				t.parent = p
				p.kids = append(p.kids, t)
			}
		}
		pk.tests[t.name] = t
		pk.order = append(pk.order, t)
	}
	return t
}

var (
	bPanic     = []byte("panic: ")
	bRunning   = []byte("running tests:")
	bFailLine  = []byte("--- FAIL: ")
	bNoTests   = []byte("[no tests to run]")
	bNoTests2  = []byte("testing: warning: no tests to run")
	bBuildFail = []byte("[build failed]")
	bSetupFail = []byte("[setup failed]")
)

func (g *goParser) output(pk *goPkg, t *goTest, out []byte) {
	line := bytes.TrimRight(out, "\n")
	trim := bytes.TrimSpace(line)
	defer func() {
		if pk.frameFor != nil {
			pk.prevLine = string(trim)
		}
	}()
	switch {
	case bytes.HasPrefix(line, bPanic):
		g.panicLine(pk, t, string(line[len(bPanic):]))
		return
	case pk.frameFor != nil && len(line) > 0 && line[0] == '\t':
		// A stack frame's location: "\t/path/x_test.go:12 +0x25".
		if file, n, ok := frameLoc(string(trim)); ok && !runtimeFrame(pk.prevLine) {
			pk.frameFor.file, pk.frameFor.line = relPath(file, g.opts.Root), n
			pk.frameFor = nil
		}
		return
	case pk.frameFor != nil:
		return // a function line of the stack; the location follows
	case pk.timedOut && bytes.HasPrefix(trim, bRunning):
		pk.timeoutList = true
		return
	case pk.timeoutList:
		if len(trim) == 0 {
			pk.timeoutList = false
			return
		}
		// "\t\tTestSlow (2s)"
		if i := bytes.IndexByte(trim, ' '); i > 0 {
			if tt := pk.tests[string(trim[:i])]; tt != nil {
				tt.timedOut = true
			}
		}
		return
	}
	if len(trim) == 0 || pk.crashMsg != "" || pk.timedOut {
		return // after a panic the rest is the crash dump
	}
	if bytes.HasPrefix(trim, []byte("=== ")) {
		return
	}
	if bytes.HasPrefix(trim, []byte("--- ")) {
		if bytes.HasPrefix(trim, bFailLine) {
			name := trim[len(bFailLine):]
			if i := bytes.LastIndex(name, []byte(" (")); i > 0 {
				name = name[:i]
			}
			if ft := pk.tests[string(name)]; ft != nil && ft.msgs == 0 && !ft.hasFailedKid() && ft.panicMsg == "" {
				pk.lastBare = ft
			}
		}
		return
	}
	if t != nil {
		t.msgs++
		if t.msg == "" {
			t.msg, t.file, t.line = msgLoc(string(trim))
			t.file = relPath(t.file, g.opts.Root)
		}
		if !t.stub && stubIn(string(trim), g.opts.StubMarkers) {
			t.stub = true
			if !stubIn(t.msg, g.opts.StubMarkers) {
				t.msg, t.file, t.line = msgLoc(string(trim))
			}
		}
		return
	}
	switch {
	case bytes.Contains(trim, bNoTests) || bytes.HasPrefix(trim, bNoTests2):
		pk.noTests = true
	case bytes.Contains(trim, bBuildFail) || bytes.Contains(trim, bSetupFail):
		pk.buildFailed = true
	case bytes.Equal(trim, []byte("PASS")) || bytes.Equal(trim, []byte("FAIL")) ||
		bytes.HasPrefix(trim, []byte("ok ")) || bytes.HasPrefix(trim, []byte("FAIL\t")) ||
		bytes.HasPrefix(trim, []byte("?")) || bytes.HasPrefix(trim, []byte("coverage:")):
	default:
		if len(pk.out) < 5 {
			pk.out = append(pk.out, clip(string(trim), 300))
		}
	}
}

func (t *goTest) hasFailedKid() bool {
	for _, k := range t.kids {
		if k.state == 'f' {
			return true
		}
	}
	return false
}

// panicLine handles "panic: msg" in a package's output: a timeout, or a
// crash that ends the test binary (later tests get no event).
func (g *goParser) panicLine(pk *goPkg, t *goTest, msg string) {
	if strings.HasPrefix(msg, "test timed out after") {
		pk.timedOut, pk.timeoutMsg = true, "panic: "+msg
		return
	}
	if pk.crashMsg != "" {
		return // a nested panic; the first one names the cause
	}
	msg = strings.TrimSuffix(strings.TrimSuffix(msg, " [recovered, repanicked]"), " [recovered]")
	pk.crashMsg = msg
	// Go prints "--- FAIL: X" for the panicking test just before the
	// panic, but test2json may file the panic under X's parent: the last
	// test failed without a message of its own is the one that panicked.
	target := pk.lastBare
	if target == nil && t != nil && t.state != 'p' && t.state != 's' {
		target = t
	}
	if target == nil {
		target = pk.innermostRunning()
	}
	if target != nil {
		target.panicMsg = msg
		pk.crashIn = target
		pk.frameFor = target
		pk.prevLine = ""
	}
}

func (pk *goPkg) innermostRunning() *goTest {
	for i := len(pk.order) - 1; i >= 0; i-- {
		t := pk.order[i]
		if t.state == 'r' && !t.hasRunningKid() {
			return t
		}
	}
	return nil
}

func (t *goTest) hasRunningKid() bool {
	for _, k := range t.kids {
		if k.state == 'r' {
			return true
		}
	}
	return false
}

// runtimeFrame reports whether a stack's function line belongs to the Go
// runtime or the testing package rather than to the code under test.
func runtimeFrame(fn string) bool {
	for _, p := range []string{"runtime.", "testing.", "panic(", "reflect.", "created by ", "goroutine "} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return fn == ""
}

// frameLoc parses "/path/x.go:12 +0x25".
func frameLoc(s string) (string, int, bool) {
	if i := strings.LastIndex(s, " +0x"); i > 0 {
		s = s[:i]
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || !strings.HasSuffix(s[:i], ".go") {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return "", 0, false
	}
	return s[:i], n, true
}

// msgLoc parses a t.Error line "x_test.go:7: message" into its parts; any
// other line is returned as the message.
func msgLoc(s string) (msg, file string, line int) {
	if i := strings.Index(s, ".go:"); i > 0 && !strings.ContainsAny(s[:i], " \t") {
		rest := s[i+4:]
		if j := strings.IndexByte(rest, ':'); j > 0 {
			if n, err := strconv.Atoi(rest[:j]); err == nil {
				file, line, rest = s[:i+3], n, rest[j+1:]
				// a compile error carries a column: "x.go:3:42: msg"
				if k := strings.IndexByte(rest, ':'); k > 0 {
					if _, err := strconv.Atoi(rest[:k]); err == nil {
						rest = rest[k+1:]
					}
				}
				return clip(strings.TrimSpace(rest), 300), file, line
			}
		}
	}
	return clip(s, 300), "", 0
}

func (g *goParser) finish() *parsed {
	p := &parsed{scheme: goScheme{}}
	for _, pk := range g.order {
		ran := false
		for _, t := range pk.order {
			if t.parent == nil {
				ran = true
			}
			r := g.resolve(pk, t)
			r.ID = pk.path + "::" + t.name
			p.add(r)
		}
		g.groupOf(p, pk, ran)
	}
	// Build failures of import paths that never became a package event
	// (a go vet or go build step fed to the same parser).
	for path, bd := range g.builds {
		if !bd.failed {
			continue
		}
		pkg := importPathPkg(path)
		if _, ok := g.pkgs[pkg]; ok {
			continue
		}
		msg, file, line := buildReason(bd)
		p.groups = append(p.groups, group{key: pkg, outcome: BuildFail, reason: msg, file: relPath(file, g.opts.Root), line: line})
	}
	return p
}

// importPathPkg turns "example.com/p [example.com/p.test]" or
// "example.com/p_test" into "example.com/p".
func importPathPkg(s string) string {
	if i := strings.Index(s, " ["); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".test")
	return strings.TrimSuffix(s, "_test")
}

func buildReason(bd *goBuild) (string, string, int) {
	for _, l := range bd.lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "# ") {
			continue
		}
		msg, file, line := msgLoc(l)
		if file != "" {
			return "build failed: " + file + ":" + strconv.Itoa(line) + ": " + msg, file, line
		}
		return "build failed: " + msg, "", 0
	}
	return "build failed", "", 0
}

func (g *goParser) groupOf(p *parsed, pk *goPkg, ran bool) {
	add := func(o Outcome, crashed bool, format string, args ...any) {
		p.groups = append(p.groups, group{key: pk.path, outcome: o, reason: fmt.Sprintf(format, args...), crashed: crashed})
	}
	switch {
	case pk.failedBuild != "" || pk.buildFailed:
		msg, file, line := "build failed (the compiler's messages are not in this output)", "", 0
		if bd := g.builds[pk.failedBuild]; bd != nil {
			msg, file, line = buildReason(bd)
		}
		p.groups = append(p.groups, group{key: pk.path, outcome: BuildFail, reason: msg, file: relPath(file, g.opts.Root), line: line})
	case pk.timedOut:
		add(NotRun, true, "not reached: the package's test binary timed out first (%s)", pk.timeoutMsg)
	case pk.crashIn != nil:
		add(NotRun, true, "not reached: the test binary crashed in %s (panic: %s)", pk.crashIn.name, pk.crashMsg)
	case pk.crashMsg != "":
		if !ran {
			add(ErrorSetup, false, "the package panicked before any test ran (init or TestMain): panic: %s", pk.crashMsg)
		} else {
			add(NotRun, true, "not reached: the test binary crashed (panic: %s)", pk.crashMsg)
		}
	case pk.action == "fail" && !ran:
		why := "no output"
		if len(pk.out) > 0 {
			why = pk.out[0]
		}
		add(ErrorSetup, false, "the package failed before any test ran (TestMain, init or flags): %s", why)
	case pk.action == "fail" && pk.exitedIn() != nil:
		add(NotRun, true, "not reached: the test binary exited during %s", pk.exitedIn().name)
	case pk.noTests:
		add(NotRun, false, "go test ran no test in %s ([no tests to run]): the selector matched nothing", pk.path)
	case pk.action == "skip":
		add(NotRun, false, "%s has no test files", pk.path)
	case pk.action == "":
		if g.opts.TimedOut {
			add(Timeout, false, "the run was killed at its deadline before %s finished", pk.path)
		} else {
			add(NotRun, true, "the output ends before %s finished", pk.path)
		}
	default:
		add(NotRun, false, "%s finished without running this test: the selector did not match it, or it does not exist", pk.path)
	}
}

// exitedIn returns the test that was running when the binary ended
// without a panic (os.Exit inside a test), if any.
func (pk *goPkg) exitedIn() *goTest {
	if pk.action == "" || pk.crashMsg != "" || pk.timedOut {
		return nil
	}
	return pk.innermostRunning()
}

// resolve computes a test's outcome (kids first).
func (g *goParser) resolve(pk *goPkg, t *goTest) Result {
	if t.resolved {
		return t.res
	}
	t.resolved = true
	r := Result{File: t.file, Line: t.line}
	stub := func(s string) bool { return stubIn(s, g.opts.StubMarkers) }
	switch t.state {
	case 'p':
		r.Outcome = Pass
	case 's':
		r.Outcome, r.Reason = Skip, t.msg
	case 'f':
		switch {
		case t.timedOut:
			r.Outcome, r.Reason = Timeout, pk.timeoutMsg
		case t.panicMsg != "" && stub(t.panicMsg):
			r.Outcome, r.Reason = FailStub, "panic: "+t.panicMsg
		case t.panicMsg != "":
			r.Outcome, r.Reason = FailError, "panic: "+t.panicMsg
		case t.stub:
			r.Outcome, r.Reason = FailStub, t.msg
		case t.msgs > 0:
			r.Outcome, r.Reason = FailAssert, t.msg
		default:
			if k := g.worstKid(pk, t); k != nil {
				kr := g.resolve(pk, k)
				r = Result{Outcome: kr.Outcome, Reason: "subtest " + k.name + ": " + kr.Reason, File: kr.File, Line: kr.Line}
			} else {
				r.Outcome, r.Reason = FailAssert, "failed without a message (t.Fail)"
			}
		}
	default: // started, no terminal event
		switch {
		case t.timedOut || pk.timedOut:
			r.Outcome, r.Reason = Timeout, "still running when "+pk.timeoutMsg
		case t.panicMsg != "" && stub(t.panicMsg):
			r.Outcome, r.Reason = FailStub, "panic: "+t.panicMsg
		case t.panicMsg != "":
			r.Outcome, r.Reason = FailError, "panic: "+t.panicMsg
		case t.hasRunningKid() || t.hasFailedKid():
			k := g.worstKid(pk, t)
			kr := g.resolve(pk, k)
			r = Result{Outcome: kr.Outcome, Reason: "subtest " + k.name + ": " + kr.Reason, File: kr.File, Line: kr.Line}
		case pk.action == "" && g.opts.TimedOut:
			r.Outcome, r.Reason = Timeout, "the run was killed at its deadline while this test was running"
		case pk.action == "":
			r.Outcome, r.Reason = NotRun, "the output ends while this test was running"
			r.crashed = true
		case pk.crashMsg != "":
			r.Outcome, r.Reason = NotRun, "the test binary crashed in another test while this one was running (panic: "+pk.crashMsg+")"
			r.crashed = true
		default:
			r.Outcome, r.Reason = FailError, "the test binary exited while this test was running, with no result (os.Exit or a crash in another goroutine)"
		}
	}
	t.res = r
	return r
}

// worstKid returns the kid whose outcome explains its parent's: a timeout,
// a runtime error or a stub before an assertion; running kids count.
func (g *goParser) worstKid(pk *goPkg, t *goTest) *goTest {
	var best *goTest
	bestRank := -1
	for _, k := range t.kids {
		if k.state != 'f' && k.state != 'r' {
			continue
		}
		rank := 0
		switch g.resolve(pk, k).Outcome {
		case Timeout:
			rank = 4
		case FailError:
			rank = 3
		case FailStub:
			rank = 2
		case FailAssert:
			rank = 1
		}
		if rank > bestRank {
			best, bestRank = k, rank
		}
	}
	return best
}
