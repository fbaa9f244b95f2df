package gates

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/testrun"
)

// goPin runs a Go task's mutants without the go command: the mutant
// schema (every mutant in one copy, switched on by MutantEnv) builds once
// per package with `go test -c`, and each mutant is one run of those test
// binaries with -test.run set to the declared tests. A one-test package's
// `go test` spends nearly all its time starting the go command and
// linking; the binary runs in milliseconds.
type goPin struct {
	build    []string // go test flags the binaries are built with
	testArgs []string // the runner's test flags, as test binary flags
	pkgs     []*goPinPkg
	tmp      string // the binaries' temporary directory (TMPDIR), beside them
}

type goPinPkg struct {
	dir   string   // "./strutil", as the runner names it
	names []string // declared test names of the package (TestX, TestX/sub)
	ids   []string // their plan ids, in the same order
	bin   string   // the built test binary; "" when the build failed
	fail  string   // why it did not build
}

// goPinFlags are the go test flags the fast path understands: the value
// says whether the flag takes a value, the build side whether the test
// binary is built with it, else it is a test flag handed to the binary
// as -test.<name> (dropped when listed in goPinDropped). Any other flag,
// or a package pattern, keeps the task on the runner's own command.
var goPinFlags = map[string]struct{ value, build bool }{
	"race": {false, true}, "msan": {false, true}, "asan": {false, true}, "cover": {false, true}, "trimpath": {false, true},
	"tags": {true, true}, "mod": {true, true}, "modfile": {true, true}, "gcflags": {true, true}, "ldflags": {true, true},
	"asmflags": {true, true}, "p": {true, true}, "covermode": {true, true}, "coverpkg": {true, true}, "pgo": {true, true},
	"overlay": {true, true}, "buildvcs": {true, true}, "vet": {true, true},
	"short": {false, false}, "failfast": {false, false}, "json": {false, false}, "v": {false, false},
	"timeout": {true, false}, "cpu": {true, false}, "parallel": {true, false}, "shuffle": {true, false},
	"skip": {true, false}, "count": {true, false}, "run": {true, false},
}

// goPinDropped are the runner's flags the fast path sets itself (the
// selection, one run, its own output) or needs no more (the bound is the
// check's own).
var goPinDropped = map[string]bool{"json": true, "v": true, "count": true, "run": true, "timeout": true}

// newGoPin reads the runner's command for the tests: a `go test` of
// relative package directories with flags goPinFlags knows. ok is false
// for any other command, which then runs once per mutant as it is.
func newGoPin(st *plan.Standards, tests []string) (*goPin, bool) {
	r, err := RunnerFor(st, tests)
	if err != nil || r.Format != string(testrun.GoJSON) {
		return nil, false
	}
	argv, err := expandRunner(r.Run, tests, "", false)
	if err != nil || len(argv) < 2 || argv[0] != "go" || argv[1] != "test" {
		return nil, false
	}
	g := &goPin{}
	named := map[string]bool{}
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			if a != "." && !strings.HasPrefix(a, "./") || strings.Contains(a, "...") {
				return nil, false
			}
			named[path.Clean(a)] = true
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f, known := goPinFlags[name]
		if !known || a == "--" {
			return nil, false
		}
		if f.value && !hasVal {
			if i+1 >= len(argv) {
				return nil, false
			}
			i++
			val, hasVal = argv[i], true
		}
		flag := "-" + name
		if hasVal {
			flag += "=" + val
		}
		switch {
		case f.build:
			g.build = append(g.build, flag)
		case !goPinDropped[name]:
			g.testArgs = append(g.testArgs, "-test."+strings.TrimPrefix(flag, "-"))
		}
	}
	by := map[string]*goPinPkg{}
	for _, id := range tests {
		f, n := SplitTestID(id)
		if f == "" || n == "" {
			return nil, false
		}
		d := "./" + path.Dir(f)
		if d == "./." {
			d = "."
		}
		if !named[path.Clean(d)] {
			return nil, false // the runner does not name the package: not the plain form
		}
		pk := by[d]
		if pk == nil {
			pk = &goPinPkg{dir: d}
			by[d] = pk
			g.pkgs = append(g.pkgs, pk)
		}
		pk.names, pk.ids = append(pk.names, n), append(pk.ids, id)
	}
	return g, len(g.pkgs) > 0
}

