// Package worktree gives each task of an execution plan a linked git
// worktree of its own, and keeps the task's contract and test runs on a
// ref where the gates read them. It knows no board: the claim a task is
// worked under is an opaque item, holder and fencing token, checked through
// the ClaimChecker the caller passes.
//
// # Layout
//
//	refs/ideate/tasks/<task>        one commit per change (start, restart,
//	                                close, recorded run); its tree:
//	  ideate-format                 "ideate-task 1"
//	  contract.json                 the current Contract
//	  runs/<attempt>/<commit>.json  recorded runs (Run), the baselines
//	refs/heads/ideate/task/<task>   the branch the worktree works on
//	<root>/<task>                   the worktree (root: .ideate/worktrees/
//	                                at the top of the main working tree,
//	                                or git config ideate.worktreeRoot)
//	<worktree git dir>/ideate-task.json  read-only copy of the contract
//
// In ref names and paths a task id's '/' is written '+' ("S1-01/T2" →
// "S1-01+T2"); ids cannot hold '+'.
//
// # The contract
//
// Task id, attempt, role, base commit, scope globs and declared tests,
// plus the claim. It is written by Start, last, under the task's lock; the
// gates read it from the ref. A worker can read (and could overwrite) the
// copy in its worktree's git directory, but nothing reads the copy back:
// a changed contract is a commit on the task's ref, with its author.
//
// # Lifecycle and crashes
//
// Start serializes on a file lock per task under .git/ideate/ (released by
// the kernel when its holder dies). It creates the worktree with `git
// worktree add --no-checkout` (git's "initializing" lock covers only the
// administrative files) and fills it with `git read-tree --reset -u HEAD`
// (which moves no ref, so a kill leaves no ref lock); then writes
// the contract. A Start killed at any point leaves one of: nothing; an
// empty directory; a worktree git left locked "initializing"; a worktree
// not (fully) checked out; a worktree without a contract. Nothing of it
// was handed to a worker, and the next Start of the task repairs each.
// `git worktree prune` cleans what it can (a worktree whose directory is
// gone); the locked leftover is the one it cannot, and the next Start or
// Close of the task removes it. Close writes the closed status first, then
// removes the worktree (a crash in between leaves a "leftover", removed by
// the next Close or Start).
//
// # Claims
//
// A start that claims a board item first writes an intent
// (<state dir>/starting/<task>.json: item, holder, time); the contract
// that records the claim replaces it. A start killed in between leaves the
// intent beside its claim, and the caller (task start, task release)
// takes it as this clone's evidence that the claim is its own: the same
// holder's next start renews and reuses it, a release frees it, at once.
//
// A restart by the same holder under the same token reuses the worktree as
// it is; a higher token (a newer claim on the item) takes it over; a lower
// one is StaleToken, another holder under the same token Taken. List asks
// the ClaimChecker about every open task, so a task whose claim expired or
// was released shows "lost".
//
// # Runs
//
// PutRun stores a testrun.Report keyed by (task, attempt, commit);
// GetRun and BaseRun read them back, so RED and GREEN are judged against
// recorded runs, and a test already failing at the base is not a
// regression.
package worktree
