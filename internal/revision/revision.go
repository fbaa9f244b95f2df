package revision

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/textfmt"
	"github.com/ideate/git-ideate/internal/worktree"
)

// DefaultMaxAttempts is how many attempts a task gets when neither
// standards.md (`## Cost rules`, max_attempts) nor .ideate.json
// (execution.max_attempts) says.
const DefaultMaxAttempts = 3

// Escalated: the task's revision is exhausted (or its wave stalled); the
// error names the escalation, which is on the execution log.
const Escalated apperr.Code = "ESCALATED"

// Deps is what the revision loop reads and writes. Tasks and Exec are
// required; Board and Plan may be nil (no graph: a failure is then
// judged isolated, and the escalation says the graph was unknown; no
// plan: init.md says where its pointer could not be found).
type Deps struct {
	Tasks *worktree.Manager
	Exec  *execlog.Log
	Board *board.Store
	Plan  func(ctx context.Context) (*plan.Sprint, error)
	// MaxAttempts is .ideate.json's bound (0: DefaultMaxAttempts);
	// standards.md's max_attempts, when set, wins: it is the sprint's.
	MaxAttempts int
	// Memory returns the role-scoped memory entries for init.md's
	// # Memory section, one rendered line each; nil: "(none)".
	Memory func(ctx context.Context, role string) ([]string, error)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Bound returns the attempts a task gets and where that number comes
// from ("standards.md", ".ideate.json", "default").
func (d Deps) Bound(ctx context.Context) (int, string) {
	if d.Plan != nil {
		if s, err := d.Plan(ctx); err == nil && s != nil && s.Standards != nil && s.Standards.Cost != nil && s.Standards.Cost.MaxAttempts > 0 {
			return s.Standards.Cost.MaxAttempts, "standards.md"
		}
	}
	if d.MaxAttempts > 0 {
		return d.MaxAttempts, ".ideate.json"
	}
	return DefaultMaxAttempts, "default"
}

// Attempt is what Open did.
type Attempt struct {
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	Max     int    `json:"max_attempts"`
	Role    string `json:"role"`
	Turn    int    `json:"turn"`
	Created bool   `json:"created"` // a new turn was written now
	Path    string `json:"path,omitempty"`
	Text    string `json:"init"`
	// Escalation is set when the task's revision was exhausted: nothing
	// was opened and the task went to the escalation it names.
	Escalation *Escalation `json:"escalation,omitempty"`
	// Respawn is set when a structural or final finding on another task
	// re-opened this one (Task) for this attempt.
	Respawn *Respawn `json:"respawn,omitempty"`
}

// Open opens the task's current attempt: when it has no init.md yet, a
// turn is composed (the plan-ready pointer, the scaffold actions, the
// role's memory and, from attempt 2, the feedback on the attempt before)
// and appended to the previous attempt's init.md as
// attempts/<K>/init.md on the task's ref; when the current attempt has
// one and its newest verdict failed, the worker's output.md is captured,
// the task moves to attempt K+1 and that turn is written — unless K was
// the last attempt the bound allows: then the failure is escalated
// (Escalate) and nothing is opened. Either way the current init.md is
// materialized read-only in the worktree. Open is idempotent: an attempt
// that has its init.md and no failed verdict is only materialized again.
func (d Deps) Open(ctx context.Context, task string) (*Attempt, error) {
	ct, err := d.Tasks.Contract(task)
	if err != nil {
		return nil, err
	}
	if ct.Status != worktree.StatusOpen {
		return nil, apperr.New(worktree.Closed, "task %s is %s; start it again before opening an attempt", task, ct.Status)
	}
	max, _ := d.Bound(ctx)
	k := ct.Attempt
	if k < 1 {
		k = 1
	}
	cur, ok, err := d.Tasks.AttemptFile(task, k, worktree.InitFile)
	if err != nil {
		return nil, err
	}
	if ok {
		v, failed, err := d.failed(ctx, task, k)
		if err != nil {
			return nil, err
		}
		if !failed {
			return d.refresh(ctx, ct, k, max, cur)
		}
		if reviewPhase(v.Phase) {
			// A finding on work GREEN passed: re-spawn the GREEN task it
			// implicates, or escalate when it is not isolated and fixable.
			if a, done, err := d.review(ctx, ct, k, max, v); err != nil || done {
				return a, err
			}
		}
		if _, err := d.CaptureOutput(ctx, task); err != nil {
			return nil, err
		}
		if k >= max {
			esc, err := d.Escalate(ctx, task, CauseAttempts, &v)
			if err != nil {
				return nil, err
			}
			return &Attempt{Task: task, Attempt: k, Max: max, Role: ct.Role, Turn: turns(cur), Escalation: esc}, nil
		}
		red, back := gitstore.ZeroHash, false
		if sendsBackToRed(v) {
			// The tests must grow: the next attempt is RED's, from the
			// verified RED commit.
			if red, back, err = d.verifiedRed(ctx, task); err != nil {
				return nil, err
			}
		}
		if back {
			ct, _, err = d.Tasks.BackToRed(ctx, task, red)
		} else {
			ct, err = d.Tasks.NextAttempt(ctx, task)
		}
		if err != nil {
			return nil, err
		}
		// The report is kept with the attempt that wrote it.
		if err := d.Tasks.ClearWorkerOutput(task); err != nil {
			return nil, err
		}
		k = ct.Attempt
	} else if k > max {
		v, _, err := d.failed(ctx, task, k-1)
		if err != nil {
			return nil, err
		}
		esc, err := d.Escalate(ctx, task, CauseAttempts, &v)
		if err != nil {
			return nil, err
		}
		return &Attempt{Task: task, Attempt: k, Max: max, Role: ct.Role, Escalation: esc}, nil
	}
	return d.writeTurn(ctx, ct, k, max, nil)
}

// writeTurn appends attempt k's turn to the task's init.md (the feedback
// from fb when set, else from attempt k-1's newest failed verdict),
// writes it as attempts/<k>/init.md and materializes it; when another
// process wrote that attempt's init.md first, its text is kept.
func (d Deps) writeTurn(ctx context.Context, ct *worktree.Contract, k, max int, fb *execlog.Entry) (*Attempt, error) {
	task := ct.Task
	// The turns so far: the newest earlier attempt's init.md.
	var prev []byte
	for j := k - 1; j >= 1; j-- {
		b, ok, err := d.Tasks.AttemptFile(task, j, worktree.InitFile)
		if err != nil {
			return nil, err
		}
		if ok {
			prev = b
			break
		}
	}
	turn, err := d.compose(ctx, ct, k, max, turns(prev)+1, fb)
	if err != nil {
		return nil, err
	}
	var text []byte
	if len(prev) == 0 {
		text = []byte(header(task))
	} else {
		text = append(text, prev...)
	}
	text = append(text, turn...)
	err = d.Tasks.PutAttemptFile(ctx, task, k, worktree.InitFile, text, func(old []byte, exists bool) error {
		if exists {
			return errRaced
		}
		return nil
	})
	if err == errRaced {
		// Another Open wrote this attempt's init.md first: keep its.
		cur, _, err := d.Tasks.AttemptFile(task, k, worktree.InitFile)
		if err != nil {
			return nil, err
		}
		return d.materialize(task, k, max, ct.Role, cur, false)
	}
	if err != nil {
		return nil, err
	}
	return d.materialize(task, k, max, ct.Role, text, true)
}

var errRaced = apperr.New(apperr.Conflict, "the attempt's init.md was written by another process")

// refresh materializes attempt k's init.md, first appending a turn when
// its newest turn no longer tells the truth: the task was started again
// under another role, the RED gate has since written the task's
// plan-ready section, or the scaffold has logged actions since. Nothing
// changed: the file is only materialized again.
func (d Deps) refresh(ctx context.Context, ct *worktree.Contract, k, max int, cur []byte) (*Attempt, error) {
	n := turns(cur)
	turn, err := d.compose(ctx, ct, k, max, n+1, nil)
	if err != nil {
		return nil, err
	}
	last := string(cur)
	if i := strings.LastIndex(last, "\n## Turn "); i >= 0 {
		last = last[i:]
	}
	if turnBody(last) == turnBody(string(turn)) {
		return d.materialize(ct.Task, k, max, ct.Role, cur, false)
	}
	text := append(append([]byte(nil), cur...), turn...)
	err = d.Tasks.PutAttemptFile(ctx, ct.Task, k, worktree.InitFile, text, func(old []byte, exists bool) error {
		if !bytes.Equal(old, cur) {
			return errRaced
		}
		return nil
	})
	if err == errRaced {
		now, _, err := d.Tasks.AttemptFile(ct.Task, k, worktree.InitFile)
		if err != nil {
			return nil, err
		}
		return d.materialize(ct.Task, k, max, ct.Role, now, false)
	}
	if err != nil {
		return nil, err
	}
	return d.materialize(ct.Task, k, max, ct.Role, text, true)
}

// turnBody is a turn without its heading line (its number and time) and
// without the feedback of an earlier attempt, which a refresh does not
// repeat: what must still be true of the attempt.
func turnBody(turn string) string {
	turn = strings.TrimPrefix(turn, "\n")
	head, body, _ := strings.Cut(turn, "\n")
	role := ""
	if i := strings.LastIndex(head, "("); i >= 0 {
		role, _, _ = strings.Cut(head[i+1:], ",")
	}
	if i := strings.Index(body, "\n### Feedback on attempt "); i >= 0 {
		body = body[:i]
	}
	return role + "\n" + body
}

func (d Deps) materialize(task string, k, max int, role string, text []byte, created bool) (*Attempt, error) {
	path, err := d.Tasks.Materialize(task, text)
	if err != nil {
		return nil, err
	}
	return &Attempt{Task: task, Attempt: k, Max: max, Role: role, Turn: turns(text), Created: created, Path: path, Text: string(text)}, nil
}

// header starts a task's init.md.
func header(task string) string {
	return "# init.md — task " + task + "\n\n" +
		"Written by git ideate (the post-planner's scaffold actions, the supervisor's feedback), append-only,\n" +
		"one turn per attempt. Read-only to you: write your own report to .ideate/output.md (per-test\n" +
		"outcome, `git diff --stat`, notes); it is kept with the attempt.\n"
}

// turns counts the turns of an init.md.
func turns(b []byte) int { return bytes.Count(b, []byte("\n## Turn ")) }

// compose writes turn n, for attempt k of the task.
func (d Deps) compose(ctx context.Context, ct *worktree.Contract, k, max, n int, fbv *execlog.Entry) ([]byte, error) {
	var b strings.Builder
	role := ct.Role
	if role == "" {
		role = "worker"
	}
	fmt.Fprintf(&b, "\n## Turn %d — attempt %d of %d (%s, %s)\n\n", n, k, max, role, d.now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Task: %s — the spec is %s (read it there; it is not copied here).\n", ct.Task, d.pointer(ctx, ct.Task))
	if len(ct.Scope) > 0 {
		fmt.Fprintf(&b, "Scope: %s\n", strings.Join(ct.Scope, ", "))
	}
	if len(ct.Tests) > 0 {
		fmt.Fprintf(&b, "Declared tests: %s\n", strings.Join(ct.Tests, ", "))
	}
	b.WriteString("\n### Scaffold actions\n\n")
	acts, err := d.Exec.List(ctx, execlog.Filter{Task: ct.Task, Phase: "scaffold"})
	if err != nil {
		return nil, err
	}
	nActs := 0
	for i := len(acts) - 1; i >= 0; i-- { // oldest first
		e := acts[i]
		if e.Event != "create" && e.Event != "update" && e.Event != "delete" {
			continue
		}
		line := "- " + e.Event
		if len(e.Paths) > 0 {
			line += " " + e.Paths[0]
		}
		if e.Detail != "" {
			line += " — " + textfmt.Fit(textfmt.OneLine(e.Detail), 200)
		}
		b.WriteString(line + "\n")
		nActs++
	}
	if nActs == 0 {
		b.WriteString("(none)\n")
	}
	b.WriteString("\n# Memory\n\n")
	var mem []string
	if d.Memory != nil {
		if mem, err = d.Memory(ctx, role); err != nil {
			mem = []string{"(the memory could not be read: " + textfmt.OneLine(apperr.Message(err)) + ")"}
		}
	}
	if len(mem) == 0 {
		b.WriteString("(none)\n")
	}
	for _, m := range mem {
		b.WriteString("- " + strings.TrimPrefix(textfmt.OneLine(m), "- ") + "\n")
	}
	if k > 1 || fbv != nil {
		fb, err := d.feedback(ctx, ct, k-1, fbv)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n" + fb.Text)
	}
	return []byte(b.String()), nil
}

// pointer names the task's plan-ready section: the story's
// plan-ready.md and the line of the task's first box.
func (d Deps) pointer(ctx context.Context, task string) string {
	story, t, _ := strings.Cut(task, "/")
	num, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(t, "T"), "t"))
	if d.Plan == nil {
		return "its section of plan-ready.md (the plan was not read)"
	}
	s, err := d.Plan(ctx)
	if err != nil || s == nil {
		return "its section of plan-ready.md (the plan could not be read)"
	}
	for _, sd := range s.StoryDirs {
		if sd.Story != story || sd.PlanReady == nil {
			continue
		}
		for _, bx := range sd.PlanReady.Boxes {
			if bx.Task == num {
				return fmt.Sprintf("%s:%d (task T%d's section)", sd.PlanReady.Path, bx.Line, num)
			}
		}
		return sd.PlanReady.Path + " (no box names T" + strconv.Itoa(num) + " yet)"
	}
	return "its section of plan-ready.md (story " + story + " has none yet)"
}

