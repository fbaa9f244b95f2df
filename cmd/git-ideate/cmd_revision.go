package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"strings"
	"sync"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/memory"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/worktree"
)

// TaskAttemptCmd opens a task's attempt.
type TaskAttemptCmd struct {
	Task string `arg:"" help:"Task id (S1-01/T2)."`
	planFlags
}

// TaskFeedbackCmd prints the feedback on a failed attempt.
type TaskFeedbackCmd struct {
	Task string `arg:"" help:"Task id (S1-01/T2)."`
	planFlags
}

// TaskShowCmd prints a task's attempts.
type TaskShowCmd struct {
	Task string `arg:"" help:"Task id (S1-01/T2)."`
	planFlags
}

// EscalationsCmd lists the escalations (and runs the no-progress guard).
type EscalationsCmd struct {
	CheckWave int `name:"check-wave" help:"First run the no-progress guard on wave N: every task of it passed GREEN but no new plan-ready box was ticked → a no-progress escalation (hard stop)." placeholder:"N"`
	Limit     int `help:"Only the newest N escalations (0: all)." placeholder:"N"`
	planFlags
}

// revisionFor builds the revision loop over this repository: the task
// contracts, the execution log, the board (its dependency graph), the
// sprint's plan in the main working tree (read once per call), the
// attempt bound of .ideate.json, the role-scoped memory for init.md.
func revisionFor(e *Env, pf planFlags) (revision.Deps, error) {
	m, err := openTasks(e)
	if err != nil {
		return revision.Deps{}, err
	}
	x, err := e.Exec()
	if err != nil {
		return revision.Deps{}, err
	}
	b, err := e.Board()
	if err != nil {
		return revision.Deps{}, err
	}
	c, err := e.Config()
	if err != nil {
		return revision.Deps{}, err
	}
	g, err := e.Git()
	if err != nil {
		return revision.Deps{}, err
	}
	fsRoot, loadEach, err := taskPlan(e, g, pf)
	if err != nil {
		return revision.Deps{}, err
	}
	var once sync.Once
	var s *plan.Sprint
	var serr error
	load := func(ctx context.Context) (*plan.Sprint, error) {
		once.Do(func() { s, serr = loadEach(ctx) })
		return s, serr
	}
	// The role's lessons from docs/agents/memory.md in the main working
	// tree (where the archivist and the human keep them).
	mem := func(ctx context.Context, role string) ([]string, error) { return memory.ForRole(ctx, fsRoot, role) }
	return revision.Deps{Tasks: m, Exec: x, Board: b, Plan: load, MaxAttempts: c.MaxAttempts, Memory: mem, Now: corecmd.Now}, nil
}

type attemptOut struct {
	MessageType string `json:"message_type"`
	*revision.Attempt
}

// Run opens the attempt and prints its init.md; an exhausted task prints
// its escalation and fails with ESCALATED.
func (c *TaskAttemptCmd) Run(ctx context.Context, env *Env) error {
	if err := worktree.CheckTaskID(c.Task); err != nil {
		return err
	}
	d, err := revisionFor(env, c.planFlags)
	if err != nil {
		return err
	}
	a, err := d.Open(ctx, c.Task)
	if err != nil {
		return err
	}
	if c.JSON {
		if err := corecmd.WriteJSON(env.Out, attemptOut{MessageType: "task_attempt", Attempt: a}, true); err != nil {
			return err
		}
	} else if a.Escalation != nil {
		printEscalation(env, *a.Escalation)
	} else {
		verb := "opened"
		if !a.Created {
			verb = "is open"
		}
		if r := a.Respawn; r != nil {
			fmt.Fprintf(env.Out, "task %s: %s implicates task %s only, and its findings are fixable: %s is re-spawned (exec %s)\n", r.Judged, r.Verdict, r.Task, r.Task, r.Logged)
		}
		fmt.Fprintf(env.Out, "task %s: attempt %d of %d %s (turn %d); init.md at %s\n\n%s", a.Task, a.Attempt, a.Max, verb, a.Turn, a.Path, a.Text)
	}
	if a.Escalation != nil {
		return apperr.New(revision.Escalated, "task %s is escalated (%s, %s): %s", c.Task, a.Escalation.Class, a.Escalation.Decision, a.Escalation.Summary)
	}
	return nil
}

type feedbackOut struct {
	MessageType string `json:"message_type"`
	*revision.Feedback
}

// Run prints the feedback the next attempt would get.
func (c *TaskFeedbackCmd) Run(ctx context.Context, env *Env) error {
	if err := worktree.CheckTaskID(c.Task); err != nil {
		return err
	}
	d, err := revisionFor(env, c.planFlags)
	if err != nil {
		return err
	}
	if _, err := d.CaptureOutput(ctx, c.Task); err != nil {
		return err
	}
	fb, err := d.Feedback(ctx, c.Task)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, feedbackOut{MessageType: "task_feedback", Feedback: fb}, true)
	}
	_, err = fmt.Fprint(env.Out, fb.Text)
	return err
}

