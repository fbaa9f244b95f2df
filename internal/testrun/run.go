package testrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// DefaultOutputCap is how many bytes of a run's stdout and stderr are kept
// when Spec.OutputCap is zero.
const DefaultOutputCap = 1 << 20

// maxReport bounds a report file read after a run.
const maxReport = 256 << 20

// Spec is one declared test run.
type Spec struct {
	// Argv runs the tests. Without ReportFile its stdout is the report.
	Argv []string
	Dir  string
	// Env is added to this process's environment.
	Env     []string
	Format  Format
	Dialect Dialect
	// ReportFile, when set, is where the runner writes its report (JUnit
	// files, jest --outputFile); it is removed before the run and read
	// after it. Relative to Dir.
	ReportFile string
	// Timeout bounds the run (and each isolated re-run); zero means none
	// beyond ctx.
	Timeout     time.Duration
	Declared    []string
	StubMarkers []string
	// OutputCap bounds the captured stdout+stderr (head and tail are kept);
	// zero means DefaultOutputCap. The report itself is parsed as it
	// streams and is not bounded by it.
	OutputCap int
	// Root is cut from absolute file paths in results; defaults to Dir.
	Root string
	// Compile, when set, runs before Argv so that a build failure is
	// attributed to its package or target rather than to a test.
	Compile *Step
	// Isolate returns the argv that runs one declared test alone. When
	// set, declared tests left NOT_RUN by a crash or a timeout of the
	// first run are re-run one by one, and their outcome is taken from
	// that run (Result.Rerun). GoIsolate builds one for go test.
	Isolate func(id string) []string
	// Start, when set, starts each of the run's processes instead of
	// exec.Cmd.Start, given the directories the run writes into (Dir,
	// the run's temporary directory, the report file's): a gate confines
	// the tests it runs so.
	Start func(cmd *exec.Cmd, writable []string) error
	start func(*exec.Cmd) error // Start with the run's directories
	// Subset returns the argv that runs only these declared tests (the
	// runner template filled with them). When set, a pytest session that
	// died loading a conftest.py — no report at all — is run again once
	// per declared test file, so the broken conftest costs only the files
	// under it (ERROR_SETUP) and the others are judged.
	Subset func(ids []string) []string
}

// Step is a compile step.
type Step struct {
	Argv []string
	// Format of the step's stdout: GoJSON (`go test -json -run '^$' pkgs`
	// or `go vet -json`'s build events) attributes a failure to each
	// package; "" means any non-zero exit is a BUILD_FAIL of every
	// declared test, and the tests are not run.
	Format Format
}

// RunResult is what Run returns.
type RunResult struct {
	Report   *Report
	ExitCode int
	TimedOut bool
	Duration time.Duration
	// Output is the captured stdout+stderr of the main run, cut in the
	// middle past the cap; OutputCut says it was cut, OutputBytes how
	// much there was.
	Output      string
	OutputCut   bool
	OutputBytes int64
	// CompileOutput is the compile step's captured output.
	CompileOutput string
	// Reruns is how many isolated re-runs were made.
	Reruns int
}