// only is g narrowed to the plan ids in tests (the binaries stay): a
// package none of them is in runs no more.
func (g *goPin) only(tests []string) *goPin {
	keep := map[string]bool{}
	for _, t := range tests {
		keep[t] = true
	}
	out := &goPin{build: g.build, testArgs: g.testArgs, tmp: g.tmp}
	for _, pk := range g.pkgs {
		n := &goPinPkg{dir: pk.dir, bin: pk.bin, fail: pk.fail}
		for i, id := range pk.ids {
			if keep[id] {
				n.names, n.ids = append(n.names, pk.names[i]), append(n.ids, id)
			}
		}
		if len(n.ids) > 0 {
			out.pkgs = append(out.pkgs, n)
		}
	}
	return out
}

// compile builds each package's test binary from the schema copy at top
// into bin. A package that does not build keeps why; only ctx's end is
// an error.
func (g *goPin) compile(ctx context.Context, top, bin string, timeout time.Duration) error {
	g.tmp = filepath.Join(bin, "tmp")
	if err := os.MkdirAll(g.tmp, 0o777); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create %s", g.tmp)
	}
	for i, pk := range g.pkgs {
		out := filepath.Join(bin, strconv.Itoa(i)+".test")
		if runtime.GOOS == "windows" {
			out += ".exe" // what Windows runs
		}
		argv := append(append([]string{"go", "test", "-c", "-o", out}, g.buildFlags()...), pk.dir)
		res := runGroup(ctx, argv, top, g.env(), []string{top, bin}, timeout, 64<<10)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case res.timedOut:
			pk.fail = "its build did not finish in " + timeout.String()
		case res.err != nil || res.code != 0:
			pk.fail = "it does not build: " + lastLines(res.out, 3)
		default:
			if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
				pk.fail = "go test -c wrote no test binary (no test files?)"
			} else {
				pk.bin = out
			}
		}
	}
	return nil
}

// buildFlags are the runner's build flags after the fast path's own:
// no vet (the gate's own run vets the same code) and no symbol table or
// DWARF (a third of the link's time; stack traces and file:line in test
// failures come from the pclntab, which stays), each overridden by the
// runner's own -vet or -ldflags.
func (g *goPin) buildFlags() []string {
	return append([]string{"-vet=off", "-ldflags=-s -w"}, g.build...)
}

// run runs the declared tests with mutant id on, package by package. It
// returns the test that failed under it ("" for none), or why the run
// says nothing, as runMutant does.
func (g *goPin) run(ctx context.Context, top string, id int, timeout time.Duration) (by, unchecked string, err error) {
	var broken []string
	for _, pk := range g.pkgs {
		if pk.bin == "" {
			for _, t := range pk.ids {
				broken = append(broken, t+" ("+string(testrun.BuildFail)+": "+pk.fail+")")
			}
			continue
		}
		tops := map[string]bool{}
		var quoted []string
		for _, n := range pk.names {
			t, _, _ := strings.Cut(n, "/")
			if !tops[t] {
				tops[t] = true
				quoted = append(quoted, regexp.QuoteMeta(t))
			}
		}
		// -test.paniconexit0 as go test passes it: an os.Exit(0) inside a
		// test is a failure, never a silent pass.
		argv := append([]string{pk.bin, "-test.v=test2json", "-test.count=1", "-test.paniconexit0", "-test.run=^(" + strings.Join(quoted, "|") + ")$"}, g.testArgs...)
		var ends goEnds
		res := runGroup(ctx, argv, filepath.Join(top, filepath.FromSlash(pk.dir)), append(g.env(), MutantEnv+"="+strconv.Itoa(id)), []string{top, g.tmp}, timeout, 0, &ends)
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		if res.err != nil {
			return "", "its mutant's run did not run: " + res.err.Error(), nil
		}
		for i, n := range pk.names {
			switch o := ends.outcome(n, res); o {
			case testrun.Pass:
			case testrun.FailAssert, testrun.FailError, testrun.Timeout:
				return pk.ids[i], "", nil
			default:
				broken = append(broken, pk.ids[i]+" ("+string(o)+")")
			}
		}
	}
	if len(broken) > 0 {
		return "", "its mutant's run did not reach the tests: " + strings.Join(broken, ", "), nil
	}
	return "", "", nil
}