type showOut struct {
	MessageType string                  `json:"message_type"`
	Task        string                  `json:"task"`
	Attempts    []revision.AttemptFiles `json:"attempts"`
}

// Run prints each attempt's init.md and output.md.
func (c *TaskShowCmd) Run(ctx context.Context, env *Env) error {
	if err := worktree.CheckTaskID(c.Task); err != nil {
		return err
	}
	d, err := revisionFor(env, c.planFlags)
	if err != nil {
		return err
	}
	as, err := d.Show(ctx, c.Task)
	if err != nil {
		return err
	}
	if c.JSON {
		if as == nil {
			as = []revision.AttemptFiles{}
		}
		return corecmd.WriteJSON(env.Out, showOut{MessageType: "task_attempts", Task: c.Task, Attempts: as}, true)
	}
	if len(as) == 0 {
		fmt.Fprintf(env.Out, "task %s has no attempt files yet (git ideate task attempt %s opens one)\n", c.Task, c.Task)
		return nil
	}
	for _, a := range as {
		v := a.Verdict
		if v == "" {
			v = "no verdict"
		}
		fmt.Fprintf(env.Out, "=== attempt %d (%s)\n--- init.md\n%s", a.Attempt, v, a.Init)
		if len(a.Outputs) == 0 {
			fmt.Fprintln(env.Out, "--- output.md: none")
		}
		for _, o := range a.Outputs {
			if o.Role != "" {
				fmt.Fprintf(env.Out, "--- output.md (%s)\n%s", o.Role, o.Text)
			} else {
				fmt.Fprintf(env.Out, "--- output.md\n%s", o.Text)
			}
			if !strings.HasSuffix(o.Text, "\n") {
				fmt.Fprintln(env.Out)
			}
		}
	}
	return nil
}

type escalationsOut struct {
	MessageType string                `json:"message_type"`
	Progress    *revision.Progress    `json:"progress,omitempty"`
	Escalations []revision.Escalation `json:"escalations"`
}

// Run lists the escalations, newest first, after the no-progress guard
// when asked.
func (c *EscalationsCmd) Run(ctx context.Context, env *Env) error {
	if c.Limit < 0 {
		return apperr.New(apperr.Schema, "--limit must be 0 (all) or more")
	}
	d, err := revisionFor(env, c.planFlags)
	if err != nil {
		return err
	}
	var p *revision.Progress
	if c.CheckWave != 0 {
		if p, err = d.CheckWave(ctx, c.CheckWave); err != nil {
			return err
		}
	}
	es, err := d.Escalations(ctx, c.Limit)
	if err != nil {
		return err
	}
	if c.JSON {
		if err := corecmd.WriteJSON(env.Out, escalationsOut{MessageType: "escalations", Progress: p, Escalations: es}, true); err != nil {
			return err
		}
	} else {
		if p != nil {
			switch {
			case p.Stalled:
				fmt.Fprintf(env.Out, "wave %d: STALLED — every task passed GREEN, %d of %d plan-ready boxes ticked, %d before the wave\n", p.Wave, p.Ticked, p.Boxes, p.Baseline)
			case len(p.Waiting) > 0:
				fmt.Fprintf(env.Out, "wave %d: %d of %d tasks passed GREEN; waiting: %s\n", p.Wave, len(p.Passed), len(p.Tasks), strings.Join(p.Waiting, ", "))
			default:
				fmt.Fprintf(env.Out, "wave %d: progress — %d of %d plan-ready boxes ticked, %d before the wave\n", p.Wave, p.Ticked, p.Boxes, p.Baseline)
			}
		}
		if len(es) == 0 {
			fmt.Fprintln(env.Out, "no escalations")
		}
		for _, e := range es {
			printEscalation(env, e)
		}
	}
	if p != nil && p.Stalled {
		return apperr.New(revision.Escalated, "wave %d stalled: it passed its gates and ticked no new plan-ready box (no-progress, hard stop)", p.Wave)
	}
	return nil
}

func printEscalation(env *Env, e revision.Escalation) {
	fmt.Fprintf(env.Out, "%s %s %s — %s\n", e.At, e.Class, e.Decision, e.Summary)
	if e.Verdict != "" {
		fmt.Fprintf(env.Out, "  verdict: %s\n", e.Verdict)
	}
	if len(e.Failing) > 0 {
		fmt.Fprintf(env.Out, "  failing: %s\n", strings.Join(e.Failing, ", "))
	}
	if e.Graph != "" {
		fmt.Fprintf(env.Out, "  graph: %s\n", e.Graph)
	}
	if len(e.Kept) > 0 {
		fmt.Fprintf(env.Out, "  kept: %s\n", strings.Join(e.Kept, ", "))
	}
	for _, ev := range e.Evidence {
		fmt.Fprintf(env.Out, "  evidence: %s\n", ev)
	}
}
