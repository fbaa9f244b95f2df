package gates

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/symbols"
	"github.com/ideate/git-ideate/internal/testrun"
	"github.com/ideate/git-ideate/internal/worktree"
)

// The pinning check's reason classes.
const (
	// ClassUnpinned: a declared symbol whose body, replaced by a
	// zero-value return, fails none of the tests run against it.
	ClassUnpinned = "unpinned_symbol"
	// ClassPinUnverifiable: a declared symbol's mutant could not be
	// built, run or read, so whether a test pins it is unknown.
	ClassPinUnverifiable = "pin_unverifiable"
	// ClassPinCost: a note on what the pinning check cost (its mutants,
	// runs and time, and its ratio to the gate's own test run).
	ClassPinCost = "pin_cost"
	// ClassSprintTests: at the final gate, a declared test of the sprint
	// present at the task's HEAD does not pass.
	ClassSprintTests = "sprint_tests"
)

// pinSpec is one pinning check: the declared symbols of a commit, and the
// tests their mutants are run against.
type pinSpec struct {
	Git      *gitstore.Store
	Standard *plan.Standards
	Head     gitstore.Hash // the commit checked out in the scratch copy
	Tree     gitstore.Hash // its tree
	Symbols  []string      // as declared (`pkg.Name`, `pkg.Type.Method`)
	// BuildTimeout bounds the build of the Go fast path's test binaries.
	BuildTimeout time.Duration
	// Optional are more symbols, checked where they are defined and left
	// out where they are not (the scaffold's stubs, by qualified name).
	Optional []string
	Tests    []string // declared test ids
	// Worktree is the task's worktree: a node_modules at its top is
	// linked into the scratch copy (dependencies nobody commits).
	Worktree string
	// Scratch is where the scratch copy goes: a path of its own per task,
	// the same each time, so a compiled language's build cache serves the
	// packages no mutant touches.
	Scratch string
	Timeout time.Duration // per mutant run
	// Baseline runs the tests once with no mutant first; a test that does
	// not pass then is reported (pinResult.Failing) and is no evidence
	// for any mutant.
	Baseline bool
	// Parallel is how many mutant runs go at once; 0 is one per CPU.
	Parallel int
}

// pinOutcome is what the check found for one declared symbol.
type pinOutcome struct {
	Decl   string
	QName  string
	At     string // file:line of the definition
	Pinned bool
	By     string // a test that failed under the mutant
	// Unchecked says why the symbol could not be checked ("" when it was).
	Unchecked string
	Weaker    bool // read by the fallback reader: the check was weaker
	def       symbols.Symbol
}

// pinResult is the check's outcome per declared symbol, in declared order.
type pinResult struct {
	Symbols []pinOutcome
	Weaker  bool
	Runs    int // mutant runs made
	Mutants int // mutants made
	// Took is the check's time in all; Build the part spent building the
	// test binaries once (Go's `go test -c`; zero on the other paths);
	// Added what it added to the gate's time (GREEN prepares it during
	// its own run; zero when it ran alone).
	Took, Build, Added time.Duration
	Binary             bool // the mutants ran as compiled test binaries
	// Failing are the tests that did not pass with no mutant on (Baseline).
	Failing []string
}

// checkPinning replaces, in a scratch copy of the commit, the body of
// every declared callable with a zero-value return (one mutant per
// declared symbol, all in one schema copy, each switched on by
// MutantEnv) and runs the tests once per mutant: through RunTask, the
// runner path every task gate uses, or, for a plain `go test` runner, as
// the test binaries the schema built once (goPin). A mutant that makes one of the tests
// not pass is pinned; one under which every test still passes is not.
// A mutant that does not build, or whose run cannot be read, is neither:
// it is reported as unchecked. Declared names that are not callables
// (types, constants) have no body to replace and are left out; a name
// defined nowhere at the commit is unchecked. The scratch copy is removed
// whatever happens.
func checkPinning(ctx context.Context, p pinSpec) (*pinResult, error) {
	x := preparePins(ctx, p)
	defer x.close()
	return x.finish(ctx, p.Timeout)
}

