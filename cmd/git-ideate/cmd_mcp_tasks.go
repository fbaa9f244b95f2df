package main

import (
	"context"
	"os"

	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/plan"
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
	return m.List(ctx, all, boardClaims{ctx, b})
}

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
	fsRoot, root := planRoot(env, pf)
	if top, ok := g.Repo().MainWorkTree(); ok && pf.Dir == "" {
		fsRoot = top
	}
	load := func(ctx context.Context) (*plan.Sprint, error) {
		return plan.Load(ctx, os.DirFS(fsRoot), plan.Options{Root: root, Sprint: pf.Sprint})
	}
	return scaffold.TaskDeps{Git: g, Tasks: m, Exec: x, Plan: load}, nil
}