// failed returns the newest verdict of the task's attempt k and whether it
// failed (FAIL or UNVERIFIABLE).
func (d Deps) failed(ctx context.Context, task string, k int) (execlog.Entry, bool, error) {
	es, err := d.Exec.List(ctx, execlog.Filter{Task: task, Event: execlog.EventVerdict, Attempt: k})
	if err != nil {
		return execlog.Entry{}, false, err
	}
	for _, e := range es {
		if e.Phase == "cost" || e.Phase == "guard" || e.Phase == "plan" {
			continue // per-call gates say nothing of the attempt's work
		}
		return e, e.Result != execlog.PASS, nil
	}
	return execlog.Entry{}, false, nil
}

// Feedback is the entry composed for a re-spawn from a failed attempt.
type Feedback struct {
	Task    string   `json:"task"`
	Attempt int      `json:"attempt"` // the attempt that failed
	Verdict string   `json:"verdict"` // "green FAIL at 1a2b3c4d5e6f"
	Failing []string `json:"failing_tests,omitempty"`
	Outside []string `json:"out_of_scope,omitempty"`
	Classes []string `json:"reason_classes,omitempty"`
	Fix     []string `json:"fix"`
	// Next is the phase that takes the task on next when it is not the
	// failed one's: "red" for a GREEN whose tests do not pin a symbol.
	Next      string   `json:"next,omitempty"`
	DontTouch []string `json:"do_not_touch"`
	Output    bool     `json:"output_read"` // the attempt's output.md was there
	Text      string   `json:"text"`        // the entry as init.md holds it
}

