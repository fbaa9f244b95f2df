package gates

import (
	"context"
	"fmt"

	"github.com/ideate/git-ideate/internal/testrun"
)

// Scaffold is the scaffold guard, asked after the post-RED scaffold step.
// At the worktree's HEAD (no uncommitted change):
//   - every declared test now ends FAIL_STUB or still FAIL_ASSERT; a PASS
//     not marked pass-on-red means a stub got a body (stub_implemented);
//     BUILD_FAIL and the other outcomes FAIL with their class;
//   - no file the task changed still carries the shim marker (shim_left);
//   - the test files are byte-identical to the verified RED commit
//     (test_changed; no RED PASS verdict is no_red);
//   - then Deps.Symbols, when set (only stubs were added, with the
//     declared names).
//
// The shim scan covers the files the task changed against its base: a
// shim is the task's own, added by its RED commit. The run is recorded on
// the task's ref (label "scaffold").
func Scaffold(d Deps) Gate {
	return Func(func(ctx context.Context, in Input) (Verdict, error) {
		s, stop, err := d.open(ctx, "scaffold", in)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		red, stop, err := s.verifiedRed(ctx)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		rep, stop, err := s.run(ctx)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		var reasons []Reason
		for _, r := range s.outcomes(rep) {
			switch {
			case r.Outcome == testrun.FailStub, r.Outcome == testrun.FailAssert:
			case r.Outcome == testrun.Pass && s.passRed[r.ID]:
			case r.Outcome == testrun.Pass:
				reasons = append(reasons, Reason{Class: ClassStubImplemented, Paths: []string{r.ID},
					Detail: r.ID + " passes after the scaffold step: a stub got a real body, which is GREEN's work"})
			default:
				reasons = append(reasons, outcomeReason(r, "after the scaffold step a declared test must hit a stub or still fail by assertion"))
			}
		}
		if shim := ShimMarker(s.st, s.runner); shim != "" {
			var left []string
			for _, p := range s.committedPaths() {
				ok, err := s.contains(s.tree, p, shim)
				if err != nil {
					return Verdict{}, err
				}
				if ok {
					left = append(left, p)
				}
			}
			if len(left) > 0 {
				reasons = append(reasons, Reason{Class: ClassShimLeft, Paths: left,
					Detail: fmt.Sprintf("%d file(s) still carry the shim marker %q: the scaffold step replaces every shim with a stub", len(left), shim)})
			}
		}
		tc, err := s.testChanged(red)
		if err != nil {
			return Verdict{}, err
		}
		if tc != nil {
			reasons = append(reasons, *tc)
		}
		if d.Symbols != nil {
			rs, err := d.Symbols(ctx, SymbolInput{Task: s.ct.Task, Dir: s.ct.Path, Base: s.ct.Base, Red: red.String(),
				Commit: s.head.String(), Standard: s.st, Runner: s.runner, Declared: declaredSymbols(s.sprint, s.ct.Task)})
			if err != nil {
				return Verdict{}, err
			}
			reasons = append(reasons, rs...)
		}
		if err := s.record(ctx, "scaffold", rep); err != nil {
			return Verdict{}, err
		}
		return s.finish(reasons), nil
	})
}