// pinPrep is a pinning check made ready to run: its mutants found, the
// scratch copy written and, on the Go fast path, the test binaries built.
// It does not depend on the gate's own run, so GREEN makes it while that
// run goes on (startPins).
type pinPrep struct {
	p       pinSpec
	res     *pinResult
	err     error       // preparing failed: finish returns it
	mutants map[int]int // mutant id → index in res.Symbols
	gp      *goPin      // the Go fast path, nil off it
	undo    []func()    // the scratch copy and the binaries, removed by close
	took    time.Duration
}

// close removes what preparing made.
func (x *pinPrep) close() {
	for i := len(x.undo) - 1; i >= 0; i-- {
		x.undo[i]()
	}
	x.undo = nil
}

// preparePins does the part of checkPinning that needs no run: x.err
// holds what went wrong. The build of the Go test binaries is bounded by
// p.BuildTimeout.
func preparePins(ctx context.Context, p pinSpec) *pinPrep {
	t0 := time.Now()
	x := &pinPrep{p: p, res: &pinResult{}}
	res, err := x.prepare(ctx)
	x.took = time.Since(t0)
	if err != nil {
		x.err = err
	}
	if res != nil {
		x.res = res
	}
	return x
}

func (x *pinPrep) prepare(ctx context.Context) (*pinResult, error) {
	p, res := x.p, x.res
	if len(p.Symbols)+len(p.Optional) == 0 {
		return res, nil
	}
	src, err := newTreeSource(p.Git, p.Tree)
	if err != nil {
		return nil, err
	}
	idx, err := symbols.Build(ctx, src)
	if err != nil {
		return nil, err
	}
	byFile := map[string][]bodyTarget{}
	mutants := map[int]int{} // mutant id → index in res.Symbols
	x.mutants = mutants
	seen := map[string]bool{}
	nextID := 0
	for i, d := range append(append([]string(nil), p.Symbols...), p.Optional...) {
		optional := i >= len(p.Symbols)
		o := pinOutcome{Decl: d, QName: d}
		var defs []symbols.Symbol
		for _, s := range idx.Find(d) {
			if !s.Test {
				defs = append(defs, s)
			}
		}
		if len(defs) == 0 && optional {
			continue
		}
		if len(defs) == 0 {
			o.Unchecked = "it is defined nowhere at " + p.Head.String()[:12]
			res.Symbols = append(res.Symbols, o)
			continue
		}
		callable := false
		for _, s := range defs {
			if s.Kind.Callable() && s.HasBody() {
				callable = true
			}
		}
		if !callable {
			continue // a type or a value: no body to replace
		}
		if seen[defs[0].Key()] {
			continue // declared twice, or declared and scaffolded
		}
		seen[defs[0].Key()] = true
		o.def = defs[0]
		o.QName, o.At = defs[0].QName(), fmt.Sprintf("%s:%d", defs[0].File, defs[0].Line)
		// One mutant per zero value the symbol's language leaves open
		// (an unannotated Python function may mean None or 0): pinned
		// means every one of them fails a test.
		for _, z := range zeroValues(defs[0]) {
			nextID++
			for _, s := range defs {
				if !s.Kind.Callable() || !s.HasBody() {
					continue
				}
				o.Weaker = o.Weaker || s.Weaker
				byFile[s.File] = append(byFile[s.File], bodyTarget{Sym: s, ID: nextID, Zero: z})
			}
			mutants[nextID] = len(res.Symbols)
		}
		res.Weaker = res.Weaker || o.Weaker
		res.Symbols = append(res.Symbols, o)
	}
	if len(mutants) == 0 {
		return res, nil
	}
	rewritten := map[string][]byte{}
	for f, ts := range byFile {
		b, err := src.Read(f)
		if err != nil {
			return nil, err
		}
		out, skipped, err := mutantSchema(f, b, ts)
		if err != nil {
			for _, t := range ts {
				if i, ok := mutants[t.ID]; ok {
					res.Symbols[i].Unchecked = "its file could not be rewritten: " + errText(err)
				}
				delete(mutants, t.ID)
			}
			continue
		}
		for id, why := range skipped {
			if i, ok := mutants[id]; ok {
				res.Symbols[i].Unchecked = why
				delete(mutants, id)
			}
		}
		rewritten[f] = out
	}
	if len(mutants) == 0 {
		return res, nil
	}
	res.Mutants = len(mutants)

	// The scratch copy: a detached worktree at the commit, always removed.
	if err := os.MkdirAll(filepath.Dir(p.Scratch), 0o777); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot create %s", filepath.Dir(p.Scratch))
	}
	cleanup := func() { _ = p.Git.DiscardWorktree(context.WithoutCancel(ctx), p.Scratch) }
	cleanup() // what a killed check left
	x.undo = append(x.undo, cleanup)
	if err := p.Git.AddWorktree(ctx, p.Scratch, "", p.Head); err != nil {
		return nil, err
	}
	for f, b := range rewritten {
		if err := os.WriteFile(filepath.Join(p.Scratch, filepath.FromSlash(f)), b, 0o644); err != nil {
			return nil, apperr.Wrap(apperr.Write, err, "cannot write the mutant schema of %s", f)
		}
	}
	if p.Worktree != "" {
		nm := filepath.Join(p.Worktree, "node_modules")
		if fi, err := os.Stat(nm); err == nil && fi.IsDir() {
			if err := os.Symlink(nm, filepath.Join(p.Scratch, "node_modules")); err != nil {
				return nil, apperr.Wrap(apperr.Write, err, "cannot link node_modules into the scratch copy")
			}
		}
	}
	// A Go runner's plain `go test` builds the schema once per package
	// and runs each mutant as its test binaries.
	if gp, fast := newGoPin(p.Standard, p.Tests); fast {
		bin, err := os.MkdirTemp("", "ideate-pin-")
		if err != nil {
			return nil, apperr.Wrap(apperr.Write, err, "cannot create a temporary directory")
		}
		x.undo = append(x.undo, func() { os.RemoveAll(bin) })
		tb := time.Now()
		if err := gp.compile(ctx, p.Scratch, bin, p.BuildTimeout); err != nil {
			return nil, err
		}
		res.Build, res.Binary, x.gp = time.Since(tb), true, gp
	}
	return res, nil
}