// Feedback composes the feedback entry on the task's current attempt (the
// newest failed verdict of that attempt and its output.md), as the next
// Open would append it. A current attempt without a failed verdict is
// apperr.NotFound.
func (d Deps) Feedback(ctx context.Context, task string) (*Feedback, error) {
	ct, err := d.Tasks.Contract(task)
	if err != nil {
		return nil, err
	}
	k := ct.Attempt
	if k < 1 {
		k = 1
	}
	if _, failed, err := d.failed(ctx, task, k); err != nil {
		return nil, err
	} else if !failed {
		return nil, apperr.New(apperr.NotFound, "attempt %d of task %s has no failed verdict; there is nothing to revise", k, task)
	}
	return d.feedback(ctx, ct, k, nil)
}

// feedback composes the entry on attempt k: on its newest failed
// verdict, or on over when set (a finding on another task's work that
// implicates this one).
func (d Deps) feedback(ctx context.Context, ct *worktree.Contract, k int, over *execlog.Entry) (*Feedback, error) {
	fb := &Feedback{Task: ct.Task, Attempt: k}
	v, failed, err := d.failed(ctx, ct.Task, k)
	if err != nil {
		return nil, err
	}
	if over != nil {
		v, failed = *over, true
	}
	var b strings.Builder
	failing := map[string]bool{} // classes with a reason that is not a note
	fmt.Fprintf(&b, "### Feedback on attempt %d\n\n", k)
	if !failed && v.ID == "" {
		fb.Verdict = "no verdict"
		b.WriteString("Attempt " + strconv.Itoa(k) + " left no verdict (the gate never judged it, or the worker stopped without one).\n")
	} else {
		commit := v.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		fb.Verdict = fmt.Sprintf("%s %s", v.Phase, v.Result)
		if commit != "" {
			fb.Verdict += " at " + commit
		}
		fmt.Fprintf(&b, "What was wrong — the %s gate: %s (execution log entry %s):\n", v.Phase, fb.Verdict, v.ID)
		for _, t := range v.Tests {
			if t.Outcome == "PASS" || t.Outcome == "SKIP" {
				continue
			}
			fb.Failing = append(fb.Failing, t.ID)
			line := "- test " + t.ID + ": " + t.Outcome
			if t.Detail != "" {
				line += " — " + textfmt.Fit(textfmt.OneLine(t.Detail), 200)
			}
			b.WriteString(line + "\n")
		}
		seen := map[string]bool{}
		for _, r := range v.Reasons {
			if r.Severity != "info" && r.Severity != "medium" {
				failing[r.Class] = true
			}
			if !seen[r.Class] {
				seen[r.Class] = true
				fb.Classes = append(fb.Classes, r.Class)
			}
			line := "- " + r.Class + ": " + textfmt.Fit(textfmt.OneLine(r.Detail), 300)
			if len(r.Paths) > 0 {
				line += " (" + strings.Join(r.Paths, ", ") + ")"
			}
			b.WriteString(line + "\n")
			if r.Class == "out_of_scope" {
				fb.Outside = append(fb.Outside, r.Paths...)
			}
		}
	}
	// What to fix.
	if sendsBackToRed(v) {
		fb.Next = "red"
		fb.Fix = append(fb.Fix, backToRedFix(ct.Task, k, v))
	}
	if len(fb.Failing) > 0 {
		fb.Fix = append(fb.Fix, "make these tests reach their expected outcome: "+strings.Join(fb.Failing, ", "))
	}
	for _, c := range fb.Classes {
		if !failing[c] || c == classUnpinned && fb.Next == "red" {
			continue // a note, or said above
		}
		fb.Fix = append(fb.Fix, fixFor(c, ct.Task, phaseOf(v.Phase, ct.Role)))
	}
	if len(fb.Outside) > 0 {
		fb.Fix = append(fb.Fix, "take back the changes outside the scope: "+strings.Join(fb.Outside, ", "))
	}
	if len(fb.Fix) == 0 {
		fb.Fix = append(fb.Fix, "finish the task so its gate can judge it: commit the work, then run git ideate gate "+phaseOf(v.Phase, ct.Role)+" --task "+ct.Task)
	}
	b.WriteString("\nWhat to fix:\n")
	for _, f := range fb.Fix {
		b.WriteString("- " + f + "\n")
	}
	// What not to touch.
	var frozen []string
	seen := map[string]bool{}
	for _, t := range ct.Tests {
		f, _, _ := strings.Cut(t, "::")
		if strings.Contains(f, "/") || strings.Contains(f, ".") {
			if !seen[f] {
				seen[f] = true
				frozen = append(frozen, f)
			}
		}
	}
	if ct.Role != "red-worker" && len(frozen) > 0 {
		fb.DontTouch = append(fb.DontTouch, "the test files RED froze: "+strings.Join(frozen, ", "))
	}
	if len(ct.Scope) > 0 {
		fb.DontTouch = append(fb.DontTouch, "anything outside the scope ("+strings.Join(ct.Scope, ", ")+")")
	}
	fb.DontTouch = append(fb.DontTouch, "the planning artifacts (docs/agents/**) and this init.md")
	b.WriteString("\nWhat NOT to touch:\n")
	for _, f := range fb.DontTouch {
		b.WriteString("- " + f + "\n")
	}
	// The attempt's own report.
	out, ok, err := d.roleOutput(ct.Task, k, ct.Role)
	if err != nil {
		return nil, err
	}
	if ok && len(bytes.TrimSpace(out)) > 0 {
		fb.Output = true
		b.WriteString("\nThe attempt's own report (its " + orWorker(ct.Role) + "'s output.md), quoted:\n\n")
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		for i, l := range lines {
			if i == 40 {
				fmt.Fprintf(&b, "> … (%d more lines in attempts/%d/%s on the task's ref)\n", len(lines)-40, k, worktree.OutputFileOf(ct.Role))
				break
			}
			b.WriteString("> " + textfmt.Fit(l, 300) + "\n")
		}
	} else {
		b.WriteString("\nThe attempt left no output.md.\n")
	}
	fb.Text = b.String()
	return fb, nil
}

