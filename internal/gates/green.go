package gates

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/testrun"
	"github.com/ideate/git-ideate/internal/worktree"
)

// Green is the GREEN gate. At the worktree's HEAD (no uncommitted change):
//   - every declared test PASSes (any other outcome FAILs with its class);
//   - no test that passed at the task's base fails now (regression);
//   - the test files are byte-identical to the verified RED commit: the
//     blob of every file matching the test globs and of every file the
//     RED commit changed (its shims aside) is the same at HEAD
//     (test_changed; no RED PASS verdict is no_red);
//   - the diff base→HEAD stays inside the contract's scope (out_of_scope;
//     a contract without a scope is no_scope);
//   - no line added base→HEAD in a source file of a declared runner holds
//     a suppression pattern of standards.md or of the runner; where
//     neither declares any, the language's usual skip and lint-disable
//     markers, and the reason says so (suppression);
//   - every production symbol the task declares (tasks.md Symbols:, and
//     the stubs its verified scaffold commit made) is pinned: with its
//     body replaced by a zero-value return, a declared test fails
//     (pin.go). An unpinned symbol FAILs (unpinned_symbol, a test defect
//     that goes back to RED) unless a later task of the plan names it,
//     when it is a note carried forward to that task and the final gate;
//     a mutant that could not be run is pin_unverifiable.
//
// The run is recorded on the task's ref (label "green").
func Green(d Deps) Gate {
	return Func(func(ctx context.Context, in Input) (Verdict, error) {
		s, stop, err := d.open(ctx, "green", in)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		red, stop, err := s.verifiedRed(ctx)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		// The pinning check gets ready while the tests run; only a
		// passing run makes use of it.
		ps := s.startPins(ctx, red)
		defer ps.stop()
		t0 := time.Now()
		rep, stop, err := s.run(ctx)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		ran := time.Since(t0)
		var reasons []Reason
		for _, r := range s.outcomes(rep) {
			if r.Outcome != testrun.Pass {
				reasons = append(reasons, outcomeReason(r, "GREEN needs every declared test to pass"))
			}
		}
		var cost *Reason
		if len(reasons) == 0 {
			// Only a passing run says anything about mutants.
			var pins []Reason
			pins, cost, err = s.pinReasons(ctx, ps, ran)
			if err != nil {
				return Verdict{}, err
			}
			reasons = append(reasons, pins...)
		}
		reg, stop, err := s.regressionReason(ctx, rep)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		if reg != nil {
			reasons = append(reasons, *reg)
		}
		tc, err := s.testChanged(red)
		if err != nil {
			return Verdict{}, err
		}
		if tc != nil {
			reasons = append(reasons, *tc)
		}
		sc, err := worktree.CheckScope(s.ct, s.ch, s.ct.Scope)
		if err != nil {
			return Verdict{}, err
		}
		switch {
		case !sc.Declared:
			reasons = append(reasons, Reason{Class: ClassNoScope, Detail: "task " + s.ct.Task + " declares no scope, so its diff cannot be judged inside one"})
		case len(sc.Outside) > 0:
			reasons = append(reasons, Reason{Class: ClassOutOfScope, Paths: sc.Outside,
				Detail: fmt.Sprintf("%d changed path(s) lie outside the task's scope (%s)", len(sc.Outside), strings.Join(sc.Scope, " "))})
		}
		sup, err := s.suppressions()
		if err != nil {
			return Verdict{}, err
		}
		if sup != nil {
			reasons = append(reasons, *sup)
		}
		if cost != nil {
			reasons = append(reasons, *cost)
		}
		if err := s.record(ctx, "green", rep); err != nil {
			return Verdict{}, err
		}
		return s.finish(reasons), nil
	})
}

