package gates

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/pathglob"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/testrun"
	"github.com/ideate/git-ideate/internal/worktree"
)

// DefaultTimeout bounds each test run of a task gate when Input.Timeout
// is zero.
const DefaultTimeout = 10 * time.Minute

// Deps are what the task gates (red, scaffold, green) judge from; the
// composition root builds them once.
type Deps struct {
	Git   *gitstore.Store
	Tasks *worktree.Manager
	// Plan loads the sprint whose standards.md and plans the task belongs
	// to (its runners, markers, suppression patterns, pass-on-red flags).
	Plan func(ctx context.Context) (*plan.Sprint, error)
	// Log holds the stored verdicts: scaffold and green find the verified
	// RED commit there. Nil: those gates answer UNVERIFIABLE.
	Log VerdictLog
	// Symbols, when set, adds the scaffold gate's symbol checks (only
	// stubs were added, with the declared names); nil skips them.
	Symbols func(ctx context.Context, in SymbolInput) ([]Reason, error)
}

// SymbolInput is what the scaffold gate's symbol check judges: the task's
// worktree, the verified RED commit and the commit judged.
type SymbolInput struct {
	Task     string
	Dir      string
	Base     string
	Red      string
	Commit   string
	Standard *plan.Standards
	Runner   *plan.Runner
	// Declared is the plan's Symbols: line for the task.
	Declared []string
}

// The reason classes of the task gates: stable lower_snake labels.
const (
	ClassNoTask          = "no_task"
	ClassNoContract      = "no_contract"
	ClassNoWorktree      = "no_worktree"
	ClassNotHead         = "not_head"
	ClassUncommitted     = "uncommitted"
	ClassNoPlan          = "no_plan"
	ClassNotInPlan       = "not_in_plan"
	ClassNoRunner        = "no_runner"
	ClassRunnerError     = "runner_error"
	ClassUnknownFormat   = "unknown_format"
	ClassNoTests         = "no_tests"
	ClassNoTestGlobs     = "no_test_globs"
	ClassRegression      = "regression"
	ClassNotTestFile     = "not_test_file"
	ClassUnexpectedPass  = "unexpected_pass"
	ClassStubImplemented = "stub_implemented"
	ClassShimLeft        = "shim_left"
	ClassTestChanged     = "test_changed"
	ClassOutOfScope      = "out_of_scope"
	ClassNoScope         = "no_scope"
	ClassSuppression     = "suppression"
	ClassNoRed           = "no_red"
	ClassNoLog           = "no_log"
)

// Unplaced reports whether v judged no task of the sprint's plan (no
// task named, a task never started, so without a contract — a typo'd id —,
// no readable plan, a task the plan's tasks do not list): such a verdict
// is answered, never stored. A contract alone does not place a task: one
// can be started under any id.
func Unplaced(v Verdict) bool {
	for _, r := range v.Reasons {
		switch r.Class {
		case ClassNoTask, ClassNoContract, ClassNoPlan, ClassNotInPlan:
			return true
		}
	}
	return false
}

// OutcomeClass is the reason class of a test outcome that does not meet a
// gate's expectation.
func OutcomeClass(o testrun.Outcome) string {
	switch o {
	case testrun.Pass:
		return ClassUnexpectedPass
	case testrun.FailAssert:
		return "fail_assert"
	case testrun.FailStub:
		return "fail_stub"
	case testrun.FailError:
		return "runtime_error"
	case testrun.ErrorSetup:
		return "setup_error"
	case testrun.BuildFail:
		return "build_fail"
	case testrun.NotRun:
		return "not_run"
	case testrun.Timeout:
		return "timeout"
	case testrun.Skip:
		return "skip"
	}
	return strings.ToLower(string(o))
}