// phaseOf is the gate to ask again: the failed verdict's, else the one
// the task's role answers to.
func phaseOf(phase, role string) string {
	if phase != "" {
		return phase
	}
	switch strings.TrimPrefix(role, "git-ideate:") {
	case "red-worker":
		return "red"
	case "scaffolder", "post-planner":
		return "scaffold"
	}
	return "green"
}

// fixFor is the next step for a reason class: what to change and the
// command (or file) that takes the task on, so no feedback ends without
// one.
func fixFor(class, task, phase string) string {
	if phase == "" {
		phase = "green"
	}
	again := "git ideate gate " + phase + " --task " + task
	switch class {
	case "regression":
		return "a test that passed at the task's base fails now: find what your change broke, restore it, commit, then run " + again
	case "build_fail":
		return "the code does not build: fix the compile errors, commit, then run " + again
	case "stub_implemented", "body_implemented":
		return "leave the stubs' panic bodies to GREEN (scaffold only): restore them, commit, then run " + again
	case "shim_left":
		return "delete the RED shims (files marked agentic:shim) the stubs replace, or run git ideate scaffold --task " + task + ", commit, then run " + again
	case "stub_missing", "stub_duplicate", "stub_no_marker", "not_stub":
		return "run git ideate scaffold --task " + task + " to write one stub per declared symbol (body failing with SUB-AGENT-TODO), commit, then run " + again
	case "test_changed":
		return "put the frozen test files back as RED committed them (git checkout <red commit> -- <test file>); change the code, not the tests; then run " + again
	case "suppression":
		return "remove the suppression (skip, nolint, weakened assertion) named in standards.md's Suppression patterns, commit, then run " + again
	case "uncommitted":
		return "commit your work in the task's worktree (the gate judges the committed HEAD only), then run " + again
	case "not_run", "no_tests":
		return "the declared tests did not run: check their names against the story's plan.md and that they build, then run " + again
	case "unexpected_pass":
		return "a RED test passes already: make it fail by assertion (a wrong-bodied shim), commit, then run git ideate gate red --task " + task
	case "not_test_file":
		return "RED writes test files and shims only: take the other changes back, commit, then run git ideate gate red --task " + task
	case "timeout", "matrix_timeout":
		return "a test or command hangs or runs too long: find the loop or wait, commit, then run " + again
	case "unpinned_symbol":
		return "a declared symbol whose body returns a zero value still passes the declared tests: a test must assert what a zero value gets wrong (see the reason for the symbol and the tasks that declare it), then run " + again
	case "matrix":
		return "a command of standards.md's Gate matrix failed in the worktree (the reason names it): fix what it reports, commit, then run git ideate gate green --task " + task + " (its PASS ticks plan-ready.md) and git ideate gate final --task " + task
	case "matrix_unrunnable":
		return "a Gate matrix command of standards.md cannot run here: fix the command in standards.md (or install its tool), then run git ideate gate final --task " + task
	case "no_matrix":
		return "standards.md has no ## Gate matrix: add one (a fenced block of commands), run git ideate plan check, then git ideate gate final --task " + task
	case "no_green", "unticked", "unbacked_tick", "skip":
		return "run git ideate gate green --task " + task + " at the worktree's HEAD (its PASS ticks the task's plan-ready.md boxes), then git ideate gate final --task " + task
	case "no_plan_ready", "no_boxes", "no_red":
		return "run git ideate gate red --task " + task + " on the RED commit: its PASS writes the task's section of plan-ready.md"
	case "sprint_unfinished":
		return "finish the tasks the reason names (each needs a GREEN PASS: git ideate gate green --task <task>), then run git ideate gate final --task " + task + " again"
	case "no_runner", "unknown_format", "runner_error", "no_test_globs":
		return "standards.md's ## Test runners cannot run these tests: add or fix the runner for their language, run git ideate plan check, then " + again
	case "no_plan", "plan_unreadable", "plan_failed", "plan_unchecked", "not_in_plan", "no_task":
		return "run git ideate plan check and fix what it reports in docs/agents/sprint<N>/; the task must be one the plan holds"
	case "no_contract", "no_worktree":
		return "start the task first: git ideate task start " + task
	case "not_head":
		return "a gate judges the worktree's HEAD: commit there, then run " + again + " without --commit"
	case "out_of_scope", "no_scope":
		return "take back the changes outside the task's Files: (tasks.md), or change the plan and run git ideate plan check; then run " + again
	case "orphan", "near_copy", "duplicate_helper", "parallel_impl", "weaker_check":
		return "reuse the existing code the reason names instead of a new copy (standards.md's Active rules), commit, then run git ideate gate structure --task " + task
	case "pin_unverifiable", "unreadable", "no_log", "no_facts", "error", "rules_unreadable":
		return "the gate could not judge (the reason says what it lacked): fix that, then run " + again
	case "costly", "too_wide", "rerun", "override":
		return "run the narrower command the bounded-cost gate names (standards.md's Cost rules), then " + again
	case "escaped_write", "link_to_test", "third_party", "dependency_open":
		return "take back the change the reason names (the role may not make it), commit, then run " + again
	}
	return "the reason above says what failed: fix it, commit in the task's worktree, then run " + again
}

