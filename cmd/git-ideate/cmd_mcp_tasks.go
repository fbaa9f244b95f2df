package main

import (
	"context"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/revision"

	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/scaffold"
	"github.com/ideate/git-ideate/internal/worktree"
)

// mcpTasks gives the MCP server the task commands' own functions: a tool
// call runs what `git ideate task …` runs, in this process.
type mcpTasks struct{ env *Env }

var _ mcpserver.TaskVerbs = mcpTasks{}

func (m mcpTasks) Start(ctx context.Context, in mcpserver.TaskStart) (*worktree.Task, []string, error) {
	c := &TaskStartCmd{Task: in.Task, Item: in.Item, Human: in.Human, Agent: in.Agent, LeaseMs: in.LeaseMs, Base: in.Base,
		Attempt: in.Attempt, Role: in.Role, Scope: in.Scope, Test: in.Tests, planFlags: planFlags{Sprint: in.Sprint}}
	return c.start(ctx, m.env)
}

func (m mcpTasks) List(ctx context.Context, all bool) ([]worktree.Task, error) {
	return listTasks(ctx, m.env, all)
}

func (m mcpTasks) Close(ctx context.Context, task, status, note string) (*worktree.Task, []string, error) {
	c := &taskClose{Task: task, Note: note}
	return c.do(ctx, m.env, status, status != worktree.StatusCompleted)
}

// listTasks is `git ideate task list`'s listing.
func listTasks(ctx context.Context, env *Env, all bool) ([]worktree.Task, error) {
	m, err := openTasks(env)
	if err != nil {
		return nil, err
	}
	b, err := env.Board()
	if err != nil {
		return nil, err
	}
	tasks, err := m.List(ctx, all, boardClaims{ctx, b})
	if err != nil || len(tasks) == 0 {
		return tasks, err
	}
	// An open task whose current attempt was escalated shows as escalated:
	// its claim was released, and a human decides what comes next.
	x, err := env.Exec()
	if err != nil {
		return nil, err
	}
	es, err := x.List(ctx, execlog.Filter{Phase: revision.Phase})
	if err != nil {
		return nil, err
	}
	for i := range tasks {
		t := &tasks[i]
		for _, e := range es {
			if e.Task == t.Contract.Task && e.Attempt == t.Attempt && t.Status == worktree.StatusOpen {
				t.Status = StatusEscalated
				note := "escalated: " + e.Event + " (exec " + e.ID + ")"
				if t.Claim == "held" {
					// The escalation could not release it: say so, and how.
					t.ClaimNote = note + "; its claim is still held: git ideate task release " + t.Contract.Task
				} else {
					t.Claim, t.ClaimNote = "released", note
				}
			}
		}
	}
	return tasks, nil
}

// StatusEscalated is how the task lists show an open task whose current
// attempt was escalated.
const StatusEscalated = "escalated"

// scaffoldDeps is what `git ideate scaffold` reads and writes.
func scaffoldDeps(env *Env, pf planFlags) (scaffold.TaskDeps, error) {
	g, err := env.Git()
	if err != nil {
		return scaffold.TaskDeps{}, err
	}
	m, err := openTasks(env)
	if err != nil {
		return scaffold.TaskDeps{}, err
	}
	x, err := env.Exec()
	if err != nil {
		return scaffold.TaskDeps{}, err
	}
	_, load, err := taskPlan(env, g, pf)
	if err != nil {
		return scaffold.TaskDeps{}, err
	}
	return scaffold.TaskDeps{Git: g, Tasks: m, Exec: x, Plan: load}, nil
}