// Run runs the declared tests and classifies their output. The runner
// gets its own process group, which is killed whole on timeout or when ctx
// ends. A report that cannot be read is returned with verdict UNVERIFIABLE
// together with a typed UNVERIFIABLE error; a bad spec is a SCHEMA error
// and runs nothing; a runner that cannot start is a RUNNER error.
func Run(ctx context.Context, spec Spec) (*RunResult, error) {
	if len(spec.Argv) == 0 {
		return nil, apperr.New(apperr.Schema, "the test command is empty")
	}
	opts := Options{Format: spec.Format, Dialect: spec.Dialect, Declared: spec.Declared, StubMarkers: spec.StubMarkers, Root: spec.Root}
	if opts.Root == "" {
		opts.Root = spec.Dir
	}
	if len(opts.StubMarkers) == 0 {
		opts.StubMarkers = DefaultStubMarkers
	}
	if err := checkFormat(&opts); err != nil {
		rep, err := unverifiable(opts, "%s", apperr.Message(err))
		return &RunResult{Report: rep}, err
	}
	if spec.Compile != nil && spec.Compile.Format != "" && spec.Compile.Format != GoJSON {
		return nil, apperr.New(apperr.Schema, "compile step format %q is not supported (go-test-json, or none)", spec.Compile.Format)
	}
	cap := spec.OutputCap
	if cap <= 0 {
		cap = DefaultOutputCap
	}
	res := &RunResult{}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	// Every temporary file of the run — go's build directory, pytest's
	// basetemp, a runner's own — goes under one directory of its own,
	// removed when the run ends however it ends (its process group is
	// dead by then); one a killed run left behind is removed by the next.
	tmp, err := runTempDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	spec.Env = append([]string{"TMPDIR=" + tmp, "GOTMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp}, spec.Env...)
	if spec.Start != nil {
		w := []string{spec.Dir, tmp}
		if spec.ReportFile != "" {
			r := spec.ReportFile
			if !filepath.IsAbs(r) {
				r = filepath.Join(spec.Dir, r)
			}
			w = append(w, filepath.Dir(r))
		}
		start := spec.Start
		spec.start = func(c *exec.Cmd) error { return start(c, w) }
	}

	var compileGroups []group
	if spec.Compile != nil {
		groups, out, stop, err := runCompile(ctx, spec, opts, cap)
		res.CompileOutput = out
		if err != nil {
			return nil, err
		}
		if stop != nil {
			res.Report = stop
			return res, nil
		}
		compileGroups = groups
	}

	finish, ex, perr := runOnce(ctx, spec, spec.Argv, opts, cap)
	if ex.startErr != nil {
		return nil, ex.startErr
	}
	if err := ctx.Err(); err != nil {
		return nil, apperr.Wrap(Canceled, err, "the test run was cancelled: %v", err)
	}
	res.ExitCode, res.TimedOut = ex.code, ex.timedOut
	res.Output, res.OutputCut, res.OutputBytes = ex.out.String(), ex.out.Cut(), ex.out.Total()
	opts.TimedOut = ex.timedOut
	if perr != nil {
		if ex.timedOut {
			res.Report = timedOutReport(opts, spec.Timeout)
			return res, nil
		}
		if spec.Subset != nil && opts.Dialect == DialectPytest && conftestAbort(res.Output, opts.Root) != "" {
			rep, err := perFile(ctx, spec, opts, cap, res)
			if err != nil || rep != nil {
				res.Report = rep
				return res, err
			}
		}
		rep, err := unverifiable(opts, "%s (runner exit code %d)", apperr.Message(perr), ex.code)
		res.Report = rep
		return res, err
	}
	p := finish(ex.timedOut)
	p.groups = append(p.groups, compileGroups...)
	rep := p.report(opts)
	if spec.Isolate != nil {
		if err := isolate(ctx, spec, opts, cap, rep, res); err != nil {
			return nil, err
		}
	}
	res.Report = rep
	return res, nil
}

// timedOutReport is the report of a run killed before its report was
// complete: every declared test is TIMEOUT.
func timedOutReport(opts Options, d time.Duration) *Report {
	rep := &Report{Format: opts.Format, Dialect: opts.Dialect, Counts: map[Outcome]int{}, Tests: []Result{}}
	for _, id := range dedupe(opts.Declared) {
		rep.Tests = append(rep.Tests, Result{ID: id, Declared: true, Outcome: Timeout,
			Reason: fmt.Sprintf("the run was killed at its deadline (%s) before its report was complete", d)})
	}
	finishCounts(rep)
	if len(rep.Tests) == 0 {
		rep.Verdict, rep.Reason = VerdictFail, fmt.Sprintf("the run was killed at its deadline (%s) before its report was complete", d)
	}
	return rep
}

func finishCounts(rep *Report) {
	rep.Counts = map[Outcome]int{}
	for _, t := range rep.Tests {
		rep.Counts[t.Outcome]++
	}
	rep.Verdict, rep.Reason = verdict(rep.Tests)
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

type execResult struct {
	code     int
	timedOut bool
	out      *Capture
	startErr error
}

// runOnce runs argv and parses its report (stdout as it streams, or the
// report file after exit).
func runOnce(ctx context.Context, spec Spec, argv []string, opts Options, cap int) (func(bool) *parsed, execResult, error) {
	reportPath := ""
	if spec.ReportFile != "" {
		reportPath = spec.ReportFile
		if !strings.HasPrefix(reportPath, "/") && spec.Dir != "" {
			reportPath = spec.Dir + "/" + reportPath
		}
		_ = os.Remove(reportPath)
	}
	var (
		finish func(bool) *parsed
		perr   error
		wg     sync.WaitGroup
		pw     *io.PipeWriter
	)
	opts.testDone = started(ctx, argv)
	var sink io.Writer
	if reportPath == "" {
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		sink = pw
		wg.Add(1)
		go func() {
			defer wg.Done()
			finish, perr = parse(pr, opts)
			_, _ = io.Copy(io.Discard, pr) // drain what the parser left
			pr.Close()
		}()
	}
	ex := execute(ctx, argv, spec.Dir, spec.Env, spec.Timeout, cap, sink, spec.start)
	if pw != nil {
		pw.Close()
		wg.Wait()
	}
	if ex.startErr != nil {
		return nil, ex, ex.startErr
	}
	if reportPath != "" {
		// The judged tests can write where the report goes: what sits
		// there is read only when it is a regular file (a FIFO would
		// hold a plain open forever).
		f, _, err := osproc.OpenRegular(reportPath)
		if err != nil {
			return nil, ex, apperr.Wrap(Unverifiable, err, "the runner wrote no report at %s", spec.ReportFile)
		}
		defer f.Close()
		finish, perr = parse(io.LimitReader(f, maxReport), opts)
	}
	return finish, ex, perr
}

// runTempDir makes the run's temporary directory, ideate-testrun-<pid>-*,
// after removing those of processes that no longer exist (a run killed
// with its gate).
func runTempDir() (string, error) {
	d, err := osproc.TempDir("testrun")
	if err != nil {
		return "", apperr.Wrap(apperr.Write, err, "create the run's temporary directory: %v", err)
	}
	return d, nil
}

// execute runs argv (Exec); stdout goes to sink (when set) and, with
// stderr, to a bounded capture.
func execute(ctx context.Context, argv []string, dir string, env []string, timeout time.Duration, cap int, sink io.Writer, start func(*exec.Cmd) error) execResult {
	out := NewCapture(cap)
	var stdout io.Writer = out
	if sink != nil {
		stdout = io.MultiWriter(out, sink)
	}
	e := Exec(ctx, argv, dir, env, timeout, stdout, out, start)
	res := execResult{code: e.Code, timedOut: e.TimedOut, out: out}
	if e.StartErr != nil {
		res.startErr = apperr.Wrap(RunnerFailed, e.StartErr, "start %s: %v", argv[0], e.StartErr)
	}
	return res
}

// ExecEnd is how a process Exec ran ended: its exit code (-1 when it
// could not start or was killed by a signal), whether its bound ended
// it, and why it could not start.
type ExecEnd struct {
	Code     int
	TimedOut bool
	StartErr error
}

// Exec runs argv in dir, the environment plus env, in a process group of
// its own that dies with this process: when it ends, when ctx ends or
// when timeout (0: none) passes, the whole group is killed, so a test
// process left behind by the runner never outlives the run. start, when
// not nil, starts the process instead of exec.Cmd.Start.
func Exec(ctx context.Context, argv []string, dir string, env []string, timeout time.Duration, stdout, stderr io.Writer, start func(*exec.Cmd) error) ExecEnd {
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	osproc.Group(cmd)
	osproc.DieWithParent(cmd, syscall.SIGKILL)
	cmd.WaitDelay = 2 * time.Second
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		return ExecEnd{Code: -1, StartErr: err}
	}
	// The whole group dies with this process, however it ends: a gate
	// killed while it judges leaves no test running. Without a watcher
	// (no /bin/sh) the leader still dies with it (DieWithParent).
	release, _ := osproc.KillGroupOnExit(cmd)
	err := cmd.Wait()
	// Whatever the leader did, no process of its group outlives the run.
	_ = osproc.KillGroup(cmd.Process)
	release()
	var res ExecEnd
	if err != nil {
		res.Code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			res.Code = ee.ExitCode()
		}
	}
	res.TimedOut = timeout > 0 && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	return res
}

var compileErr = textfmt.Regexp(`(?i)\berror\b`)

// runCompile runs the compile step. It returns package groups (GoJSON),
// or a finished report when a plain step failed and the tests must not
// run.
func runCompile(ctx context.Context, spec Spec, opts Options, cap int) ([]group, string, *Report, error) {
	st := spec.Compile
	if len(st.Argv) == 0 {
		return nil, "", nil, apperr.New(apperr.Schema, "the compile command is empty")
	}
	if st.Format == GoJSON {
		copts := opts
		copts.Format, copts.Dialect = GoJSON, ""
		cspec := spec
		cspec.ReportFile = ""
		finish, ex, perr := runOnce(ctx, cspec, st.Argv, copts, cap)
		if ex.startErr != nil {
			return nil, "", nil, ex.startErr
		}
		if perr != nil {
			if ex.code == 0 {
				return nil, ex.out.String(), nil, nil // nothing to build, no events
			}
			rep := compileFailed(opts, fmt.Sprintf("the compile step failed (exit code %d): %s", ex.code, firstErrorLine(ex.out.String())))
			return nil, ex.out.String(), rep, nil
		}
		p := finish(ex.timedOut)
		var groups []group
		for _, g := range p.groups {
			if g.outcome == BuildFail {
				groups = append(groups, g)
			}
		}
		return groups, ex.out.String(), nil, nil
	}
	ex := execute(ctx, st.Argv, spec.Dir, spec.Env, spec.Timeout, cap, nil, spec.start)
	if ex.startErr != nil {
		return nil, "", nil, ex.startErr
	}
	if ex.code == 0 {
		return nil, ex.out.String(), nil, nil
	}
	if groups := goBuildGroups(ex.out.String()); len(groups) > 0 && !ex.timedOut {
		// go build or go vet named the packages that failed: each one's
		// tests are BUILD_FAIL, the others still run.
		return groups, ex.out.String(), nil, nil
	}
	reason := fmt.Sprintf("the compile step failed (exit code %d): %s", ex.code, firstErrorLine(ex.out.String()))
	if ex.timedOut {
		reason = fmt.Sprintf("the compile step was killed at its deadline (%s)", spec.Timeout)
	}
	return nil, ex.out.String(), compileFailed(opts, reason), nil
}

// goBuildGroups reads the output of go build or go vet: each failing
// package is a "# import/path" header (with " [import/path.test]" for its
// test variant) followed by its errors. It returns one BUILD_FAIL group
// per package with its first error, or nil when the output has no such
// header.
func goBuildGroups(out string) []group {
	var groups []group
	seen := map[string]bool{}
	pkg := ""
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(t, "# "); ok {
			// "# p", "# p [p.test]", "# p_test [p.test]" or vet's "# [p]".
			rest = strings.TrimPrefix(rest, "[")
			pkg, _, _ = strings.Cut(rest, " ")
			pkg = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(pkg, "]"), ".test"), "_test")
			continue
		}
		if pkg == "" || t == "" || seen[pkg] {
			continue
		}
		seen[pkg] = true
		groups = append(groups, group{key: pkg, outcome: BuildFail, reason: "the compile step failed for package " + pkg + ": " + clip(t, 300)})
	}
	return groups
}