// finish runs the prepared mutants, each run bounded by timeout, and
// returns the check's result.
func (x *pinPrep) finish(ctx context.Context, timeout time.Duration) (*pinResult, error) {
	t0 := time.Now()
	p, res, mutants, gp := x.p, x.res, x.mutants, x.gp
	p.Timeout = timeout
	defer func() { res.Took = x.took + time.Since(t0) }()
	if x.err != nil {
		return nil, x.err
	}
	if len(mutants) == 0 {
		return res, nil
	}
	if p.Baseline {
		run, err := RunTask(ctx, p.Standard, p.Scratch, p.Tests, RunOptions{Timeout: p.Timeout})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if run == nil || run.Report == nil || run.Report.Verdict == testrun.VerdictUnverifiable {
			why := "no report"
			if err != nil {
				why = apperr.Message(err)
			} else if run != nil && run.Report != nil {
				why = run.Report.Reason
			}
			for id, i := range mutants {
				res.Symbols[i].Unchecked = "the run with no mutant could not be read: " + why
				delete(mutants, id)
			}
			return res, nil
		}
		var passing []string
		for _, t := range p.Tests {
			if r, ok := run.Report.Result(t); ok && r.Outcome == testrun.Pass {
				passing = append(passing, t)
			} else {
				res.Failing = append(res.Failing, t)
			}
		}
		p.Tests = passing
		if len(passing) == 0 {
			for id, i := range mutants {
				res.Symbols[i].Unchecked = "no test passes with no mutant"
				delete(mutants, id)
			}
			return res, nil
		}
		if gp != nil {
			gp = gp.only(passing)
		}
	}
	fast := gp != nil
	ids := make([]int, 0, len(mutants))
	for id := range mutants {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	par := p.Parallel
	if par <= 0 {
		par = pinParallel
	}
	if par <= 0 {
		par = runtime.NumCPU()
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		sem  = make(chan struct{}, par)
		ferr error
	)
	type outcome struct{ by, unchecked string }
	got := map[int]outcome{}
	for _, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func(id int) {
			defer func() { <-sem; wg.Done() }()
			var by, unchecked string
			var err error
			if fast {
				by, unchecked, err = gp.run(ctx, p.Scratch, id, p.Timeout)
			} else {
				by, unchecked, err = runMutant(ctx, p, id)
			}
			mu.Lock()
			defer mu.Unlock()
			res.Runs++
			if err != nil {
				if ferr == nil {
					ferr = err
				}
				return
			}
			got[id] = outcome{by, unchecked}
		}(id)
	}
	wg.Wait()
	if ferr != nil {
		return nil, ferr
	}
	// A symbol is pinned when each of its mutants failed a test.
	pinned := map[int]bool{}
	for _, id := range ids {
		i := mutants[id]
		o := &res.Symbols[i]
		r := got[id]
		switch {
		case r.unchecked != "":
			o.Unchecked = r.unchecked
		case r.by == "":
			pinned[i] = false
		default:
			if _, ok := pinned[i]; !ok {
				pinned[i] = true
				o.By = r.by
			}
		}
	}
	for i, ok := range pinned {
		res.Symbols[i].Pinned = ok && res.Symbols[i].Unchecked == ""
	}
	return res, nil
}

