// Package gates is where the execution discipline's checks are reached:
// host-neutral inputs, verdicts and a registry of named gates. The CLI, the
// MCP server and the host's hooks all reach a gate the same way, through
// Registry.Run with an Input they built from their own request; none of
// them passes a host's payload down here.
//
// # Verdicts
//
// A gate decides from facts and returns a Verdict: PASS, FAIL, or
// UNVERIFIABLE when it could not judge (an unreadable format, a missing
// fact). UNVERIFIABLE is never a pass: whoever enforces a verdict treats
// it as a FAIL. A gate returns an error only when it could not run at all;
// Registry.Run turns that error into an UNVERIFIABLE verdict, so a caller
// that enforces verdicts cannot fail open by ignoring an error.
//
// # Gates
//
// One file per gate, each registering itself by name on a Registry the
// composition root builds (NewRegistry); there is no package-level state.
// Gates take a context first: they may run test suites for minutes, and a
// hook must answer inside its deadline.
//
// # Task gates
//
// Red, Scaffold and Green judge a task's commit, never a working state:
// the HEAD of the task's worktree (its contract on refs/ideate/tasks/<task>
// says where, from which base, in which scope, with which declared tests);
// an uncommitted change is a FAIL (uncommitted). Each runs the task's
// regression set with standards.md's runner (RunTask: the declared tests
// and every other test of their Go packages, or of their files for the
// other runners) and reads one outcome per test. The same set is run once
// at the task's base commit in a detached temporary worktree and recorded
// on the task's ref (label "base", attempt 0); every later gate of the
// task compares against that record: a test that passed at the base and
// does not pass now is a regression, one already failing there is not.
// Every judged run is recorded too (labels "red", "scaffold", "green").
// Reasons carry stable lower_snake classes (build_fail, not_run,
// unexpected_pass, regression, not_test_file, stub_implemented, shim_left,
// test_changed, out_of_scope, suppression, no_red, unknown_format, …).
//
// # The bounded-cost gate
//
// Cost (cost.go) judges a bound agent's Bash call before it runs, in
// microseconds and without running anything: the line is read with
// the shell reader (internal/shell: cd followed, sh -c, eval and
// here-documents fed to a shell read, wrappers such as env, timeout, nice
// looked through)
// and each simple command is held to the task's scope. A command whose
// target is wider than the task (go test ./..., a workspace's cargo test,
// pytest or npm test on the whole suite, make test, docker build, a
// standards.md `costly:` prefix) FAILs with the smallest safe target in
// its reason; `IDEATE_COST_OVERRIDE=<why>` in front of the command passes
// it with an "override" reason, which the hooks log. Unknown commands and
// opaque inline programs pass; unreadable rules are UNVERIFIABLE.
//
// # Stored verdicts
//
// Judge runs a gate and appends its verdict to a VerdictLog (the execution
// log) only once the gate finished, under a per-task lock: a gate killed
// while judging leaves no verdict, and two gates on one task leave theirs
// one after the other. Scaffold and Green hold the tests to the verified
// RED commit: the commit of the task's newest RED PASS verdict.
package gates