func compileFailed(opts Options, reason string) *Report {
	rep := &Report{Format: opts.Format, Dialect: opts.Dialect, Tests: []Result{}}
	for _, id := range dedupe(opts.Declared) {
		rep.Tests = append(rep.Tests, Result{ID: id, Declared: true, Outcome: BuildFail, Reason: reason})
	}
	finishCounts(rep)
	if len(rep.Tests) == 0 {
		rep.Verdict, rep.Reason = VerdictFail, reason
	}
	return rep
}

func firstErrorLine(out string) string {
	first := ""
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "# ") {
			continue
		}
		if first == "" {
			first = t
		}
		if compileErr().MatchString(t) {
			return clip(t, 300)
		}
	}
	return clip(first, 300)
}

// isolate re-runs, one by one, the declared tests a crash or timeout left
// NOT_RUN, and checks that each selector ran exactly its test.
func isolate(ctx context.Context, spec Spec, opts Options, cap int, rep *Report, res *RunResult) error {
	changed := false
	for i, t := range rep.Tests {
		if !t.Declared || t.Outcome != NotRun || !t.crashed {
			continue
		}
		argv := spec.Isolate(t.ID)
		if len(argv) == 0 {
			continue
		}
		o := opts
		o.Declared = []string{t.ID}
		finish, ex, perr := runOnce(ctx, spec, argv, o, cap)
		if ex.startErr != nil {
			return ex.startErr
		}
		if err := ctx.Err(); err != nil {
			return apperr.Wrap(Canceled, err, "the test run was cancelled: %v", err)
		}
		res.Reruns++
		changed = true
		var r Result
		switch {
		case perr != nil && ex.timedOut:
			r = Result{ID: t.ID, Outcome: Timeout, Reason: fmt.Sprintf("run alone, it was killed at its deadline (%s)", spec.Timeout)}
		case perr != nil:
			r = Result{ID: t.ID, Outcome: NotRun, Reason: "run alone, its output could not be read: " + apperr.Message(perr)}
		default:
			o.TimedOut = ex.timedOut
			sub := finish(ex.timedOut).report(o)
			r = sub.Tests[0]
			var others []string
			for _, x := range sub.Tests[1:] {
				if !isPartOf(x.ID, t.ID, r.RunnerID) {
					others = append(others, x.ID)
				}
			}
			if len(others) > 0 {
				rep.Notes = append(rep.Notes, fmt.Sprintf("the selector for %s also ran %d other tests (%s)", t.ID, len(others), strings.Join(firstN(others, 3), ", ")))
			}
		}
		r.Declared, r.Rerun = true, true
		rep.Tests[i] = r
	}
	if changed {
		finishCounts(rep)
	}
	return nil
}