// pinParallel, when positive, replaces one mutant run per CPU (the
// benchmark compares the two).
var pinParallel int

// runMutant runs the tests with mutant id on. It returns the test that
// failed under it ("" for none), or why the run says nothing.
func runMutant(ctx context.Context, p pinSpec, id int) (by, unchecked string, err error) {
	run, err := RunTask(ctx, p.Standard, p.Scratch, p.Tests, RunOptions{Timeout: p.Timeout, Env: []string{MutantEnv + "=" + strconv.Itoa(id)}})
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	if run == nil || run.Report == nil {
		msg := "no report"
		if err != nil {
			msg = apperr.Message(err)
		}
		return "", "its mutant's run did not run: " + msg, nil
	}
	if run.Report.Verdict == testrun.VerdictUnverifiable {
		return "", "its mutant's run could not be read: " + run.Report.Reason, nil
	}
	var broken []string
	for _, t := range p.Tests {
		r, ok := run.Report.Result(t)
		switch {
		case !ok:
			broken = append(broken, t+" (not in the report)")
		case r.Outcome == testrun.Pass:
		case r.Outcome == testrun.FailAssert, r.Outcome == testrun.FailError, r.Outcome == testrun.FailStub, r.Outcome == testrun.Timeout:
			return t, "", nil
		default:
			broken = append(broken, t+" ("+string(r.Outcome)+")")
		}
	}
	if len(broken) > 0 {
		// A mutant that does not build, or a run that stopped before the
		// tests, is no evidence either way.
		return "", "its mutant's run did not reach the tests: " + strings.Join(broken, ", "), nil
	}
	return "", "", nil
}

// scratchPath is the task's scratch copy under the clone's state
// directory: one path per task and purpose, the same on every check.
func scratchPath(g *gitstore.Store, task, purpose string) string {
	return filepath.Join(g.Repo().CommonDir, "ideate", "scratch", purpose+"-"+strings.ReplaceAll(task, "/", "+"))
}

// planTask is the plan's task for a reference (`S1-01/T2`), nil when the
// plan has none.
func planTask(sp *plan.Sprint, task string) *plan.Task {
	if sp == nil {
		return nil
	}
	story, tk, _ := strings.Cut(task, "/")
	num, err := strconv.Atoi(strings.TrimPrefix(tk, "T"))
	if err != nil {
		return nil
	}
	for _, sd := range sp.StoryDirs {
		if sd.Story != story || sd.Tasks == nil {
			continue
		}
		for _, t := range sd.Tasks.Tasks {
			if t.Num == num {
				return t
			}
		}
	}
	return nil
}

// laterNamers lists the tasks of the plan that run after task (they wait
// for it, directly or through others) and name the symbol in their
// Symbols: or Uses: line: the tasks whose tests can still pin a symbol
// whose behaviour only shows once they are done (a Len that only a later
// Push makes non-zero).
func laterNamers(sp *plan.Sprint, task string, def symbols.Symbol) []string {
	units := plan.Schedule(sp)
	after := map[string][]string{}
	for _, u := range units {
		after[u.Ref] = u.After
	}
	waits := func(ref string) bool {
		seen := map[string]bool{}
		stack := append([]string(nil), after[ref]...)
		for len(stack) > 0 {
			r := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if r == task {
				return true
			}
			if !seen[r] {
				seen[r] = true
				stack = append(stack, after[r]...)
			}
		}
		return false
	}
	var out []string
	for _, u := range units {
		if u.Task == nil || u.Ref == task || !waits(u.Ref) {
			continue
		}
		for _, d := range append(append([]string(nil), u.Task.Symbols...), u.Task.Uses...) {
			if def.Matches(d) {
				out = append(out, u.Ref)
				break
			}
		}
	}
	return out
}

