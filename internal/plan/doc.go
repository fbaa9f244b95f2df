// Package plan reads, validates and writes the playbook's planning
// artifacts (the agile/TDD execution playbook's own files): the
// files under docs/agents/sprint<N>/ that the human and the supervisor
// write during planning and that execution must not start without.
//
// # Flow
//
//	s, err := plan.LoadDir(ctx, worktreeTop, plan.Options{Sprint: 1})
//	findings := plan.Check(s)   // structural rules only, never a judgement
//	ok := plan.Passed(findings) // no Error-severity finding
//	s.TreeID                    // what a verdict is bound to
//
// Load fails only when there is no sprint to read; everything wrong
// inside the files is a Finding{File, Line, Rule, Message, Severity}
// with a stable Rule code (rules.go). Load never writes; the package
// writes only plan new's templates (NewSprint), each with its front
// matter (the RED gate writes plan-ready.md, see gates.WriteReady).
//
// # Files
//
//	intake.md      five-part Intent + scope           Intake
//	standards.md   rules, gate matrix, test runners   Standards, GateMatrix, Runner
//	stories.md     sprint contract, ### S<N>-<NN>     Stories, Story (Intent per story)
//	plan.md        waves, dependencies, ownership     SprintPlan, Wave, Edge, Ownership
//	s<N>-<NN>-<slug>/
//	  tasks.md       ## T<k> — title + Files:/Symbols:/Uses:/Depends on:/Tests:   Task
//	  validate.md    | Check | Command | Expected (PASS) | FAIL cites |          Row
//	  plan.md        - [ ] `path::Name` — [pass-on-red (why);] description       TestDecl
//	  plan-ready.md  the same boxes, ticked on GREEN pass (optional)             ReadyBox
//
// intake.md and standards.md are read from the sprint directory, else
// from the planning root (C2). A story's directory is found by the
// `story:` of its files' front matter, else by its s<N>-<NN>- prefix (C3).
//
// # Compatibility
//
// The §7 recommendations are followed; docs/PLAN.md lists each and the
// few places this reader differs. In short: front matter is optional on
// read and always written (C1), read by a flat key/value reader (no YAML
// library: the artifacts use only flat scalars, and a string is never
// turned into a time.Time); CRLF, a BOM and `\|` in table cells are
// accepted; task numbers compare numerically (T01 is T1); test ids are
// `path::Name` with an optional `/subtest` (C5); `Tests: none
// (gate-only)` exempts a task from declaring tests (C8); pass-on-red is
// the bullet's description starting with `pass-on-red (reason)` (C9);
// scope globs are doublestar (C10); the gate matrix is the first fenced
// block of the standards `Gate matrix` section (C16); a story may sit in
// two waves only with task lists (C17); TBW and later-sprint story ids
// are findings in Stage-2 artifacts only (C18).
//
// # Tree id
//
// Sprint.TreeID is the git tree id of a tree holding exactly the planning
// files read (plan-ready.md excluded), at their paths below the planning
// root. When the planning root holds only those files, committed
// unchanged, it equals `git rev-parse HEAD:docs/agents`; any edit moves it, while appends
// to execution-phase files (execution.log, init.md, output.md,
// plan-ready.md) do not. A stored PASS verdict names it, so an edit after
// the check voids the verdict.
package plan
