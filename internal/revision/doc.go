// Package revision is the per-task revision loop and the escalation it
// ends in: the inner loop and the outer escalation are one mechanism at
// two scales.
//
// # Attempts
//
// Each attempt K of a task keeps two files on the task's ref
// (refs/ideate/tasks/<task>, beside its contract and runs):
//
//	attempts/<K>/init.md            the context, written by git ideate only
//	attempts/<K>/output-<role>.md   each role's own report, captured from its worktree
//
// init.md is append-only and turn-counted: attempt K's file is attempt
// K-1's with one more "## Turn" appended, so every version is in git
// history with the task. A turn points at the task's plan-ready section
// (file and line, never a copy), lists the post-planner's scaffold
// actions (execution log entries of phase "scaffold", events create,
// update, delete), the role's memory (a "# Memory" section; Deps.Memory,
// "(none)" without one) and, from attempt 2, a feedback entry composed
// from the failed verdict of the attempt before and its output.md: the
// failing tests and their outcomes, the reason classes, the paths outside
// the scope, what to fix, and what not to touch (the test files RED
// froze, everything outside the scope, the planning artifacts).
// Materialize puts the current init.md at .ideate/init.md in the worker's
// worktree, mode 0444 (the directory is in the repository's info/exclude,
// and the role guard denies writes to it); the worker writes
// .ideate/output.md, which CaptureOutput copies to the ref under the
// task's current role before the next turn is composed (and the stop gate
// does after judging); NewRole keeps it and clears it from the worktree
// before the task is started under another role, and Refresh then gives
// init.md a turn naming that role.
//
// # Back to RED
//
// A GREEN FAIL whose tests do not pin a declared symbol (an
// unpinned_symbol reason that is not a note carried forward) is a test
// defect GREEN may not mend: the tests are frozen after RED. Open then
// opens the next attempt as a red-worker's (worktree.BackToRed): the
// branch and worktree return to the verified RED commit, GREEN's commit
// is kept on a branch of its own, and the feedback's first fix (next
// "red") says so. After RED passes again, GREEN takes its work back from
// the kept branch.
//
// # Bounds
//
// A task gets Bound attempts: standards.md's `max_attempts` (the
// sprint's), else .ideate.json's execution.max_attempts, else 3. The
// count is the task's own contract attempt: it resets per task and never
// accumulates across waves. CheckWave is the no-progress guard: a wave
// whose tasks all passed GREEN but that ticked no new plan-ready box is a
// stall.
//
// # Escalation
//
// When revision is exhausted (Open on a failed last attempt) or a wave
// stalls, Escalate classifies from facts and logs the choice on the
// execution log (phase "escalate", the class as the event, the evidence
// as reasons) so it is auditable and replayable:
//
//	foundation-poisoning  pending tasks wait on it (the board's depends_on,
//	                      else the plan's schedule): halt the chain,
//	                      abandon their in-flight worktrees, keep merged work
//	isolated              nothing pending waits: continue, collect
//	scope-defect          the verdict's classes blame the plan or scope
//	                      (out_of_scope, …): a human decides
//	no-progress, budget   hard stop
//
// # Review findings
//
// A failed structure or final verdict is a finding on work GREEN passed.
// Open (on the judged task) places it: each failing reason's path goes to
// the open task whose worktree diff holds that file (a reason with no
// path, the judged task). When every reason is fixable by a GREEN worker
// (orphan, near_copy, duplicate_helper, parallel_impl, matrix, skip,
// unticked, uncommitted, no_green) and exactly one GREEN task is
// implicated, that task is re-spawned: its next attempt's init.md turn
// carries the verdict as feedback, logged once per verdict (Phase
// "revise", Event "respawn"). Otherwise — a reason no worker can fix, a
// path no task's diff holds, two tasks implicated — the judged task is
// escalated at once (cause "findings").
//
// Escalations lists them for `git ideate escalations` and the MCP tool;
// PrimeLines gives the SessionStart priming its lines.
package revision
