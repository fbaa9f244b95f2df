package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/memory"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/scaffold"
	"github.com/ideate/git-ideate/internal/textfmt"
	"github.com/ideate/git-ideate/internal/worktree"
)

// The execution verbs: a task's worktree (start, list, complete, release,
// abandon), its attempts (attempt, feedback, show), the post-RED scaffold
// and the team's memory (add, check). Each calls what the CLI's command
// calls: the revision loop, scaffold and memory libraries directly, and
// the task commands' own functions through Backend.Tasks, which the
// composition root gives (they combine the board, the worktrees and the
// remote the way `git ideate task …` does).

// TaskVerbs are the task commands' functions, shared with the CLI.
type TaskVerbs interface {
	// Start is `git ideate task start`: the task, and notes on what was
	// taken from the plan or reused.
	Start(ctx context.Context, in TaskStart) (*worktree.Task, []string, error)
	// List is `git ideate task list` (all: closed tasks too).
	List(ctx context.Context, all bool) ([]worktree.Task, error)
	// Close is `git ideate task complete|release|abandon`: status is
	// worktree.StatusCompleted, StatusReleased or StatusAbandoned.
	Close(ctx context.Context, task, status, note string) (*worktree.Task, []string, error)
}

// TaskStart is what task_start takes (the CLI's task start flags).
type TaskStart struct {
	Task, Item, Human, Agent, Base, Role string
	LeaseMs                              *int64
	Attempt, Sprint                      int
	Scope, Tests                         []string
}

var (
	argTaskID = arg{"task", str, "The task as the plan names it (S1-01/T2)."}
	argBound  = arg{"bound", posInt, "Entries a role may hold (default 20)."}
)

func taskTools() []toolDef {
	return []toolDef{
		{name: "task_start", run: taskStart,
			desc: "Start a task: create (or reuse) its worktree at its base commit on a branch of its own, with its scope and declared tests from the plan (or as given); with item and actor_human, claim that board item for it first (through ideate.remote when set). Returns the worktree path, branch, attempt, scope, tests and claim token.",
			schema: obj([]string{"task"}, argTaskID, arg{"item", str, "Board item to claim for the task (work_list names them); needs actor_human."},
				argHuman, argAgent, argLease, arg{"base", str, "Commit the worktree starts from (default HEAD)."},
				arg{"attempt", posInt, "Attempt number (default 1, or the open task's)."},
				arg{"role", str, "Dispatched role: red-worker, scaffolder, green-worker, …"},
				arg{"scope", strArr, "Globs the task may change (default: the task's Files: in the plan)."},
				arg{"tests", strArr, "Declared test ids (default: the task's tests in the story's plan.md)."}, argSprint)},
		{name: "task_list", run: taskList, readOnly: true, sweeps: true,
			desc:   "The started tasks: worktree, status, attempt, role, and whether the claim each was started under still holds.",
			schema: obj(nil, arg{"all", boolean, "Include completed, released and abandoned tasks."})},
		{name: "task_complete", run: taskCloser(worktree.StatusCompleted),
			desc:   "Complete a task whose worktree holds no uncommitted change: its board item is completed, the worktree removed (the branch stays).",
			schema: obj([]string{"task"}, argTaskID, arg{"note", str, "What was done (kept on the task and the board event)."})},
		{name: "task_release", run: taskCloser(worktree.StatusReleased),
			desc:   "Release a task: its claim is given back and its worktree removed, uncommitted changes discarded (the branch stays for the next holder).",
			schema: obj([]string{"task"}, argTaskID, arg{"note", str, "Why (kept on the task and the board event)."})},
		{name: "task_abandon", run: taskCloser(worktree.StatusAbandoned),
			desc:   "Abandon a task: release its claim, remove its worktree (uncommitted changes discarded) and mark it abandoned.",
			schema: obj([]string{"task"}, argTaskID, arg{"note", str, "Why (kept on the task and the board event)."})},
		{name: "task_attempt", run: taskAttempt,
			desc:   "Open the task's attempt: write its init.md turn (plan-ready pointer, scaffold actions, memory, feedback on the failed attempt before) read-only into the worktree. After a failed last attempt it escalates instead (error ESCALATED).",
			schema: obj([]string{"task"}, argTaskID, argSprint)},
		{name: "task_feedback", run: taskFeedback,
			desc:   "The feedback on the task's failed attempt (failing tests, reason classes, what to fix and what not to touch, its output.md), as the next attempt's init.md will hold it; keeps the worktree's output.md on the task's ref first.",
			schema: obj([]string{"task"}, argTaskID, argSprint)},
		{name: "task_show", run: taskShow, readOnly: true,
			desc:   "The task's attempts from its ref: each one's init.md, output.md and newest verdict.",
			schema: obj([]string{"task"}, argTaskID, argSprint)},
		{name: "wave_check", run: waveCheck,
			desc:   "The no-progress guard on a wave (the CLI's escalations --check-wave): once every task of it has a GREEN PASS, more plan-ready boxes ticked than after the wave before is progress (recorded); none more is a stall, escalated as no-progress (hard stop). A wave with tasks still waiting is left alone. Returns the wave's tasks, ticks and any escalation.",
			schema: obj([]string{"wave"}, arg{"wave", posInt, "The wave (plan_show gives each task's)."}, argSprint)},
		{name: "scaffold", run: scaffoldRun,
			desc:   "The post-RED scaffold step for a task's worktree: delete the RED shims and write one stub per declared symbol (its body fails with SUB-AGENT-TODO), never touching a symbol with a body; Go written gofmt-clean, other languages through their formatter when one is on PATH (ruff/black, prettier, rustfmt); each action once on the execution log. Commits nothing.",
			schema: obj([]string{"task"}, argTaskID, arg{"attempt", posInt, "Attempt the actions are logged under (default: the task's)."}, argSprint)},
		{name: "memory_add", run: memoryAdd,
			desc: "Add one role-scoped lesson to docs/agents/memory.md (one or two lines, with its evidence). Refused when it would relax an invariant, repeats an entry or passes the role's bound.",
			schema: obj([]string{"role", "text", "evidence"}, arg{"role", str, "The role it is for (green-worker, red-worker, …, or all)."},
				arg{"text", str, "The lesson: one line, or two separated by a newline."},
				arg{"evidence", str, "Where it comes from: exec entry ids, record ids, commits."},
				arg{"date", str, "YYYY-MM-DD (default today, UTC)."}, argBound)},
		{name: "memory_check", run: memoryCheck, readOnly: true,
			desc:   "Check docs/agents/memory.md: its shape, dates, evidence, duplicates, bounds and entries that would relax an invariant. ok is true with findings listed; findings empty means clean.",
			schema: obj(nil, argBound)},
	}
}

