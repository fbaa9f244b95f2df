package main

import (
	"context"
	"path/filepath"

	"github.com/ideate/git-ideate/internal/corecmd"
	"github.com/ideate/git-ideate/internal/scaffold"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/retro"
	"github.com/ideate/git-ideate/internal/revision"
)

// backendFor opens the stores the MCP tools use, for this environment.
func backendFor(e *Env, session string) (*mcpserver.Backend, error) {
	// With ideate.remote set, the claim-lifecycle tools are
	// remote-authoritative, as the CLI verbs are.
	b, err := e.AuthBoard("")
	if err != nil {
		return nil, err
	}
	// Steering's gate is read again on every steering call, so turning it
	// on or off takes effect without a restart; a broken .ideate.json
	// only affects the tools that read it.
	g, err := e.Git()
	if err != nil {
		return nil, err
	}
	b.Session = session
	x, err := e.Exec()
	if err != nil {
		return nil, err
	}
	rec, err := e.Record()
	if err != nil {
		return nil, err
	}
	return &mcpserver.Backend{Record: rec, Board: b, Steering: e.SteeringNow, Session: session, Git: g, Exec: x,
		Gates: func(n int) (*gates.Registry, gates.VerdictLog, error) { return gatesFor(e, planFlags{Sprint: n}) },
		TaskDeps: func(n int) (gates.Deps, error) {
			d, _, err := gateDepsFor(e, planFlags{Sprint: n})
			return d, err
		},
		Plan:     func(ctx context.Context, n int) (*plan.Sprint, error) { return loadPlan(ctx, e, planFlags{Sprint: n}) },
		Revision: func(n int) (revision.Deps, error) { return revisionFor(e, planFlags{Sprint: n}) },
		Tasks:    mcpTasks{e},
		Scaffold: func(n int) (scaffold.TaskDeps, error) { return scaffoldDeps(e, planFlags{Sprint: n}) },
		Now:      corecmd.Now}, nil
}

// hookStoresFor opens the stores a hook handler uses, in the repository
// containing dir, for the host's session (when it names one).
func hookStoresFor(e *Env, dir, session string) (*hooks.Stores, error) {
	e.Dir = dir
	if session != "" {
		e.Session = session
	}
	rec, err := e.Record()
	if err != nil {
		return nil, err
	}
	b, err := e.Board()
	if err != nil {
		return nil, err
	}
	st := &hooks.Stores{Record: rec, Board: b}
	if t := e.Telemetry(); t != nil {
		st.Primed = t.PrimingRequested
	}
	// The execution gates: task contracts, the state directory, and the
	// standards of the plan in the main working tree (a sub-agent's
	// directory is its task's worktree).
	g, err := e.Git()
	if err != nil {
		return nil, err
	}
	tasks, err := openTasks(e)
	if err != nil {
		return nil, err
	}
	st.Tasks, st.StateDir, st.Top = tasks, g.Repo().StateDir(), g.Repo().WorkTree
	if cd := g.Repo().CommonDir; filepath.Base(cd) == ".git" {
		st.Top = filepath.Dir(cd)
	}
	// A green-worker's frozen files: what the newest red PASS judged.
	st.Git = g
	st.RedCommit = func(ctx context.Context, task string) (string, bool, error) {
		_, log, err := gatesFor(e, planFlags{})
		if err != nil {
			return "", false, err
		}
		return log.LatestPass(ctx, task, "red")
	}
	st.CaptureOutput = func(ctx context.Context, task string) (bool, error) {
		return revision.Deps{Tasks: tasks}.CaptureOutput(ctx, task)
	}
	st.Escalations = func(ctx context.Context, n int) ([]string, error) {
		d, err := revisionFor(e, planFlags{})
		if err != nil {
			return nil, err
		}
		return d.PrimeLines(ctx, n)
	}
	st.Retro = func(ctx context.Context) (*retro.Report, error) {
		log, err := e.Exec()
		if err != nil {
			return nil, err
		}
		// Priming reads at most the newest 2000 records for conflicts.
		rep, err := retro.Load(ctx, retro.Sources{Exec: log, Record: rec, RecordScan: 2000}, retro.LastPlanning)
		return &rep, err
	}
	st.Standards = func(ctx context.Context) (*plan.Standards, error) {
		s, err := plan.LoadDir(ctx, st.Top, plan.Options{})
		if err != nil {
			return nil, err
		}
		return s.Standards, nil
	}
	return st, nil
}
