package gates

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/pathglob"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/shell"
	"github.com/ideate/git-ideate/internal/testrun"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// MaxPlanFile caps what a gate reads of a file in the main tree or a
// worktree (plan-ready.md, go.mod).
const MaxPlanFile = plan.MaxFile

// NoRunner is a task whose tests no runner in standards.md can run.
const NoRunner apperr.Code = "NO_RUNNER"

// RunOptions says which of a task's tests run and for how long.
type RunOptions struct {
	// Wide runs the regression set instead of the declared tests alone:
	// for a Go runner every test of the declared tests' packages, for the
	// others every test of the declared tests' files. The declared tests
	// still get their outcome under their declared ids; the other tests
	// keep the runner's ids.
	Wide bool
	// Timeout bounds the run (its tests are then TIMEOUT); zero means none
	// beyond ctx.
	Timeout time.Duration
	// Env is added to the runner's environment.
	Env []string
}

// RunTask runs the tests declared as tests (plan ids, "path::Name") with
// the standards' runner that covers them, in dir (a task's worktree, or a
// checkout of its base), and returns the run with each declared test's
// outcome under its plan id. A standards file with no runner for the tests
// is NoRunner and runs nothing; a runner template this engine cannot fill
// is SCHEMA. The errors of testrun.Run come back with its result (an
// unreadable report: the result holds an UNVERIFIABLE report).
func RunTask(ctx context.Context, st *plan.Standards, dir string, tests []string, o RunOptions) (*testrun.RunResult, error) {
	r, err := RunnerFor(st, tests)
	if err != nil {
		return nil, err
	}
	tmp, err := osproc.TempDir("run")
	if err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot create a temporary directory")
	}
	defer os.RemoveAll(tmp)
	report := ""
	if strings.Contains(r.Run, "{report}") {
		report = filepath.Join(tmp, "report")
	}
	argv, err := expandRunner(r.Run, tests, report, o.Wide)
	if err != nil {
		return nil, err
	}
	declared, back := tests, map[string]string(nil)
	if r.Format == string(testrun.GoJSON) {
		declared, back = goDeclared(dir, tests)
	}
	spec := testrun.Spec{Argv: argv, Dir: dir, Format: testrun.Format(r.Format), Dialect: testrun.Dialect(r.Dialect),
		ReportFile: report, Declared: declared, StubMarkers: StubMarkers(st, r), Timeout: o.Timeout, Start: confinedStart,
		Env: append(runEnv(), o.Env...)}
	if r.Compile != "" {
		cargv, err := expandRunner(r.Compile, tests, "", o.Wide)
		if err != nil {
			return nil, err
		}
		step := &testrun.Step{Argv: cargv}
		if r.Format == string(testrun.GoJSON) && len(cargv) > 1 && cargv[0] == "go" && cargv[1] == "test" {
			step.Format = testrun.GoJSON
		}
		spec.Compile = step
	}
	if r.IsolateOnCrash && r.Format == string(testrun.GoJSON) {
		spec.Isolate = testrun.GoIsolate()
	}
	// A pytest session that dies loading a conftest.py is run again per
	// declared file, with the same template.
	spec.Subset = func(ids []string) []string {
		argv, err := expandRunner(r.Run, ids, report, o.Wide)
		if err != nil {
			return nil
		}
		return argv
	}
	res, runErr := testrun.Run(ctx, spec)
	if res == nil {
		return nil, runErr
	}
	if res.Report != nil {
		for i := range res.Report.Tests {
			x := &res.Report.Tests[i]
			if p, ok := back[x.ID]; ok {
				if x.RunnerID == "" {
					x.RunnerID = x.ID
				}
				x.ID = p
			}
		}
	}
	return res, runErr
}

// StubMarkers are the stub markers of standards.md and of the runner
// together (testrun's default when neither declares one).
func StubMarkers(st *plan.Standards, r *plan.Runner) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if st != nil {
		for _, p := range st.StubMarkers {
			add(p.Text)
		}
	}
	if r != nil {
		for _, s := range r.StubMarkers {
			add(s)
		}
	}
	return out
}

// ShimMarker is the runner's shim marker, else the standards'.
func ShimMarker(st *plan.Standards, r *plan.Runner) string {
	if r != nil && r.ShimMarker != "" {
		return r.ShimMarker
	}
	if st != nil {
		return st.ShimMarker
	}
	return ""
}

// RunnerFor picks the first runner of standards.md whose extensions (or
// test-file globs) cover every declared test's file; none is NoRunner.
func RunnerFor(st *plan.Standards, tests []string) (*plan.Runner, error) {
	if st == nil || len(st.Runners) == 0 {
		return nil, apperr.New(NoRunner, "standards.md declares no test runners (## Test runners); the tests cannot be run and judged")
	}
	for _, r := range st.Runners {
		all := true
		for _, id := range tests {
			p, _ := SplitTestID(id)
			if !runnerCovers(r, p) {
				all = false
				break
			}
		}
		if all {
			return r, nil
		}
	}
	return nil, apperr.New(NoRunner, "no runner in standards.md covers every declared test (%s)", strings.Join(tests, ", "))
}