// goEnds reads a test binary's -test.v=test2json output: the framing
// lines, which the testing package marks with a leading ^V that a test's
// own output cannot fake by printing text alone.
type goEnds struct {
	started map[string]bool
	ended   map[string]testrun.Outcome
	rest    []byte
	skip    bool // inside a line longer than the buffer: not a framing line
}

func (e *goEnds) Write(b []byte) (int, error) {
	n := len(b)
	if e.started == nil {
		e.started, e.ended = map[string]bool{}, map[string]testrun.Outcome{}
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(e.rest)+len(b) > 4096 {
				e.rest, e.skip = e.rest[:0], true
			} else if !e.skip {
				e.rest = append(e.rest, b...)
			}
			break
		}
		if !e.skip {
			e.line(append(e.rest, b[:i]...))
		}
		e.rest, e.skip, b = e.rest[:0], false, b[i+1:]
	}
	return n, nil
}

func (e *goEnds) line(l []byte) {
	// A test's output that did not end its line comes before the
	// marker on the same line.
	i := bytes.IndexByte(l, 0x16)
	if i < 0 {
		return
	}
	s := string(bytes.TrimRight(l[i+1:], "\r"))
	s = strings.TrimLeft(s, " ")
	if n, ok := strings.CutPrefix(s, "=== RUN   "); ok {
		e.started[n] = true
		return
	}
	for pre, o := range map[string]testrun.Outcome{"--- PASS: ": testrun.Pass, "--- FAIL: ": testrun.FailAssert, "--- SKIP: ": testrun.Skip} {
		if rest, ok := strings.CutPrefix(s, pre); ok {
			if j := strings.LastIndex(rest, " ("); j >= 0 {
				rest = rest[:j]
			}
			e.ended[rest] = o
			return
		}
	}
}

// outcome is how test n ended: its framing line; else, started and the
// binary stopped by the bound, TIMEOUT; started and the binary ending in
// failure (a panic outside the test's goroutine, os.Exit), FAIL_ERROR;
// never started, NOT_RUN, or ERROR_SETUP when the binary failed before
// any test (TestMain, an init).
func (e *goEnds) outcome(n string, res groupResult) testrun.Outcome {
	if o, ok := e.ended[n]; ok {
		return o
	}
	switch {
	case e.started[n] && res.timedOut:
		return testrun.Timeout
	case e.started[n] && res.code != 0:
		return testrun.FailError
	case len(e.started) == 0 && res.code != 0:
		return testrun.ErrorSetup
	}
	return testrun.NotRun
}

type groupResult struct {
	code     int
	timedOut bool
	out      string // the output's tail, when asked for
	err      error  // the command could not start
}

// env is the binaries' environment: their own temporary directory.
func (g *goPin) env() []string {
	return []string{"TMPDIR=" + g.tmp, "GOTMPDIR=" + g.tmp}
}

// runGroup runs argv in dir (testrun.Exec: a process group of its own,
// killed whole), confined to writing into writable (confinedStart). Its
// output goes to sinks and, up to keep bytes of tail, into out.
func runGroup(ctx context.Context, argv []string, dir string, env, writable []string, timeout time.Duration, keep int, sinks ...io.Writer) groupResult {
	tail := &tailBuf{max: keep}
	w := io.MultiWriter(append(sinks, tail)...)
	start := func(c *exec.Cmd) error { return confinedStart(c, writable) }
	e := testrun.Exec(ctx, argv, dir, env, timeout, w, w, start)
	res := groupResult{code: e.Code, timedOut: e.TimedOut, out: string(tail.b)}
	if e.StartErr != nil {
		res.err = fmt.Errorf("start %s: %w", filepath.Base(argv[0]), e.StartErr)
	}
	return res
}

// tailBuf keeps the last max bytes written to it.
type tailBuf struct {
	max int
	b   []byte
}

func (t *tailBuf) Write(p []byte) (int, error) {
	if t.max <= 0 {
		return len(p), nil
	}
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// lastLines is the last n non-empty lines of s, joined by "; ".
func lastLines(s string, n int) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	if len(out) == 0 {
		return "no output"
	}
	return strings.Join(out, "; ")
}