// defaultSuppressions are the usual skip and lint-disable markers per
// language, used only where standards.md declares no suppression pattern.
func defaultSuppressions(lang string) []string {
	switch lang {
	case "go":
		return []string{"t.Skip(", "t.Skipf(", "t.SkipNow(", "//nolint"}
	case "python":
		return []string{"@pytest.mark.skip", "@pytest.mark.xfail", "pytest.skip(", "@unittest.skip", "# noqa"}
	case "js":
		return []string{"it.skip(", "test.skip(", "describe.skip(", "xit(", "xdescribe(", "eslint-disable", "@ts-ignore"}
	case "rust":
		return []string{"#[ignore]", "#[allow("}
	}
	return nil
}

// languageOf names a runner's language family for the default patterns.
func languageOf(r *plan.Runner) string {
	switch {
	case r.Format == string(testrun.GoJSON), r.Language == "go", r.Language == "golang":
		return "go"
	case r.Dialect == string(testrun.DialectPytest), r.Language == "python":
		return "python"
	case r.Dialect == string(testrun.DialectNextest), r.Language == "rust":
		return "rust"
	case r.Format == string(testrun.JestJSON), r.Dialect == string(testrun.DialectVitest), r.Dialect == string(testrun.DialectJestJUnit),
		r.Language == "typescript", r.Language == "javascript", r.Language == "ts", r.Language == "js":
		return "js"
	}
	return ""
}

// suppressions looks for suppression patterns in the lines the task's
// commits added to source files of the sprint's runners.
func (s *taskState) suppressions() (*Reason, error) {
	var pats []string
	for _, p := range s.st.Suppressions {
		pats = append(pats, p.Text)
	}
	for _, r := range s.st.Runners {
		pats = append(pats, r.Suppressions...)
	}
	defaulted := false
	if len(pats) == 0 {
		pats, defaulted = defaultSuppressions(languageOf(s.runner)), true
	}
	if len(pats) == 0 {
		return nil, nil
	}
	bc, err := s.d.Git.ReadCommit(s.ct.BaseHash())
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	var paths []string
	for _, p := range s.committedPaths() {
		if !s.isSource(p) {
			continue
		}
		added, err := s.addedLines(bc.Tree, p)
		if err != nil {
			return nil, err
		}
		hit := false
		for _, l := range added {
			for _, pat := range pats {
				if pat != "" && strings.Contains(l, pat) {
					found[pat], hit = true, true
				}
			}
		}
		if hit {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	var which []string
	for p := range found {
		which = append(which, p)
	}
	sort.Strings(which)
	detail := fmt.Sprintf("lines added since the base hold suppression pattern(s) %s", strings.Join(which, ", "))
	if defaulted {
		detail += " (standards.md declares no suppression patterns; these are the " + languageOf(s.runner) + " defaults)"
	}
	return &Reason{Class: ClassSuppression, Paths: paths, Detail: detail}, nil
}

// isSource reports whether p is a file some runner of the sprint covers.
func (s *taskState) isSource(p string) bool {
	for _, r := range s.st.Runners {
		if runnerCovers(r, p) {
			return true
		}
	}
	return false
}

// addedLines returns the lines of p at HEAD that the base does not hold
// as often (a line count, not an alignment: a moved line is not added).
func (s *taskState) addedLines(baseTree gitstore.Hash, p string) ([]string, error) {
	read := func(tree gitstore.Hash) ([]byte, error) {
		e, ok, err := s.d.Git.Lookup(tree, strings.Split(p, "/"))
		if err != nil || !ok || e.IsDir() {
			return nil, err
		}
		return s.d.Git.ReadBlob(e.Hash)
	}
	now, err := read(s.tree)
	if err != nil || now == nil {
		return nil, err
	}
	old, err := read(baseTree)
	if err != nil {
		return nil, err
	}
	have := map[string]int{}
	for _, l := range bytes.Split(old, []byte("\n")) {
		have[string(l)]++
	}
	var out []string
	for _, l := range bytes.Split(now, []byte("\n")) {
		if have[string(l)] > 0 {
			have[string(l)]--
			continue
		}
		out = append(out, string(l))
	}
	return out, nil
}
