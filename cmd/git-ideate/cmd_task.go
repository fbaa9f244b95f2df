package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/corecmd"
	"github.com/ideate/git-ideate/internal/gitstore"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/worktree"
)

// TaskCmd groups the commands over tasks' worktrees.
type TaskCmd struct {
	Start    TaskStartCmd    `cmd:"" help:"Claim a task's board item (with --item; through ideate.remote when set) and create, or reuse, the task's worktree at its base commit on a branch of its own. A start that died after its claim is taken up by the same holder's next start at once."`
	List     TaskListCmd     `cmd:"" help:"List tasks: worktree, state, and whether the claim they were started under still holds."`
	Scope    TaskScopeCmd    `cmd:"" help:"Print what a task's worktree changed against its base (committed and uncommitted) and the paths outside its scope."`
	Complete TaskCompleteCmd `cmd:"" help:"Complete a task: its worktree must hold no uncommitted change; the worktree is removed (its branch stays) and the board item completed."`
	Release  TaskReleaseCmd  `cmd:"" help:"Release a task's claim and remove its worktree, discarding uncommitted changes (its branch stays for the next holder)."`
	Abandon  TaskAbandonCmd  `cmd:"" help:"Abandon a task: release its claim, remove its worktree (discarding uncommitted changes) and mark it abandoned."`
	Attempt  TaskAttemptCmd  `cmd:"" help:"Open the task's attempt: write its init.md turn (plan-ready pointer, scaffold actions, memory, feedback on the failed attempt before) read-only into the worktree; after a failed last attempt, escalate instead (exit 1, ESCALATED)."`
	Feedback TaskFeedbackCmd `cmd:"" help:"Print the feedback on the task's failed attempt (the failing tests, reason classes, what to fix, what not to touch, its output.md) as the next attempt's init.md will hold it."`
	Show     TaskShowCmd     `cmd:"" help:"Print the task's attempts: each one's init.md, output.md and newest verdict, from the task's ref."`
}

// TaskStartCmd starts a task.
type TaskStartCmd struct {
	Task    string   `arg:"" help:"Task id as the plan names it (S1-01/T2)."`
	Item    string   `help:"Board item to claim for the task; without it no claim is taken." placeholder:"ID"`
	Human   string   `help:"Who claims (required with --item)."`
	Agent   string   `help:"Through which agent."`
	LeaseMs *int64   `name:"lease-ms" help:"Lease length in ms (default 4h)."`
	Base    string   `help:"Commit the worktree starts from (default HEAD; an open task keeps its own)." placeholder:"REV"`
	Attempt int      `help:"Attempt number, from 1 (default 1, or the open task's)." placeholder:"N"`
	Role    string   `help:"Dispatched role (red-worker, scaffolder, green-worker, …)."`
	Scope   []string `help:"Scope glob the task may change (repeatable; default: the task's Files: in the plan)." placeholder:"GLOB"`
	Test    []string `help:"Declared test id (repeatable; default: the task's tests in the story's plan.md)." placeholder:"ID"`
	planFlags
}

// taskOut is what the task commands print with --json.
type taskOut struct {
	MessageType string `json:"message_type"`
	*worktree.Task
	Notes []string `json:"notes,omitempty"`
}

func openTasks(env *Env) (*worktree.Manager, error) {
	g, err := env.Git()
	if err != nil {
		return nil, err
	}
	m := worktree.Open(g)
	m.Now = corecmd.Now
	m.Unarchive = func(ctx context.Context, ref string, path []string) (gitstore.Hash, error) {
		return board.Unarchive(ctx, g, ref, path)
	}
	return m, nil
}