func (b *Backend) tasks() (TaskVerbs, error) {
	if b.Tasks == nil {
		return nil, apperr.New(apperr.Internal, "this server cannot start or close tasks")
	}
	return b.Tasks, nil
}

type taskOut struct {
	OK bool `json:"ok"`
	*worktree.Task
	Notes []string `json:"notes,omitempty"`
}

func taskStart(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Task, Item, ActorHuman, ActorAgent, Base, Role string
		LeaseMs                                        *int64
		Attempt, Sprint                                int
		Scope, Tests                                   []string
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	tv, err := b.tasks()
	if err != nil {
		return nil, err
	}
	if a.Item != "" && a.ActorHuman == "" {
		return nil, apperr.New(apperr.Schema, "actor_human is required with item: say on whose behalf the item is claimed")
	}
	t, notes, err := tv.Start(ctx, TaskStart{Task: a.Task, Item: a.Item, Human: a.ActorHuman, Agent: a.ActorAgent, Base: a.Base, Role: a.Role,
		LeaseMs: a.LeaseMs, Attempt: a.Attempt, Sprint: a.Sprint, Scope: a.Scope, Tests: a.Tests})
	if err != nil {
		return nil, err
	}
	return taskOut{OK: true, Task: t, Notes: notes}, nil
}

func taskList(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ All bool }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	tv, err := b.tasks()
	if err != nil {
		return nil, err
	}
	ts, err := tv.List(ctx, a.All)
	if err != nil {
		return nil, err
	}
	if ts == nil {
		ts = []worktree.Task{}
	}
	return struct {
		OK    bool            `json:"ok"`
		Tasks []worktree.Task `json:"tasks"`
	}{true, ts}, nil
}

func taskCloser(status string) func(context.Context, *Backend, json.RawMessage) (any, error) {
	return func(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
		var a struct{ Task, Note string }
		if err := decodeSnake(raw, &a); err != nil {
			return nil, err
		}
		tv, err := b.tasks()
		if err != nil {
			return nil, err
		}
		t, notes, err := tv.Close(ctx, a.Task, status, a.Note)
		if err != nil {
			return nil, err
		}
		return taskOut{OK: true, Task: t, Notes: notes}, nil
	}
}

// revisionFor is the revision loop of the sprint a tool names, for a task
// id checked first (none: a tool of the whole sprint).
func (b *Backend) revisionFor(task string, sprint int) (revision.Deps, error) {
	if task != "" {
		if err := worktree.CheckTaskID(task); err != nil {
			return revision.Deps{}, err
		}
	}
	if b.Revision == nil {
		return revision.Deps{}, apperr.New(apperr.Internal, "this server has no revision loop")
	}
	return b.Revision(sprint)
}