// isPartOf reports whether id is the test itself or one of its subtests.
func isPartOf(id, declared, runnerID string) bool {
	for _, base := range []string{declared, runnerID} {
		if base != "" && (id == base || strings.HasPrefix(id, base+"/")) {
			return true
		}
	}
	return false
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

// GoSelector returns the -run pattern that selects exactly one test (and
// its subtests): each level anchored and quoted, "TestX/sub" becoming
// "^TestX$/^sub$".
func GoSelector(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// GoIsolate returns a Spec.Isolate for go test ids ("import/path::TestX"):
// `go test -json -count=1 [extra…] -run <GoSelector> <import/path>`.
func GoIsolate(extra ...string) func(id string) []string {
	return func(id string) []string {
		i := strings.LastIndex(id, "::")
		if i <= 0 {
			return nil
		}
		argv := []string{"go", "test", "-json", "-count=1"}
		argv = append(argv, extra...)
		return append(argv, "-run", GoSelector(id[i+2:]), id[:i])
	}
}

// Capture keeps the first and last cap/2 bytes written to it.
type Capture struct {
	mu    sync.Mutex
	half  int
	head  []byte
	tail  []byte // ring of the last half bytes once head is full
	pos   int
	full  bool
	total int64
}

// NewCapture returns a Capture keeping at most cap bytes.
func NewCapture(cap int) *Capture {
	if cap < 2 {
		cap = 2
	}
	return &Capture{half: cap / 2}
}

// Write keeps p's bytes within the bound; it never fails.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.half - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if c.tail == nil {
		c.tail = make([]byte, c.half)
	}
	if len(p) >= c.half {
		copy(c.tail, p[len(p)-c.half:])
		c.pos, c.full = 0, true
		return n, nil
	}
	k := copy(c.tail[c.pos:], p)
	if k < len(p) {
		copy(c.tail, p[k:])
		c.full = true
	}
	c.pos = (c.pos + len(p)) % c.half
	if c.pos == 0 && len(p) > 0 {
		c.full = true
	}
	return n, nil
}