// taskState is one task gate's facts, gathered once.
type taskState struct {
	d       *Deps
	in      Input
	v       Verdict // prefilled with what is judged
	ct      *worktree.Contract
	ch      *gitstore.Changes
	head    gitstore.Hash
	tree    gitstore.Hash
	sprint  *plan.Sprint
	st      *plan.Standards
	runner  *plan.Runner
	passRed map[string]bool // declared test id → pass-on-red
	timeout time.Duration
}

// openTask gathers what every task gate needs: the contract, the
// worktree's HEAD (which must hold no uncommitted change) and the plan.
// A verdict it returns ends the gate there.
func (d *Deps) openTask(ctx context.Context, gate Name, in Input) (*taskState, *Verdict, error) {
	s := &taskState{d: d, in: in, v: Verdict{Gate: gate, Task: in.Task, Attempt: in.Attempt}, timeout: in.Timeout}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	stop := func(r Result, class, format string, args ...any) (*taskState, *Verdict, error) {
		v := s.v
		v.Result = r
		v.Reasons = []Reason{{Class: class, Detail: fmt.Sprintf(format, args...)}}
		return s, &v, nil
	}
	if in.Task == "" {
		return stop(UNVERIFIABLE, ClassNoTask, "no task was named, so there is no commit to judge")
	}
	if d.Tasks == nil || d.Git == nil || d.Plan == nil {
		return nil, nil, apperr.New(apperr.Internal, "gate %s was built without its dependencies", gate)
	}
	ct, ch, err := d.Tasks.Changes(ctx, in.Task)
	switch {
	case ct == nil && err != nil && apperr.Is(err, apperr.NotFound):
		return stop(UNVERIFIABLE, ClassNoContract, "%s", apperr.Message(err))
	case ct == nil && err != nil && apperr.Is(err, apperr.Schema):
		return stop(UNVERIFIABLE, ClassNoTask, "%s", apperr.Message(err))
	case ct == nil && err != nil:
		return nil, nil, err
	}
	s.ct = ct
	s.v.Base = ct.Base
	if s.v.Attempt == 0 {
		s.v.Attempt = ct.Attempt
	}
	s.v.Story, _, _ = strings.Cut(in.Task, "/")
	if err != nil {
		if apperr.Is(err, apperr.NotFound) {
			return stop(UNVERIFIABLE, ClassNoWorktree, "%s", apperr.Message(err))
		}
		return nil, nil, err
	}
	s.ch, s.head = ch, ch.Head
	s.v.Commit = ch.Head.String()
	if ch.Head == gitstore.ZeroHash {
		return stop(UNVERIFIABLE, ClassNoWorktree, "the worktree of task %s has no commit", in.Task)
	}
	if in.Commit != "" && !strings.HasPrefix(ch.Head.String(), strings.ToLower(in.Commit)) {
		return stop(UNVERIFIABLE, ClassNotHead, "commit %s was asked for, but the worktree's HEAD is %s: a gate judges the worktree's HEAD", in.Commit, ch.Head.String()[:12])
	}
	cm, err := d.Git.ReadCommit(ch.Head)
	if err != nil {
		return nil, nil, err
	}
	s.tree = cm.Tree
	s.v.Tree = cm.Tree.String()
	sp, err := d.Plan(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, err
		}
		return stop(UNVERIFIABLE, ClassNoPlan, "the sprint's plan could not be read: %s", apperr.Message(err))
	}
	s.sprint, s.st = sp, sp.Standards
	wave, ok := placeOf(sp, in.Task)
	if !ok {
		return stop(UNVERIFIABLE, ClassNotInPlan, "task %s is not in sprint %d's plan (its stories' tasks.md), so it is not judged", in.Task, sp.Number)
	}
	s.v.Sprint, s.v.Wave = sp.Number, wave
	s.passRed = passOnRed(sp, in.Task)
	var dirty []string
	for _, x := range ch.List {
		if x.Uncommitted {
			dirty = append(dirty, x.Path)
		}
	}
	if len(dirty) > 0 {
		// No commit was judged: the verdict names none, so no note lands
		// on the commit the worktree happens to stand on.
		v := s.v
		v.Result = FAIL
		v.Commit, v.Tree = "", ""
		v.Reasons = []Reason{{Class: ClassUncommitted, Paths: dirty,
			Detail: "the worktree (HEAD " + ch.Head.String()[:12] + ") holds uncommitted changes; a gate judges commits only: commit first, then ask again"}}
		return s, &v, nil
	}
	return s, nil, nil
}