// CaptureOutput copies the worker's output.md from the task's worktree
// onto the task's ref as the current role's report of the current attempt
// (attempts/<K>/output-<role>.md); false when the worktree holds none, or
// the ref already holds that text — as this role's report, or as another
// role's or an earlier attempt's, which it then is (the file outlives
// the role that wrote it; the role after wrote none).
func (d Deps) CaptureOutput(ctx context.Context, task string) (bool, error) {
	ct, err := d.Tasks.Contract(task)
	if err != nil {
		return false, err
	}
	out, ok, err := d.Tasks.WorkerOutput(task)
	if err != nil || !ok {
		return false, err
	}
	k := ct.Attempt
	if k < 1 {
		k = 1
	}
	for j := k; j >= 1; j-- {
		kept, err := d.Tasks.AttemptOutputs(task, j)
		if err != nil {
			return false, err
		}
		for _, o := range kept {
			if o.Text == string(out) {
				return false, nil
			}
		}
	}
	return true, d.Tasks.PutAttemptFile(ctx, task, k, worktree.OutputFileOf(ct.Role), out, nil)
}

// roleOutput is the report role kept for attempt k (the attempt's single
// output.md when it was kept before roles had their own).
func (d Deps) roleOutput(task string, k int, role string) ([]byte, bool, error) {
	b, ok, err := d.Tasks.AttemptFile(task, k, worktree.OutputFileOf(role))
	if err != nil || ok {
		return b, ok, err
	}
	return d.Tasks.AttemptFile(task, k, worktree.OutputFile)
}