// Total is the number of bytes written.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Cut reports whether bytes were dropped.
func (c *Capture) Cut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(len(c.head)+c.tailLen())
}

func (c *Capture) tailLen() int {
	if c.full {
		return c.half
	}
	return c.pos
}

// String returns head, a line saying how much was cut (if anything), and
// tail.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b bytes.Buffer
	b.Write(c.head)
	kept := int64(len(c.head) + c.tailLen())
	if cut := c.total - kept; cut > 0 {
		fmt.Fprintf(&b, "\n… [%d bytes cut] …\n", cut)
	}
	if c.full {
		b.Write(c.tail[c.pos:])
		b.Write(c.tail[:c.pos])
	} else {
		b.Write(c.tail[:c.pos])
	}
	return b.String()
}

var conftestRe = textfmt.Regexp(`(?:ImportError|Error) while loading conftest '([^']+)'`)

// conftestAbort returns the reason a pytest session died loading a
// conftest.py ("" when it did not): the conftest and its error line.
func conftestAbort(out, root string) string {
	m := conftestRe().FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	path := m[1]
	if rel, err := filepath.Rel(root, path); err == nil && root != "" && !strings.HasPrefix(rel, "..") {
		path = filepath.ToSlash(rel)
	}
	return "pytest could not load " + path + ": " + pyLastError(out[strings.Index(out, m[0]):])
}