// open gathers what every task gate that runs tests needs: openTask's
// facts, at least one declared test and the plan's runner for them.
func (d *Deps) open(ctx context.Context, gate Name, in Input) (*taskState, *Verdict, error) {
	s, v, err := d.openTask(ctx, gate, in)
	if v != nil || err != nil {
		return s, v, err
	}
	stop := func(r Result, class, format string, args ...any) (*taskState, *Verdict, error) {
		v := s.v
		v.Result = r
		v.Reasons = []Reason{{Class: class, Detail: fmt.Sprintf(format, args...)}}
		return s, &v, nil
	}
	ct := s.ct
	if len(ct.Tests) == 0 {
		return stop(FAIL, ClassNoTests, "task %s declares no tests: there is nothing to judge it by", in.Task)
	}
	if s.runner, err = RunnerFor(s.st, ct.Tests); err != nil {
		return stop(UNVERIFIABLE, ClassNoRunner, "%s", apperr.Message(err))
	}
	return s, nil, nil
}

// Place finds task in the sprint's plan (placeOf): its wave, and whether
// the plan lists it.
func Place(sp *plan.Sprint, task string) (wave int, ok bool) { return placeOf(sp, task) }

// placeOf finds task in the sprint's plan: a task of its story's
// tasks.md (S1-01/T2), or a story without tasks named alone; its wave
// (waveOf), and whether the plan holds it at all.
func placeOf(sp *plan.Sprint, task string) (wave int, ok bool) {
	story, tk, hasTask := strings.Cut(task, "/")
	for _, sd := range sp.StoryDirs {
		if sd.Story != story {
			continue
		}
		if sd.Tasks == nil || len(sd.Tasks.Tasks) == 0 {
			ok = ok || !hasTask
			continue
		}
		for _, t := range sd.Tasks.Tasks {
			if hasTask && t.ID == tk {
				ok = true
			}
		}
	}
	if !ok {
		return 0, false
	}
	return waveOf(sp, task), true
}

// waveOf is the wave of the sprint's plan that holds the task's story (and
// task, when the wave names tasks); 0 when none does.
func waveOf(sp *plan.Sprint, task string) int {
	if sp.Plan == nil {
		return 0
	}
	story, tk, _ := strings.Cut(task, "/")
	num := 0
	fmt.Sscanf(strings.TrimPrefix(tk, "T"), "%d", &num)
	for _, w := range sp.Plan.Waves {
		for _, e := range w.Entries {
			if e.Story != story {
				continue
			}
			if len(e.Tasks) == 0 {
				return w.Number
			}
			for _, n := range e.Tasks {
				if n == num {
					return w.Number
				}
			}
		}
	}
	return 0
}

// passOnRed reads the pass-on-red flags of the declared tests from the
// story's plan.md.
func passOnRed(sp *plan.Sprint, task string) map[string]bool {
	story, _, _ := strings.Cut(task, "/")
	out := map[string]bool{}
	for _, sd := range sp.StoryDirs {
		if sd.Story != story || sd.TestPlan == nil {
			continue
		}
		for _, sec := range sd.TestPlan.Sections {
			for _, t := range sec.Tests {
				if t.PassOnRed {
					out[t.ID] = true
				}
			}
		}
		for _, t := range sd.TestPlan.Stray {
			if t.PassOnRed {
				out[t.ID] = true
			}
		}
	}
	return out
}