// NewRole keeps the worker's report under the task's current role, then
// clears it from the worktree, before the task is started again under
// another role: each role's output.md is its own.
func (d Deps) NewRole(ctx context.Context, task string) error {
	if _, err := d.CaptureOutput(ctx, task); err != nil {
		return err
	}
	return d.Tasks.ClearWorkerOutput(task)
}

// Refresh makes the current attempt's init.md tell the truth (the role,
// the plan-ready section, the scaffold actions logged so far), appending
// a turn when its newest one no longer does, and materializes it; a task
// whose attempt has no init.md yet is left as it is (nil).
func (d Deps) Refresh(ctx context.Context, task string) (*Attempt, error) {
	ct, err := d.Tasks.Contract(task)
	if err != nil || ct.Status != worktree.StatusOpen {
		return nil, err
	}
	k := max(ct.Attempt, 1)
	cur, ok, err := d.Tasks.AttemptFile(task, k, worktree.InitFile)
	if err != nil || !ok {
		return nil, err
	}
	bound, _ := d.Bound(ctx)
	return d.refresh(ctx, ct, k, bound, cur)
}

// AttemptFiles is one attempt's files as the task's ref keeps them.
type AttemptFiles struct {
	Attempt int    `json:"attempt"`
	Init    string `json:"init,omitempty"`
	// Outputs are the attempt's reports, one per role that wrote one;
	// Output is them together, each under a "## <role>" line.
	Outputs []worktree.RoleOutput `json:"outputs,omitempty"`
	Output  string                `json:"output,omitempty"`
	Verdict string                `json:"verdict,omitempty"` // the attempt's newest verdict, "phase RESULT"
}