// taskInPlan returns the task's scope (its Files:) and declared tests
// from the loaded sprint; ok is false when the plan holds no such task.
func taskInPlan(s *plan.Sprint, task string) (scope, tests []string, ok bool) {
	story, tk, found := strings.Cut(task, "/")
	if !found {
		return nil, nil, false
	}
	for _, sd := range s.StoryDirs {
		if sd.Story != story || sd.Tasks == nil {
			continue
		}
		for _, t := range sd.Tasks.Tasks {
			if t.ID != tk {
				continue
			}
			if sd.TestPlan != nil {
				for _, sec := range sd.TestPlan.Sections {
					if sec.Task == t.Num {
						for _, d := range sec.Tests {
							tests = append(tests, d.ID)
						}
					}
				}
			}
			return t.Files, tests, true
		}
	}
	return nil, nil, false
}

// planTasks lists the task references a sprint holds, for messages.
func planTasks(s *plan.Sprint) []string {
	var out []string
	for _, sd := range s.StoryDirs {
		if sd.Tasks == nil {
			continue
		}
		for _, t := range sd.Tasks.Tasks {
			out = append(out, sd.Story+"/"+t.ID)
		}
	}
	return out
}

// Run claims, then creates or reuses the worktree; a claim taken here is
// released again when the worktree cannot be made.
func (c *TaskStartCmd) Run(ctx context.Context, env *Env) error {
	t, notes, err := c.start(ctx, env)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, taskOut{MessageType: "task", Task: t, Notes: notes}, true)
	}
	verb := "created"
	if t.Reused {
		verb = "reused"
	}
	fmt.Fprintf(env.Out, "task %s: worktree %s at %s\n", t.Contract.Task, verb, t.Path)
	fmt.Fprintf(env.Out, "  branch %s, base %s, attempt %d", t.Branch, t.Base[:12], t.Attempt)
	if t.Role != "" {
		fmt.Fprintf(env.Out, ", role %s", t.Role)
	}
	fmt.Fprintln(env.Out)
	if t.Item != "" {
		fmt.Fprintf(env.Out, "  claim: item %s, token %d, %s\n", t.Item, t.Token, t.Holder)
	}
	fmt.Fprintf(env.Out, "  scope: %s\n  tests: %s\n", joinOrNone(t.Scope), joinOrNone(t.Tests))
	if t.Note != "" {
		notes = append(notes, t.Note)
	}
	for _, n := range notes {
		fmt.Fprintln(env.Out, "  note: "+n)
	}
	return nil
}