// run runs the task's regression set at HEAD in its worktree: the
// declared tests and every other test of their packages or files. A run
// that cannot be judged ends the gate with its verdict.
func (s *taskState) run(ctx context.Context) (*testrun.Report, *Verdict, error) {
	return s.runIn(ctx, s.ct.Path, s.ct.Tests, "the run at "+s.head.String()[:12])
}

func (s *taskState) runIn(ctx context.Context, dir string, tests []string, what string) (*testrun.Report, *Verdict, error) {
	res, err := RunTask(ctx, s.st, dir, tests, RunOptions{Wide: true, Timeout: s.timeout})
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	stop := func(r Result, class, detail string) (*testrun.Report, *Verdict, error) {
		v := s.v
		v.Result = r
		v.Reasons = []Reason{{Class: class, Detail: detail}}
		return nil, &v, nil
	}
	switch {
	case res != nil && res.Report != nil && res.Report.Verdict == testrun.VerdictUnverifiable:
		return stop(UNVERIFIABLE, ClassUnknownFormat, what+" could not be read: "+textOr(res.Report.Reason, apperr.Message(err)))
	case apperr.Is(err, apperr.Schema), apperr.Is(err, NoRunner):
		return stop(UNVERIFIABLE, ClassNoRunner, apperr.Message(err))
	case err != nil:
		return stop(UNVERIFIABLE, ClassRunnerError, what+" did not run: "+apperr.Message(err))
	case res == nil || res.Report == nil:
		return stop(UNVERIFIABLE, ClassUnknownFormat, what+" left no report")
	}
	return res.Report, nil, nil
}

func textOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// outcomes fills the verdict's tests from the report, in declared order.
func (s *taskState) outcomes(rep *testrun.Report) []testrun.Result {
	out := make([]testrun.Result, 0, len(s.ct.Tests))
	s.v.Tests = s.v.Tests[:0]
	for _, id := range s.ct.Tests {
		r, ok := rep.Result(id)
		if !ok {
			r = testrun.Result{ID: id, Outcome: testrun.NotRun, Reason: "the runner's report does not name it"}
		}
		out = append(out, r)
		s.v.Tests = append(s.v.Tests, TestOutcome{ID: id, Outcome: string(r.Outcome), Detail: r.Reason})
	}
	return out
}

// record keeps the judged run on the task's ref, under the verdict's
// attempt, keyed by the commit.
func (s *taskState) record(ctx context.Context, label string, rep *testrun.Report) error {
	_, err := s.d.Tasks.PutRun(ctx, s.ct.Task, s.v.Attempt, s.head, label, rep)
	return err
}

// finish sets the verdict's result from its reasons: PASS without any,
// FAIL when one is a fact that fails the gate, UNVERIFIABLE when every
// reason is one that kept the gate from judging.
func (s *taskState) finish(reasons []Reason) Verdict {
	v := s.v
	v.Reasons = reasons
	if v.Reasons == nil {
		v.Reasons = []Reason{}
	}
	v.Result = PASS
	for _, r := range reasons {
		if r.Severity == SevInfo || r.Severity == SevMedium {
			continue // a note on the verdict, not a failure
		}
		switch r.Class {
		case ClassUnknownFormat, ClassNoRunner, ClassRunnerError, ClassNoLog, ClassNoTestGlobs, ClassPinUnverifiable:
			if v.Result == PASS {
				v.Result = UNVERIFIABLE
			}
		default:
			v.Result = FAIL
		}
	}
	return v
}

// BaseLabel labels the run recorded at a task's base commit (attempt 0).
const BaseLabel = "base"