// taskArgs are what the attempt tools take.
type taskArgs struct {
	Task   string
	Sprint int
}

func taskAttempt(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a taskArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	d, err := b.revisionFor(a.Task, a.Sprint)
	if err != nil {
		return nil, err
	}
	at, err := d.Open(ctx, a.Task)
	if err != nil {
		return nil, err
	}
	if e := at.Escalation; e != nil {
		return nil, apperr.New(revision.Escalated, "task %s is escalated (%s, %s): %s; the escalations tool lists it for the next planning session", a.Task, e.Class, e.Decision, e.Summary)
	}
	return struct {
		OK bool `json:"ok"`
		*revision.Attempt
	}{true, at}, nil
}

func taskFeedback(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a taskArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	d, err := b.revisionFor(a.Task, a.Sprint)
	if err != nil {
		return nil, err
	}
	if _, err := d.CaptureOutput(ctx, a.Task); err != nil {
		return nil, err
	}
	fb, err := d.Feedback(ctx, a.Task)
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		*revision.Feedback
	}{true, fb}, nil
}

func taskShow(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a taskArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	d, err := b.revisionFor(a.Task, a.Sprint)
	if err != nil {
		return nil, err
	}
	as, err := d.Show(ctx, a.Task)
	if err != nil {
		return nil, err
	}
	if as == nil {
		as = []revision.AttemptFiles{}
	}
	return struct {
		OK       bool                    `json:"ok"`
		Task     string                  `json:"task"`
		Attempts []revision.AttemptFiles `json:"attempts"`
	}{true, a.Task, as}, nil
}

func waveCheck(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Wave, Sprint int }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	d, err := b.revisionFor("", a.Sprint)
	if err != nil {
		return nil, err
	}
	p, err := d.CheckWave(ctx, a.Wave)
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		*revision.Progress
	}{true, p}, nil
}

func scaffoldRun(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Task            string
		Attempt, Sprint int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	if b.Scaffold == nil {
		return nil, apperr.New(apperr.Internal, "this server cannot scaffold")
	}
	d, err := b.Scaffold(a.Sprint)
	if err != nil {
		return nil, err
	}
	r, err := scaffold.RunTask(ctx, d, a.Task, a.Attempt)
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		*scaffold.TaskResult
	}{true, r}, nil
}

// workTop is the working tree the memory file is in.
func (b *Backend) workTop() (string, error) {
	if b.Git == nil || b.Git.Repo().WorkTree == "" {
		return "", apperr.New(apperr.NotARepo, "this repository has no working tree, so it has no %s", memory.File)
	}
	return b.Git.Repo().WorkTree, nil
}

func memoryAdd(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Role, Text, Evidence, Date string
		Bound                      int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	top, err := b.workTop()
	if err != nil {
		return nil, err
	}
	now := b.Now
	if now == nil {
		now = time.Now
	}
	e, err := memory.Add(ctx, top, memory.Entry{Role: a.Role, Text: a.Text, Evidence: a.Evidence, Date: a.Date}, memory.Options{Bound: a.Bound, Now: now})
	if err != nil {
		return nil, err
	}
	return struct {
		OK    bool         `json:"ok"`
		File  string       `json:"file"`
		Entry memory.Entry `json:"entry"`
	}{true, memory.File, e}, nil
}

func memoryCheck(_ context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Bound int }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	top, err := b.workTop()
	if err != nil {
		return nil, err
	}
	d, ok, err := memory.Read(top, a.Bound)
	if err != nil {
		return nil, err
	}
	fs := d.Findings
	if fs == nil {
		fs = []memory.Finding{}
	}
	return struct {
		OK       bool             `json:"ok"`
		File     string           `json:"file"`
		Exists   bool             `json:"exists"`
		Entries  int              `json:"entries"`
		Findings []memory.Finding `json:"findings"`
	}{true, memory.File, ok, len(d.Entries), fs}, nil
}

// notStarted is the library's answer about a task with no contract.
var notStarted = textfmt.Regexp(`^no task (\S+) has been started$`)

// nextStep is the sentence an MCP error adds to say what to do next,
// naming the tool that does it; "" when the error says so already.
func nextStep(tool string, err error) string {
	msg := apperr.Message(err)
	switch code := apperr.CodeOf(err); {
	case code == apperr.NotFound && notStarted().MatchString(msg):
		task := notStarted().FindStringSubmatch(msg)[1]
		return ` Start it with task_start {"task":"` + task + `","role":"…"} (scope and tests come from the plan), then retry ` + tool + `.`
	case code == apperr.GateFail && tool == "plan_import":
		return " Run plan_check, fix its findings in the plan files, and import again."
	case code == revision.Escalated:
		return ""
	}
	return ""
}