func runnerCovers(r *plan.Runner, p string) bool {
	for _, e := range r.Extensions {
		if strings.HasSuffix(p, e) {
			return true
		}
	}
	for _, g := range r.TestGlobs {
		if pathglob.Match(g, p) {
			return true
		}
	}
	return false
}

// SplitTestID splits a plan test id "path::Name/sub" into the file and
// the name; an id without "::" has no file.
func SplitTestID(id string) (file, name string) {
	i := strings.Index(id, "::")
	if i < 0 {
		return "", id
	}
	return id[:i], id[i+2:]
}

var placeholderRe = textfmt.Regexp(`\{[a-z_]+\}`)

// expandRunner splits a runner template into words and fills its
// placeholders: a word that is only {packages}, {node_ids}, {files} or
// {targets} becomes one word per value; {go_regex}, {filters} and {report}
// are replaced inside a word. Wide selects the regression set: every test
// of the packages ({go_regex} "." and {filters} empty) or of the files
// ({node_ids} become the files).
func expandRunner(tmpl string, tests []string, report string, wide bool) ([]string, error) {
	words, _, ok := shell.Fields(tmpl)
	if !ok {
		return nil, apperr.New(apperr.Schema, "runner command %q must be one simple command", tmpl)
	}
	var files, names, pkgs []string
	seenF, seenP, seenN := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, id := range tests {
		f, n := SplitTestID(id)
		if f != "" && !seenF[f] {
			seenF[f] = true
			files = append(files, f)
			d := "./" + path.Dir(f)
			if d == "./." {
				d = "."
			}
			if !seenP[d] {
				seenP[d] = true
				pkgs = append(pkgs, d)
			}
		}
		top, _, _ := strings.Cut(n, "/")
		if !seenN[top] {
			seenN[top] = true
			names = append(names, top)
		}
	}
	sort.Strings(pkgs)
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	goRegex, filters, nodeIDs := "^("+strings.Join(quoted, "|")+")$", strings.Join(quoted, "|"), tests
	if wide {
		goRegex, filters, nodeIDs = ".", "", files
	}
	lists := map[string][]string{"{packages}": pkgs, "{node_ids}": nodeIDs, "{files}": files, "{targets}": pkgs}
	inline := strings.NewReplacer("{go_regex}", goRegex, "{filters}", filters, "{report}", report)
	var argv []string
	for _, w := range words {
		if vals, ok := lists[w]; ok {
			argv = append(argv, vals...)
			continue
		}
		for ph, vals := range lists {
			w = strings.ReplaceAll(w, ph, strings.Join(vals, " "))
		}
		argv = append(argv, inline.Replace(w))
	}
	for _, w := range argv {
		if strings.Contains(w, "{") && placeholderRe().MatchString(w) {
			return nil, apperr.New(apperr.Schema, "runner command %q holds a placeholder this engine does not fill (%s)", tmpl, w)
		}
	}
	return argv, nil
}

// goDeclared turns the plan's Go test ids ("dir/x_test.go::TestName")
// into the runner's ("<module>/dir::TestName", the module read from go.mod
// at the worktree's top), and returns the way back. Without a go.mod the
// ids are left as they are.
func goDeclared(top string, tests []string) ([]string, map[string]string) {
	b, err := osproc.ReadRegular(filepath.Join(top, "go.mod"), MaxPlanFile)
	if err != nil {
		return tests, nil
	}
	mod := ""
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "module" {
			mod = strings.Trim(f[1], `"`)
			break
		}
	}
	if mod == "" {
		return tests, nil
	}
	out := make([]string, len(tests))
	back := map[string]string{}
	for i, id := range tests {
		f, n := SplitTestID(id)
		if f == "" {
			out[i] = id
			continue
		}
		pkg := mod
		if d := path.Dir(f); d != "." {
			pkg = mod + "/" + d
		}
		out[i] = pkg + "::" + n
		back[out[i]] = id
	}
	return out, back
}

// runEnv is what every gate run of the task's code adds to the
// environment. A judged worktree must stay as committed: no __pycache__
// left for the next gate to find as an uncommitted change. A verdict rests
// on a run of the tests, never on go test's cached result of an earlier
// run: the build cache the run writes is writable by the tests' own code
// too (-count=1 turns the result cache off for any runner template;
// commands without the flag ignore it).
func runEnv() []string {
	return []string{"PYTHONDONTWRITEBYTECODE=1", "GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1")}
}