// baseRun returns the task's base run: the regression set run once at the
// base commit in a detached temporary worktree, recorded on the task's
// ref (attempt 0, label "base") and reused by every later gate of the
// task. Callers hold the task's gate lock, so it is made once.
func (s *taskState) baseRun(ctx context.Context) (*testrun.Report, *Verdict, error) {
	base := s.ct.BaseHash()
	if r, ok, err := s.d.Tasks.GetRun(s.ct.Task, 0, base); err != nil {
		return nil, nil, err
	} else if ok && r.Label == BaseLabel && r.Report != nil {
		return r.Report, nil, nil
	}
	bc, err := s.d.Git.ReadCommit(base)
	if err != nil {
		return nil, nil, err
	}
	// Only the declared tests whose package (Go) or file exists at the
	// base run there: a runner asked for a missing file fails the whole
	// session, and a new file has no test to regress.
	var tests []string
	for _, id := range s.ct.Tests {
		f, _ := SplitTestID(id)
		p := f
		if s.runner.Format == string(testrun.GoJSON) {
			p = path.Dir(f)
		}
		if p == "." || p == "" {
			tests = append(tests, id)
			continue
		}
		if _, found, err := s.d.Git.Lookup(bc.Tree, strings.Split(p, "/")); err != nil {
			return nil, nil, err
		} else if found {
			tests = append(tests, id)
		}
	}
	rep := &testrun.Report{Format: testrun.Format(s.runner.Format), Verdict: testrun.VerdictNoTests,
		Counts: map[testrun.Outcome]int{}, Tests: []testrun.Result{}}
	if len(tests) > 0 {
		tmp, err := osproc.TempDir("base")
		if err != nil {
			return nil, nil, apperr.Wrap(apperr.Write, err, "cannot create a temporary directory")
		}
		dir := filepath.Join(tmp, "base")
		defer func() {
			_ = s.d.Git.DiscardWorktree(context.WithoutCancel(ctx), dir)
			os.RemoveAll(tmp)
		}()
		if err := s.d.Git.AddWorktree(ctx, dir, "", base); err != nil {
			return nil, nil, err
		}
		r, v, err := s.runIn(ctx, dir, tests, "the base run at "+base.String()[:12])
		if v != nil || err != nil {
			return nil, v, err
		}
		rep = r
	}
	if _, err := s.d.Tasks.PutRun(ctx, s.ct.Task, 0, base, BaseLabel, rep); err != nil {
		return nil, nil, err
	}
	return rep, nil, nil
}

