package gates

import (
	"context"
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/testrun"
)

// Red is the RED gate: the task's commit adds failing tests and nothing
// else. At the worktree's HEAD (no uncommitted change):
//   - every declared test ends FAIL_ASSERT, or PASS where the plan marks it
//     pass-on-red; any other outcome FAILs with its class (build_fail,
//     not_run for a selector that matched nothing, runtime_error,
//     setup_error, timeout, skip; a PASS not so marked is unexpected_pass);
//   - no test that passed at the task's base fails now (regression);
//   - the diff base→HEAD touches only files matching the runner's test
//     globs, or files carrying the shim marker (not_test_file).
//
// No declared test is a FAIL (no_tests); a report that cannot be read is
// UNVERIFIABLE (unknown_format). The run is recorded on the task's ref
// (label "red").
func Red(d Deps) Gate {
	return Func(func(ctx context.Context, in Input) (Verdict, error) {
		s, stop, err := d.open(ctx, "red", in)
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
			case r.Outcome == testrun.FailAssert:
			case r.Outcome == testrun.Pass && s.passRed[r.ID]:
			case r.Outcome == testrun.Pass:
				reasons = append(reasons, Reason{Class: ClassUnexpectedPass, Paths: []string{r.ID},
					Detail: r.ID + " already passes: a RED test must fail by assertion (mark it pass-on-red in plan.md if it guards existing behaviour)"})
			default:
				reasons = append(reasons, outcomeReason(r, "a RED test must fail by assertion"))
			}
		}
		reg, stop, err := s.regressionReason(ctx, rep)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		if reg != nil {
			reasons = append(reasons, *reg)
		}
		r, err := s.onlyTests()
		if err != nil {
			return Verdict{}, err
		}
		if r != nil {
			reasons = append(reasons, *r)
		}
		if err := s.record(ctx, "red", rep); err != nil {
			return Verdict{}, err
		}
		return s.finish(reasons), nil
	})
}

// verdictOr is the early verdict, or a zero one beside an error.
func verdictOr(v *Verdict) Verdict {
	if v == nil {
		return Verdict{}
	}
	return *v
}

// outcomeReason says why a declared test's outcome fails the gate.
func outcomeReason(r testrun.Result, want string) Reason {
	detail := fmt.Sprintf("%s ended %s; %s", r.ID, r.Outcome, want)
	if r.Outcome == testrun.NotRun {
		detail = fmt.Sprintf("%s did not run: no test of that name was found (a misspelled or missing test); %s", r.ID, want)
	}
	if r.Reason != "" {
		detail += ": " + r.Reason
	}
	return Reason{Class: OutcomeClass(r.Outcome), Detail: detail, Paths: []string{r.ID}}
}

// onlyTests checks that the task's commits changed only test files and
// shims.
func (s *taskState) onlyTests() (*Reason, error) {
	globs, err := s.testGlobs()
	if err != nil {
		return nil, err
	}
	if globs == nil {
		return &Reason{Class: ClassNoTestGlobs, Detail: "runner " + s.runner.Language + " in standards.md declares no test files (Test files:), so the diff cannot be held to tests"}, nil
	}
	shim := ShimMarker(s.st, s.runner)
	var bad []string
	for _, p := range s.committedPaths() {
		if globs.Match(p) {
			continue
		}
		ok, err := s.contains(s.tree, p, shim)
		if err != nil {
			return nil, err
		}
		if !ok {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return nil, nil
	}
	return &Reason{Class: ClassNotTestFile, Paths: bad,
		Detail: fmt.Sprintf("RED may change only test files (%s) and shims carrying %q; %d other file(s) changed", strings.Join(s.runner.TestGlobs, " "), shim, len(bad))}, nil
}