// start is the task start the CLI and the MCP tool share: the task with
// notes on what was taken from the plan or reused.
func (c *TaskStartCmd) start(ctx context.Context, env *Env) (*worktree.Task, []string, error) {
	m, err := openTasks(env)
	if err != nil {
		return nil, nil, err
	}
	if err := worktree.CheckTaskID(c.Task); err != nil {
		return nil, nil, err
	}
	in := worktree.StartInput{Task: c.Task, Attempt: c.Attempt, Role: c.Role, Base: c.Base, Scope: c.Scope, Tests: c.Test}
	var notes []string
	// Where a plan declares tasks, a task is one of them: an id it does not
	// hold would get a worktree, a branch and verdicts no gate can place.
	s, perr := loadPlan(ctx, env, c.planFlags)
	switch {
	case perr == nil && len(planTasks(s)) > 0:
		scope, tests, ok := taskInPlan(s, c.Task)
		if !ok {
			return nil, nil, apperr.New(apperr.NotFound, "the plan of sprint %d (%s) has no task %s; its tasks are %s: start one of them, or add the task to its story's tasks.md and run git ideate plan check",
				s.Number, s.Dir, c.Task, joinOrNone(planTasks(s)))
		}
		if len(c.Scope) == 0 && len(c.Test) == 0 {
			in.Scope, in.Tests = scope, tests
		}
	case perr == nil && len(c.Scope) == 0 && len(c.Test) == 0:
		notes = append(notes, fmt.Sprintf("no scope or tests from the plan: sprint %d declares no task", s.Number))
	case len(c.Scope) == 0 && len(c.Test) == 0:
		notes = append(notes, "no scope or tests from the plan: "+apperr.Message(perr))
	}
	var b *board.Store
	var claimed bool
	var claimNote string
	var token int64
	cur, _ := m.Contract(c.Task)
	if c.Item != "" {
		if c.Human == "" {
			return nil, nil, apperr.New(apperr.Schema, "--human is required with --item")
		}
		// With ideate.remote set the remote decides the claim, as it does
		// for `work claim`: a start that loses there leaves nothing here.
		if b, err = env.AuthBoard(""); err != nil {
			return nil, nil, err
		}
		who := board.Actor{Human: c.Human, Agent: c.Agent}
		in.Item, in.Holder = c.Item, who.String()
		claim := func(ctx context.Context) (int64, error) {
			mine := in
			note, err := claimForStart(ctx, m, b, c, who, &mine)
			if err != nil {
				return 0, err
			}
			claimed, claimNote, token = note == "", note, mine.Token
			return mine.Token, nil
		}
		if cur != nil && cur.Status == worktree.StatusOpen {
			if in.Token, err = claim(ctx); err != nil {
				return nil, nil, err
			}
		} else {
			// A new start: the worktree is made while the claim is
			// decided (worktree.StartInput.Claim).
			in.Claim = claim
		}
	}
	// A new role of an open task: the report in the worktree is the role
	// before's, kept under its name; the new role starts with none.
	newRole := cur != nil && cur.Status == worktree.StatusOpen && c.Role != "" && c.Role != cur.Role
	if newRole {
		if err := (revision.Deps{Tasks: m}).NewRole(ctx, c.Task); err != nil {
			return nil, nil, err
		}
	}
	t, err := m.Start(ctx, in)
	if claimNote != "" {
		notes = append(notes, claimNote)
	}
	if err != nil {
		if claimed {
			if _, rerr := b.Release(ctx, c.Item, token, "task start failed: "+apperr.Message(err)); rerr != nil {
				env.Warn("the claim on " + c.Item + " could not be released: " + apperr.Message(rerr))
			} else {
				_ = m.ForgetIntent(c.Task)
			}
		}
		return nil, nil, err
	}
	if c.Item != "" {
		// The contract now records the claim.
		_ = m.ForgetIntent(c.Task)
	}
	if newRole {
		// The attempt's init.md names the role now working, in the
		// worktree as on the ref.
		d, err := revisionFor(env, c.planFlags)
		if err != nil {
			return nil, nil, err
		}
		if a, err := d.Refresh(ctx, c.Task); err != nil {
			return nil, nil, err
		} else if a != nil && a.Created {
			notes = append(notes, fmt.Sprintf("init.md of attempt %d has a new turn for %s (%s)", a.Attempt, a.Role, a.Path))
		}
	}
	return t, notes, nil
}

// claimForStart takes the task's claim and sets in.Token. The intent
// written first lets the same holder's next start take up a claim this
// start made but did not live to record in a contract (killed between the
// two): that claim is renewed (through the remote, when one decides, which
// also publishes a claim the kill left unpushed) and reused. It returns a
// note when an existing claim is reused, "" for a new claim.
func claimForStart(ctx context.Context, m *worktree.Manager, b *board.Store, c *TaskStartCmd, who board.Actor, in *worktree.StartInput) (string, error) {
	pending, err := m.PendingIntent(c.Task)
	if err != nil {
		return "", err
	}
	if err := m.Intend(c.Task, c.Item, who.String(), corecmd.Now()); err != nil {
		return "", err
	}
	it, err := b.Claim(ctx, c.Item, who, c.LeaseMs)
	if err == nil {
		in.Token = it.Claim.ClaimToken
		return "", nil
	}
	if !apperr.Is(err, board.NotClaimable) {
		_ = m.ForgetIntent(c.Task)
		return "", err
	}
	v, gerr := b.Get(ctx, c.Item)
	if gerr != nil || v.Claim == nil || v.Claim.Holder != who {
		_ = m.ForgetIntent(c.Task)
		return "", err
	}
	cur, _ := m.Contract(c.Task)
	held := cur != nil && cur.Item == c.Item && cur.Token == v.Claim.ClaimToken
	if !held && !pending.Covers(c.Item, who.String(), v.Claim.AcquiredAt) {
		_ = m.ForgetIntent(c.Task)
		return "", err
	}
	if pending != nil {
		// Keep the older intent: it is the evidence for this claim.
		if err := m.Intend(c.Task, c.Item, who.String(), mustTime(pending.Since)); err != nil {
			return "", err
		}
	}
	if !held {
		renewed, rerr := b.Renew(ctx, c.Item, v.Claim.ClaimToken, c.LeaseMs)
		if rerr != nil {
			return "", rerr
		}
		in.Token = renewed.Claim.ClaimToken
		return "the item was claimed by " + who.String() + " for this task by a start that did not finish; taking that claim up", nil
	}
	in.Token = v.Claim.ClaimToken
	return "the item was already claimed by " + who.String() + " for this task; reusing that claim", nil
}

func mustTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func joinOrNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, " ")
}

// boardClaims answers worktree.ClaimChecker from the board.
type boardClaims struct {
	ctx context.Context
	b   *board.Store
}

func (c boardClaims) ClaimHeld(item string, token int64) (bool, string, error) {
	v, err := c.b.Get(c.ctx, item)
	if apperr.Is(err, apperr.NotFound) {
		return false, "the item is gone", nil
	}
	if err != nil {
		return false, "", err
	}
	switch {
	case v.Status != board.StatusInProgress || v.Claim == nil:
		return false, "the item is " + v.Status, nil
	case v.Claim.ClaimToken != token:
		return false, fmt.Sprintf("claimed again by %s (token %d)", v.Claim.Holder, v.Claim.ClaimToken), nil
	}
	if exp, err := time.Parse(time.RFC3339Nano, v.Claim.LeaseExpires); err == nil && !exp.After(corecmd.Now()) {
		return false, "the lease expired at " + v.Claim.LeaseExpires, nil
	}
	return true, "", nil
}

// TaskListCmd lists tasks.
type TaskListCmd struct {
	All  bool `help:"Include completed, released and abandoned tasks."`
	JSON bool `name:"json" help:"Print JSON."`
}

// Run lists.
func (c *TaskListCmd) Run(ctx context.Context, env *Env) error {
	tasks, err := listTasks(ctx, env, c.All)
	if err != nil {
		return err
	}
	if c.JSON {
		if tasks == nil {
			tasks = []worktree.Task{}
		}
		return corecmd.WriteJSON(env.Out, struct {
			MessageType string          `json:"message_type"`
			Tasks       []worktree.Task `json:"tasks"`
		}{"task_list", tasks}, true)
	}
	w := corecmd.NewBufWriter(env.Out)
	defer w.Flush()
	if len(tasks) == 0 {
		fmt.Fprintln(w, "(no tasks)")
	}
	for _, t := range tasks {
		claim := "unclaimed"
		switch {
		case t.Status == StatusEscalated && t.Claim == "released":
			claim = t.ClaimNote + ", claim released"
		case t.Status == StatusEscalated:
			claim = t.ClaimNote
		case t.Claim == "lost":
			claim = "CLAIM LOST: " + t.ClaimNote
		case t.Item != "":
			claim = fmt.Sprintf("item %s token %d", t.Item, t.Token)
		}
		fmt.Fprintf(w, "%-14s %-9s attempt %d %-13s %-8s %s  %s\n", t.Contract.Task, t.Status, t.Attempt, t.Role, t.Worktree, t.Path, claim)
	}
	return nil
}

// TaskScopeCmd prints a task's diff scope.
type TaskScopeCmd struct {
	Task string `arg:"" help:"Task id."`
	JSON bool   `name:"json" help:"Print JSON (with each change's status, modes and whether it is committed)."`
}

