package main

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
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/shellwords"
	"github.com/ideate/git-ideate/internal/testrun"
)

// NoRunner is a task whose tests no runner in standards.md can run.
const NoRunner apperr.Code = "NO_RUNNER"

// TestRunCmd runs a task's declared tests in its worktree.
type TestRunCmd struct {
	Task    string `required:"" help:"Task whose declared tests run, in its worktree."`
	Label   string `default:"run" help:"What the run is for (base, red, green, …), kept with the recorded run."`
	Attempt int    `help:"Attempt the run is recorded under (default: the task's)." placeholder:"N"`
	Timeout int    `default:"600" help:"Seconds before the run is killed (its tests are then TIMEOUT)." placeholder:"S"`
	planFlags
}

// testRunOut is what test run prints.
type testRunOut struct {
	MessageType string          `json:"message_type"`
	Task        string          `json:"task"`
	Attempt     int             `json:"attempt"`
	Commit      string          `json:"commit"`
	Label       string          `json:"label"`
	Recorded    bool            `json:"recorded"`
	Note        string          `json:"note,omitempty"`
	ExitCode    int             `json:"exit_code"`
	Report      *testrun.Report `json:"report"`
}

// Run picks the runner of standards.md that matches the declared tests'
// files, runs them in the task's worktree and prints the report. A run of
// a worktree without uncommitted changes is recorded on the task's ref,
// keyed by (task, attempt, HEAD), for the gates to compare against; a run
// of uncommitted work is printed only.
func (c *TestRunCmd) Run(ctx context.Context, env *Env) error {
	m, err := openTasks(env)
	if err != nil {
		return err
	}
	ct, err := m.Contract(c.Task)
	if err != nil {
		return err
	}
	if len(ct.Tests) == 0 {
		return apperr.New(apperr.Schema, "task %s declares no tests", c.Task)
	}
	s, err := loadPlan(ctx, env, c.planFlags)
	if err != nil {
		return err
	}
	r, err := runnerFor(s.Standards, ct.Tests)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ideate-run-")
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create a temporary directory")
	}
	defer os.RemoveAll(tmp)
	report := ""
	if strings.Contains(r.Run, "{report}") {
		report = filepath.Join(tmp, "report")
	}
	argv, err := expandRunner(r.Run, ct.Tests, report)
	if err != nil {
		return err
	}
	declared, back := ct.Tests, map[string]string(nil)
	if r.Format == string(testrun.GoJSON) {
		declared, back = goDeclared(ct.Path, ct.Tests)
	}
	spec := testrun.Spec{Argv: argv, Dir: ct.Path, Format: testrun.Format(r.Format), Dialect: testrun.Dialect(r.Dialect),
		ReportFile: report, Declared: declared, StubMarkers: r.StubMarkers}
	spec.Timeout = time.Duration(c.Timeout) * time.Second
	if r.Compile != "" {
		cargv, err := expandRunner(r.Compile, ct.Tests, "")
		if err != nil {
			return err
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
	res, runErr := testrun.Run(ctx, spec)
	if res == nil {
		return runErr
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
	out := testRunOut{MessageType: "test_run", Task: c.Task, Attempt: ct.Attempt, Label: c.Label, ExitCode: res.ExitCode, Report: res.Report}
	if c.Attempt != 0 {
		out.Attempt = c.Attempt
	}
	g, _ := env.Git()
	ch, cerr := g.WorktreeChanges(ctx, ct.BaseHash(), ct.Path)
	switch {
	case cerr != nil:
		out.Note = "not recorded: " + apperr.Message(cerr)
	case hasUncommitted(ch):
		out.Note = "not recorded: the worktree has uncommitted changes, so no commit names what ran"
		out.Commit = ch.Head.String()
	case res.Report == nil:
		out.Note = "not recorded: no report"
	default:
		out.Commit = ch.Head.String()
		if _, err := m.PutRun(ctx, c.Task, out.Attempt, ch.Head, c.Label, res.Report); err != nil {
			return err
		}
		out.Recorded = true
	}
	if werr := writeJSON(env.Out, out, true); werr != nil {
		return werr
	}
	return runErr
}

func hasUncommitted(ch *gitstore.Changes) bool {
	for _, x := range ch.List {
		if x.Uncommitted {
			return true
		}
	}
	return false
}

// runnerFor picks the one runner whose extensions (or test-file globs)
// cover every declared test's file.
func runnerFor(st *plan.Standards, tests []string) (*plan.Runner, error) {
	if st == nil || len(st.Runners) == 0 {
		return nil, apperr.New(NoRunner, "standards.md declares no test runners (## Test runners); the tests cannot be run and judged")
	}
	for _, r := range st.Runners {
		all := true
		for _, id := range tests {
			p, _ := splitTestID(id)
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
		if ok, _ := path.Match(g, p); ok || matchDoubleStar(g, p) {
			return true
		}
	}
	return false
}

func matchDoubleStar(g, p string) bool {
	if rest, ok := strings.CutPrefix(g, "**/"); ok {
		ok1, _ := path.Match(rest, path.Base(p))
		return ok1
	}
	return false
}

// splitTestID splits "path::Name/sub" into the file and the name.
func splitTestID(id string) (file, name string) {
	i := strings.Index(id, "::")
	if i < 0 {
		return "", id
	}
	return id[:i], id[i+2:]
}

// expandRunner splits a runner template into words and fills its
// placeholders: a word that is only {packages}, {node_ids}, {files} or
// {targets} becomes one word per value; {go_regex}, {filters} and {report}
// are replaced inside a word.
func expandRunner(tmpl string, tests []string, report string) ([]string, error) {
	cmds := shellwords.Split(tmpl)
	if len(cmds) != 1 {
		return nil, apperr.New(apperr.Schema, "runner command %q must be one simple command", tmpl)
	}
	var files, names, pkgs []string
	seenF, seenP, seenN := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, id := range tests {
		f, n := splitTestID(id)
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
	lists := map[string][]string{"{packages}": pkgs, "{node_ids}": tests, "{files}": files, "{targets}": pkgs}
	inline := strings.NewReplacer("{go_regex}", "^("+strings.Join(quoted, "|")+")$", "{filters}", strings.Join(quoted, "|"), "{report}", report)
	var argv []string
	for _, w := range cmds[0] {
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
		if strings.Contains(w, "{") && regexp.MustCompile(`\{[a-z_]+\}`).MatchString(w) {
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
	b, err := os.ReadFile(filepath.Join(top, "go.mod"))
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
		f, n := splitTestID(id)
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