// Show lists the task's attempts with their files and newest verdicts.
func (d Deps) Show(ctx context.Context, task string) ([]AttemptFiles, error) {
	ks, err := d.Tasks.Attempts(task)
	if err != nil {
		return nil, err
	}
	if ks == nil {
		if _, err := d.Tasks.Contract(task); err != nil {
			return nil, err
		}
	}
	sort.Ints(ks)
	var out []AttemptFiles
	for _, k := range ks {
		a := AttemptFiles{Attempt: k}
		if b, ok, err := d.Tasks.AttemptFile(task, k, worktree.InitFile); err != nil {
			return nil, err
		} else if ok {
			a.Init = string(b)
		}
		outs, err := d.Tasks.AttemptOutputs(task, k)
		if err != nil {
			return nil, err
		}
		a.Outputs = outs
		for _, o := range outs {
			if o.Role != "" {
				a.Output += "## " + o.Role + "\n\n"
			}
			a.Output += o.Text
			if !strings.HasSuffix(o.Text, "\n") {
				a.Output += "\n"
			}
		}
		if v, _, err := d.failed(ctx, task, k); err != nil {
			return nil, err
		} else if v.ID != "" {
			a.Verdict = v.Phase + " " + v.Result
		}
		out = append(out, a)
	}
	return out, nil
}

func orWorker(role string) string {
	if role == "" {
		return "worker"
	}
	return role
}