// scaffolded lists the callables the task's verified scaffold commit
// left with a stub-marker body (its newest scaffold PASS; none without
// one): the symbols the scaffold actions made, declared or not.
func (s *taskState) scaffolded(ctx context.Context, red gitstore.Hash) ([]string, error) {
	if s.d.Log == nil {
		return nil, nil
	}
	c, ok, err := s.d.Log.LatestPass(ctx, s.ct.Task, "scaffold")
	if err != nil || !ok {
		return nil, err
	}
	sc, err := commitTree(s.d.Git, c)
	if err != nil {
		return nil, nil // a verdict naming no commit here names no stub
	}
	rt, err := commitTree(s.d.Git, red.String())
	if err != nil {
		return nil, err
	}
	markers := StubMarkers(s.st, s.runner)
	if len(markers) == 0 {
		markers = []string{"SUB-AGENT-TODO"}
	}
	var out []string
	err = s.d.Git.DiffTrees(rt, sc, func(p string, _, n gitstore.TreeEntry) error {
		if n.Hash == gitstore.ZeroHash || n.IsDir() || symbols.LangOf(p) == "" || symbols.IsTestFile(p) {
			return nil
		}
		b, err := s.d.Git.ReadBlob(n.Hash)
		if err != nil {
			return err
		}
		f, err := symbols.Parse(ctx, p, b)
		if err != nil {
			return nil
		}
		for _, d := range f.Defs {
			if !d.Kind.Callable() || !d.HasBody() || d.BodyEnd > len(b) {
				continue
			}
			for _, m := range markers {
				if strings.Contains(string(b[d.BodyStart:d.BodyEnd]), m) {
					out = append(out, d.QName())
					break
				}
			}
		}
		return nil
	})
	return out, err
}

// pinStart is GREEN's pinning check being prepared (its mutants, the
// scratch copy, the Go test binaries) while the gate's own run goes on:
// the preparation needs nothing of that run, and building the binaries
// costs about as much as the run itself.
type pinStart struct {
	cancel context.CancelFunc
	done   chan struct{}
	x      *pinPrep // nil when the task names no symbol, or err
	err    error
}

// startPins prepares GREEN's pinning check in the background: the task's
// declared symbols and the ones its scaffold made, against its declared
// tests. stop must follow.
func (s *taskState) startPins(ctx context.Context, red gitstore.Hash) *pinStart {
	cctx, cancel := context.WithCancel(ctx)
	ps := &pinStart{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ps.done)
		decl := declaredSymbols(s.sprint, s.ct.Task)
		sc, err := s.scaffolded(cctx, red)
		if err != nil || len(decl)+len(sc) == 0 {
			ps.err = err
			return
		}
		ps.x = preparePins(cctx, pinSpec{Git: s.d.Git, Standard: s.st, Head: s.head, Tree: s.tree, Symbols: decl, Optional: sc,
			Tests: s.ct.Tests, Worktree: s.ct.Path, Scratch: scratchPath(s.d.Git, s.ct.Task, "pin"), BuildTimeout: s.timeout})
	}()
	return ps
}

// stop ends the preparation, whatever it was at, and removes what it
// made.
func (ps *pinStart) stop() {
	ps.cancel()
	<-ps.done
	if ps.x != nil {
		ps.x.close()
	}
}

