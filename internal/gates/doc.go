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
package gates