// Run prints the changes and the offending paths.
func (c *TaskScopeCmd) Run(ctx context.Context, env *Env) error {
	m, err := openTasks(env)
	if err != nil {
		return err
	}
	ct, ch, err := m.Changes(ctx, c.Task)
	if err != nil {
		return err
	}
	rep, err := worktree.CheckScope(ct, ch, ct.Scope)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, struct {
			MessageType string `json:"message_type"`
			*worktree.ScopeReport
			Changes any  `json:"changes"`
			InScope bool `json:"in_scope"`
		}{"task_scope", rep, ch.List, rep.InScope()}, true)
	}
	w := corecmd.NewBufWriter(env.Out)
	defer w.Flush()
	outside := map[string]bool{}
	for _, p := range rep.Outside {
		outside[p] = true
	}
	for _, x := range ch.List {
		mark := "  "
		if outside[x.Path] || x.From != "" && outside[x.From] {
			mark = "! "
		}
		where := "uncommitted"
		if x.Committed && !x.Uncommitted {
			where = "committed"
		} else if x.Committed {
			where = "committed+uncommitted"
		}
		path := x.Path
		if x.From != "" {
			path = x.From + " -> " + x.Path
		}
		fmt.Fprintf(w, "%s%s %s  (%s)\n", mark, x.Status, path, where)
	}
	switch {
	case !rep.Declared:
		fmt.Fprintf(w, "task %s declares no scope: nothing can be judged in scope\n", c.Task)
	case len(rep.Outside) == 0:
		fmt.Fprintf(w, "%d changed paths, all inside the scope (%s)\n", len(rep.Changed), strings.Join(rep.Scope, " "))
	default:
		fmt.Fprintf(w, "%d of %d changed paths are outside the scope (%s)\n", len(rep.Outside), len(rep.Changed), strings.Join(rep.Scope, " "))
	}
	return nil
}

// taskClose is what complete, release and abandon share: the board verb on
// the task's claim, and closing the worktree.
type taskClose struct {
	Task string `arg:"" help:"Task id."`
	Note string `help:"Why (kept on the task and the board event)."`
	JSON bool   `name:"json" help:"Print JSON."`
}

func (c *taskClose) close(ctx context.Context, env *Env, status string, force bool) error {
	t, notes, err := c.do(ctx, env, status, force)
	if err != nil {
		return err
	}
	return c.print(env, t, status, notes)
}