// pinReasons finishes GREEN's pinning check once the gate's own run
// passed (ran long). An unpinned symbol a later task names is a note
// carried forward (its tests and the final gate judge it); any other
// unpinned symbol FAILs as a test defect, which sends the task back to
// RED.
//
// The note on the check's cost comes back apart, for the verdict's end.
func (s *taskState) pinReasons(ctx context.Context, ps *pinStart, ran time.Duration) ([]Reason, *Reason, error) {
	t0 := time.Now()
	select {
	case <-ps.done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if ps.err != nil || ps.x == nil {
		return nil, nil, ps.err
	}
	res, err := ps.x.finish(ctx, mutantTimeout(ran, s.timeout))
	if err != nil {
		return nil, nil, err
	}
	res.Added = time.Since(t0)
	var out []Reason
	for _, o := range res.Symbols {
		switch {
		case o.Unchecked != "":
			out = append(out, Reason{Class: ClassPinUnverifiable, Paths: pathsOf(o.At),
				Detail: fmt.Sprintf("whether a declared test pins %s is unknown: %s", o.QName, o.Unchecked)})
		case o.Pinned:
		default:
			def := o.def
			if later := laterNamers(s.sprint, s.ct.Task, def); len(later) > 0 {
				out = append(out, Reason{Class: ClassUnpinned, Severity: SevInfo, Paths: pathsOf(o.At),
					Detail: fmt.Sprintf("%s, its body replaced by a zero-value return, fails none of the task's declared tests; carried forward: %s name(s) it too, and their tests and the final gate must pin it",
						o.QName, strings.Join(later, ", "))})
				continue
			}
			out = append(out, Reason{Class: ClassUnpinned, Paths: pathsOf(o.At),
				Detail: fmt.Sprintf("%s, its body replaced by a zero-value return, fails none of the task's declared tests, and no later task names it: the tests do not pin it (a test defect: back to RED, to add an assertion a zero value fails)", o.QName)})
		}
	}
	if res.Weaker {
		out = append(out, Reason{Class: ClassWeakerCheck, Severity: SevInfo,
			Detail: "weaker check: the tree-sitter helper (" + symbols.HelperName + ") is absent, so the bodies outside Go were found by the fallback reader"})
	}
	return out, pinCost(res, ran), nil
}

// pinCost is the note on what the check cost, nil when it ran no mutant.
// ran is the gate's own test run, the yardstick; zero leaves the ratio out.
func pinCost(res *pinResult, ran time.Duration) *Reason {
	if res.Mutants == 0 {
		return nil
	}
	how := fmt.Sprintf("%d run(s) of the runner's command", res.Runs)
	if res.Binary {
		how = fmt.Sprintf("the test binaries built once in %s, then %d run(s) of them", res.Build.Round(time.Millisecond), res.Runs)
	}
	d := fmt.Sprintf("pinning check: %d mutant(s) in %s (%s)", res.Mutants, res.Took.Round(time.Millisecond), how)
	if res.Added > 0 {
		d += fmt.Sprintf("; prepared during the gate's own test run, it added %s to the gate", res.Added.Round(time.Millisecond))
	}
	if ran > 0 {
		added := res.Took
		if res.Added > 0 {
			added = res.Added
		}
		d += fmt.Sprintf(", %.2f× that run (%s)", float64(added)/float64(ran), ran.Round(time.Millisecond))
	}
	return &Reason{Class: ClassPinCost, Severity: SevInfo, Detail: d}
}

// mutantTimeout bounds one mutant run: five times the gate's own run
// (a mutant that loops is then a TIMEOUT, which pins it), at least 30 s,
// at most the gate's bound.
func mutantTimeout(ran, bound time.Duration) time.Duration {
	t := 5 * ran
	if t < 30*time.Second {
		t = 30 * time.Second
	}
	if bound > 0 && t > bound {
		t = bound
	}
	return t
}

func pathsOf(at string) []string {
	if at == "" {
		return nil
	}
	return []string{at}
}

// sprintTests lists the declared tests of every story of the sprint
// (plan.md), and the task's own, deduplicated in that order.
func sprintTests(sp *plan.Sprint, own []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, id := range own {
		add(id)
	}
	for _, sd := range sp.StoryDirs {
		if sd.TestPlan == nil {
			continue
		}
		for _, sec := range sd.TestPlan.Sections {
			for _, t := range sec.Tests {
				add(t.ID)
			}
		}
		for _, t := range sd.TestPlan.Stray {
			add(t.ID)
		}
	}
	return out
}

// declarers lists the tasks of the plan whose Symbols: line names def.
func declarers(sp *plan.Sprint, def symbols.Symbol, fallback string) []string {
	var out []string
	for _, u := range plan.Schedule(sp) {
		if u.Task == nil {
			continue
		}
		for _, d := range u.Task.Symbols {
			if def.Matches(d) {
				out = append(out, u.Ref)
				break
			}
		}
	}
	if len(out) == 0 {
		out = []string{fallback}
	}
	return out
}

// finalPins is the final gate's pinning check for a task: every symbol
// the task names (Symbols: and Uses:) that no later task names (those are
// judged at that task's final, a note here), against every declared test
// of the sprint present at the task's HEAD and run by the task's runner.
// It returns the reasons and whether each fails the gate.
func (d FinalDeps) finalPins(ctx context.Context, sp *plan.Sprint, task string, ct *worktree.Contract, head gitstore.Hash, timeout time.Duration) ([]Reason, error) {
	t := planTask(sp, task)
	if t == nil || len(t.Symbols)+len(t.Uses) == 0 {
		return nil, nil
	}
	c, err := d.Git.ReadCommit(head)
	if err != nil {
		return nil, err
	}
	runner, err := RunnerFor(sp.Standards, ct.Tests)
	if err != nil {
		return []Reason{{Class: ClassPinUnverifiable, Detail: "the task's symbols cannot be checked for pinning: " + apperr.Message(err)}}, nil
	}
	var tests []string
	for _, id := range sprintTests(sp, ct.Tests) {
		f, _ := SplitTestID(id)
		if f == "" || !runnerCovers(runner, f) {
			continue
		}
		if _, ok, err := d.Git.Lookup(c.Tree, strings.Split(f, "/")); err != nil {
			return nil, err
		} else if ok {
			tests = append(tests, id)
		}
	}
	if len(tests) == 0 {
		return []Reason{{Class: ClassPinUnverifiable, Detail: "no declared test of the sprint is present at " + head.String()[:12] + " to pin the task's symbols"}}, nil
	}
	names := append(append([]string(nil), t.Symbols...), t.Uses...)
	res, err := checkPinning(ctx, pinSpec{Git: d.Git, Standard: sp.Standards, Head: head, Tree: c.Tree, Symbols: names, Tests: tests,
		Worktree: ct.Path, Scratch: scratchPath(d.Git, task, "final"), Timeout: timeout, BuildTimeout: timeout, Baseline: true})
	if err != nil {
		return nil, err
	}
	var out []Reason
	if len(res.Failing) > 0 {
		out = append(out, Reason{Class: ClassSprintTests, Paths: res.Failing,
			Detail: fmt.Sprintf("%d declared test(s) of the sprint present at %s do not pass", len(res.Failing), head.String()[:12])})
	}
	for _, o := range res.Symbols {
		switch {
		case o.Unchecked != "":
			out = append(out, Reason{Class: ClassPinUnverifiable, Paths: pathsOf(o.At),
				Detail: fmt.Sprintf("whether the sprint's tests pin %s is unknown: %s", o.QName, o.Unchecked)})
		case o.Pinned:
		default:
			if later := laterNamers(sp, task, o.def); len(later) > 0 {
				out = append(out, Reason{Class: ClassUnpinned, Severity: SevInfo, Paths: pathsOf(o.At),
					Detail: fmt.Sprintf("%s fails none of the sprint's tests present here; %s name(s) it too, and its final gate judges it", o.QName, strings.Join(later, ", "))})
				continue
			}
			out = append(out, Reason{Class: ClassUnpinned, Paths: pathsOf(o.At),
				Detail: fmt.Sprintf("%s, its body replaced by a zero-value return, fails none of the sprint's %d declared test(s) present at %s; declared by %s",
					o.QName, len(tests), head.String()[:12], strings.Join(declarers(sp, o.def, task), ", "))})
		}
	}
	if c := pinCost(res, 0); c != nil {
		out = append(out, *c)
	}
	if res.Weaker {
		out = append(out, Reason{Class: ClassWeakerCheck, Severity: SevInfo,
			Detail: "weaker check: the tree-sitter helper (" + symbols.HelperName + ") is absent, so the bodies outside Go were found by the fallback reader"})
	}
	return out, nil
}