// regressions names the tests that passed at the base and do not pass
// now, leaving out the declared tests (and their subtests), which each
// gate judges by its own rule. A test already failing at the base is not
// a regression.
func regressions(base, now *testrun.Report, declared []string) []string {
	skip := map[string]bool{}
	var prefixes []string
	for _, id := range declared {
		skip[id] = true
		prefixes = append(prefixes, id+"/")
	}
	for _, rep := range []*testrun.Report{base, now} {
		for _, t := range rep.Tests {
			if t.Declared && t.RunnerID != "" {
				skip[t.RunnerID] = true
				prefixes = append(prefixes, t.RunnerID+"/")
			}
		}
	}
	cur := map[string]testrun.Outcome{}
	for _, t := range now.Tests {
		cur[t.ID] = t.Outcome
	}
	var out []string
	for _, t := range base.Tests {
		if t.Outcome != testrun.Pass || skip[t.ID] || hasPrefix(t.ID, prefixes) {
			continue
		}
		if o, ok := cur[t.ID]; !ok {
			out = append(out, t.ID+" (no longer runs)")
		} else if o != testrun.Pass {
			out = append(out, t.ID+" ("+string(o)+")")
		}
	}
	sort.Strings(out)
	return out
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// regressionReason compares the run with the base run; nil when nothing
// regressed.
func (s *taskState) regressionReason(ctx context.Context, now *testrun.Report) (*Reason, *Verdict, error) {
	base, v, err := s.baseRun(ctx)
	if v != nil || err != nil {
		return nil, v, err
	}
	reg := regressions(base, now, s.ct.Tests)
	if len(reg) == 0 {
		return nil, nil, nil
	}
	return &Reason{Class: ClassRegression, Paths: reg,
		Detail: fmt.Sprintf("%d test(s) that passed at the base %s do not pass now", len(reg), s.ct.Base[:12])}, nil, nil
}

// committedPaths lists what the task's commits changed against the base
// (both sides of a rename).
func (s *taskState) committedPaths() []string {
	var out []string
	for _, x := range s.ch.List {
		if !x.Committed {
			continue
		}
		if x.From != "" {
			out = append(out, x.From)
		}
		out = append(out, x.Path)
	}
	sort.Strings(out)
	return out
}

// testGlobs is the compiled test-file globs of the task's runner.
func (s *taskState) testGlobs() (*pathglob.Set, error) {
	if len(s.runner.TestGlobs) == 0 {
		return nil, nil
	}
	return pathglob.Compile(s.runner.TestGlobs)
}

// contains reports whether the file at p in tree holds marker.
func (s *taskState) contains(tree gitstore.Hash, p, marker string) (bool, error) {
	if marker == "" {
		return false, nil
	}
	e, ok, err := s.d.Git.Lookup(tree, strings.Split(p, "/"))
	if err != nil || !ok || e.IsDir() {
		return false, err
	}
	b, err := s.d.Git.ReadBlob(e.Hash)
	if err != nil {
		return false, err
	}
	return bytes.Contains(b, []byte(marker)), nil
}

// verifiedRed finds the commit of the task's newest RED PASS verdict.
func (s *taskState) verifiedRed(ctx context.Context) (gitstore.Hash, *Verdict, error) {
	stop := func(r Result, class, detail string) (gitstore.Hash, *Verdict, error) {
		v := s.v
		v.Result = r
		v.Reasons = []Reason{{Class: class, Detail: detail}}
		return gitstore.ZeroHash, &v, nil
	}
	if s.d.Log == nil {
		return stop(UNVERIFIABLE, ClassNoLog, "no execution log to find the verified RED commit in")
	}
	c, ok, err := s.d.Log.LatestPass(ctx, s.ct.Task, "red")
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	if !ok {
		return stop(FAIL, ClassNoRed, "task "+s.ct.Task+" has no RED PASS verdict: its tests were never verified red, so there is nothing to hold them to")
	}
	h, err := gitstore.ParseHash(c)
	if err != nil {
		return stop(UNVERIFIABLE, ClassNoRed, "the RED verdict names "+c+", which is not a commit")
	}
	return h, nil, nil
}

// testChanged compares, between the verified RED commit and HEAD, the blob
// of every file matching the test globs and of every file the RED commit
// changed against the base (except the shims it added, which the scaffold
// step replaces): any difference is a changed test.
func (s *taskState) testChanged(red gitstore.Hash) (*Reason, error) {
	rc, err := s.d.Git.ReadCommit(red)
	if err != nil {
		return nil, err
	}
	bc, err := s.d.Git.ReadCommit(s.ct.BaseHash())
	if err != nil {
		return nil, err
	}
	globs, err := s.testGlobs()
	if err != nil {
		return nil, err
	}
	shim := ShimMarker(s.st, s.runner)
	frozen := map[string]bool{}
	err = s.d.Git.DiffTrees(bc.Tree, rc.Tree, func(p string, _, n gitstore.TreeEntry) error {
		if n.Hash != gitstore.ZeroHash && !n.IsDir() && shim != "" {
			b, err := s.d.Git.ReadBlob(n.Hash)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(shim)) {
				return nil
			}
		}
		frozen[p] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	var changed []string
	err = s.d.Git.DiffTrees(rc.Tree, s.tree, func(p string, _, _ gitstore.TreeEntry) error {
		if frozen[p] || globs != nil && globs.Match(p) {
			changed = append(changed, p)
		}
		return nil
	})
	if err != nil || len(changed) == 0 {
		return nil, err
	}
	sort.Strings(changed)
	return &Reason{Class: ClassTestChanged, Paths: changed,
		Detail: fmt.Sprintf("%d test file(s) differ from the verified RED commit %s; the tests are frozen after RED", len(changed), red.String()[:12])}, nil
}