// do is the close the CLI and the MCP tools share.
func (c *taskClose) do(ctx context.Context, env *Env, status string, force bool) (*worktree.Task, []string, error) {
	m, err := openTasks(env)
	if err != nil {
		return nil, nil, err
	}
	ct, err := m.Contract(c.Task)
	var notes []string
	if status != worktree.StatusCompleted && (apperr.Is(err, apperr.NotFound) || err == nil && ct.Status != worktree.StatusOpen) {
		// No open contract: a start may have claimed and died before
		// writing one.
		note, rerr := c.releaseUnrecorded(ctx, env, m)
		if rerr != nil {
			return nil, nil, rerr
		}
		if note != "" {
			notes = append(notes, note)
			if err != nil {
				// Nothing else of the task exists.
				return &worktree.Task{Contract: worktree.Contract{Task: c.Task}}, notes, nil
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	boardVerb := func() error {
		if ct.Item == "" || ct.Status != worktree.StatusOpen {
			return nil
		}
		b, err := env.AuthBoard("")
		if err != nil {
			return err
		}
		if status == worktree.StatusCompleted {
			_, err = b.Complete(ctx, ct.Item, ct.Token, c.Note)
		} else {
			_, err = b.Release(ctx, ct.Item, ct.Token, c.Note)
		}
		return err
	}
	var t *worktree.Task
	if status == worktree.StatusCompleted {
		// The worktree must be clean before the item is completed; the
		// completion must land before the worktree goes.
		if _, dirtyErr := m.Close(ctx, worktree.CloseInput{Task: c.Task, Status: status, Note: c.Note, Token: ct.Token, Force: false, DryRun: true}); dirtyErr != nil {
			return nil, nil, dirtyErr
		}
		if ct.Status == worktree.StatusOpen {
			if err := requirePass(ctx, env, m, c.Task); err != nil {
				return nil, nil, err
			}
		}
		if err := boardVerb(); err != nil {
			return nil, nil, err
		}
	} else if err := boardVerb(); err != nil {
		// A claim already lost cannot be released; the worktree still
		// goes.
		notes = append(notes, "claim not released: "+apperr.Message(err))
	}
	if t, err = m.Close(ctx, worktree.CloseInput{Task: c.Task, Status: status, Note: c.Note, Force: force}); err != nil {
		return nil, nil, err
	}
	return t, notes, nil
}

func (c *taskClose) print(env *Env, t *worktree.Task, status string, notes []string) error {
	if c.JSON {
		return corecmd.WriteJSON(env.Out, taskOut{MessageType: "task", Task: t, Notes: notes}, true)
	}
	if t.Path == "" {
		fmt.Fprintf(env.Out, "task %s had not been started\n", c.Task)
	} else {
		fmt.Fprintf(env.Out, "task %s %s; worktree %s removed, branch %s kept\n", c.Task, status, t.Path, t.Branch)
	}
	for _, n := range notes {
		fmt.Fprintln(env.Out, "  note: "+n)
	}
	return nil
}

// releaseUnrecorded releases the claim a start took and did not live to
// record in a contract (its intent says so), so the item is free at once.
// It returns a note saying so, or "" when there was no such claim.
func (c *taskClose) releaseUnrecorded(ctx context.Context, env *Env, m *worktree.Manager) (string, error) {
	pending, err := m.PendingIntent(c.Task)
	if err != nil || pending == nil {
		return "", err
	}
	b, err := env.AuthBoard("")
	if err != nil {
		return "", err
	}
	v, err := b.Get(ctx, pending.Item)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return "", err
	}
	note := ""
	if err == nil && v.Claim != nil && pending.Covers(pending.Item, v.Claim.Holder.String(), v.Claim.AcquiredAt) {
		if _, err := b.Release(ctx, pending.Item, v.Claim.ClaimToken, c.Note); err != nil {
			return "", err
		}
		note = fmt.Sprintf("the claim on item %s (token %d) that an unfinished start took is released", pending.Item, v.Claim.ClaimToken)
	}
	return note, m.ForgetIntent(c.Task)
}

// requirePass refuses to complete a task whose worktree HEAD has neither
// a GREEN PASS nor a final PASS verdict on the execution log: completing
// frees its dependants, and nothing may advance without a PASS.
func requirePass(ctx context.Context, env *Env, m *worktree.Manager, task string) error {
	_, ch, err := m.Changes(ctx, task)
	if err != nil {
		return err
	}
	x, err := env.Exec()
	if err != nil {
		return err
	}
	head := ch.Head.String()
	for _, phase := range []string{"final", "green"} {
		v, found, err := x.Latest(ctx, task, phase, head)
		if err != nil {
			return err
		}
		if found && v.Result == execlog.PASS {
			return nil
		}
	}
	why := "no GREEN verdict at all"
	if v, found, err := x.Latest(ctx, task, "green", ""); err == nil && found {
		why = fmt.Sprintf("its newest GREEN verdict is %s at %s", v.Result, shortID(v.Commit))
	}
	return apperr.New(gates.NoPass, "task %s has no GREEN PASS (nor final PASS) verdict at its HEAD %s (%s): run git ideate gate green --task %s, then git ideate gate final --task %s, before git ideate task complete",
		task, shortID(head), why, task, task)
}

// TaskCompleteCmd completes a task.
type TaskCompleteCmd struct{ taskClose }

// Run completes.
func (c *TaskCompleteCmd) Run(ctx context.Context, env *Env) error {
	return c.close(ctx, env, worktree.StatusCompleted, false)
}

// TaskReleaseCmd releases a task.
type TaskReleaseCmd struct{ taskClose }

// Run releases.
func (c *TaskReleaseCmd) Run(ctx context.Context, env *Env) error {
	return c.close(ctx, env, worktree.StatusReleased, true)
}

// TaskAbandonCmd abandons a task.
type TaskAbandonCmd struct{ taskClose }

// Run abandons.
func (c *TaskAbandonCmd) Run(ctx context.Context, env *Env) error {
	return c.close(ctx, env, worktree.StatusAbandoned, true)
}
