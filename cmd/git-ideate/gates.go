package main

import (
	"context"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/plan"
)

// Gates builds the gate registry every face asks (the gate command, the
// hooks): the task gates red, scaffold and green over this repository's
// tasks, the sprint plan pf names and the execution log, with the per-task
// lock Judge holds. It also returns the log the verdicts are stored in.
func (e *Env) Gates(pf planFlags) (*gates.Registry, gates.VerdictLog, error) {
	g, err := e.Git()
	if err != nil {
		return nil, nil, err
	}
	m, err := openTasks(e)
	if err != nil {
		return nil, nil, err
	}
	x, err := e.Exec()
	if err != nil {
		return nil, nil, err
	}
	log := gates.ExecLog(x)
	d := gates.Deps{Git: g, Tasks: m, Log: log,
		Plan: func(ctx context.Context) (*plan.Sprint, error) { return loadPlan(ctx, e, pf) }}
	reg := gates.NewRegistry()
	reg.Lock = gates.TaskLock(g)
	for _, x := range []struct {
		name gates.Name
		gate gates.Gate
	}{{"red", gates.Red(d)}, {"scaffold", gates.Scaffold(d)}, {"green", gates.Green(d)}} {
		if err := reg.Register(x.name, x.gate); err != nil {
			return nil, nil, err
		}
	}
	return reg, log, nil
}