// perFile runs a pytest session that died loading a conftest.py once per
// declared test file and merges what each run reports: a file whose own
// run dies on a conftest gets ERROR_SETUP for its declared tests, the
// others their own outcomes. It returns nil when a run fails any other
// way (the caller reports the first run as unreadable).
func perFile(ctx context.Context, spec Spec, opts Options, cap int, res *RunResult) (*Report, error) {
	var files []string
	byFile := map[string][]string{}
	for _, id := range dedupe(opts.Declared) {
		f, _, _ := strings.Cut(id, "::")
		if byFile[f] == nil {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], id)
	}
	rep := &Report{Format: opts.Format, Dialect: opts.Dialect, Tests: []Result{}}
	var others []Result
	for _, f := range files {
		ids := byFile[f]
		o := opts
		o.Declared = ids
		var sub *Report
		var out string
		if len(files) == 1 {
			out = res.Output // the first run was this file's run
		} else {
			argv := spec.Subset(ids)
			if len(argv) == 0 {
				return nil, nil
			}
			finish, ex, perr := runOnce(ctx, spec, argv, o, cap)
			if ex.startErr != nil {
				return nil, ex.startErr
			}
			if err := ctx.Err(); err != nil {
				return nil, apperr.Wrap(Canceled, err, "the test run was cancelled: %v", err)
			}
			res.Reruns++
			out = ex.out.String()
			switch {
			case perr == nil:
				o.TimedOut = ex.timedOut
				sub = finish(ex.timedOut).report(o)
			case ex.timedOut:
				sub = timedOutReport(o, spec.Timeout)
			}
		}
		if sub == nil {
			why := conftestAbort(out, opts.Root)
			if why == "" {
				return nil, nil
			}
			sub = &Report{}
			for _, id := range ids {
				sub.Tests = append(sub.Tests, Result{ID: id, Declared: true, Outcome: ErrorSetup, Reason: why + " (a conftest of this file's directory)"})
			}
		}
		for _, t := range sub.Tests {
			if t.Declared {
				rep.Tests = append(rep.Tests, t)
			} else {
				others = append(others, t)
			}
		}
		rep.Notes = append(rep.Notes, sub.Notes...)
	}
	rep.Tests = append(rep.Tests, others...)
	rep.Notes = append(rep.Notes, "the session died loading a conftest.py ("+conftestAbort(res.Output, opts.Root)+"); each declared test file was run on its own")
	finishCounts(rep)
	return rep, nil
}
