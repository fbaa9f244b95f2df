package main

import (
	"context"
	"fmt"

	"github.com/ideate/git-ideate/internal/gates"
)

// gatesFor builds the gate registry every face asks (the gate command; the
// hooks' stop gates): the task gates red, scaffold, green and structure and the final
// gate over gateDeps, with the per-task lock Judge holds and the plan-ready
// ticks after a GREEN PASS. It also returns the log the verdicts are
// stored in.
func gatesFor(e *Env, pf planFlags) (*gates.Registry, gates.VerdictLog, error) {
	d, pd, err := gateDepsFor(e, pf)
	if err != nil {
		return nil, nil, err
	}
	reg := gates.NewRegistry()
	reg.Lock = gates.TaskLock(d.Git)
	reg.Tick = func(ctx context.Context, task string) (string, error) {
		r, err := gates.Tick(ctx, pd, task)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("ticked %d of the task's %d plan-ready box(es) in %s", len(r.Ticked), r.Boxes, r.Path), nil
	}
	reg.Ready = func(ctx context.Context, v gates.Verdict) (string, error) {
		r, err := gates.WriteReady(ctx, pd, v)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("wrote task %s's %d box(es) to %s", v.Task, r.Boxes, r.Path), nil
	}
	for _, x := range []struct {
		name gates.Name
		gate gates.Gate
	}{{"red", gates.Red(d)}, {"scaffold", gates.Scaffold(d)}, {"green", gates.Green(d)}, {"structure", gates.Structure(d)}, {"final", gates.Final(gates.FinalDeps{PlanDeps: pd})}} {
		if err := reg.Register(x.name, x.gate); err != nil {
			return nil, nil, err
		}
	}
	return reg, d.Log, nil
}

// gateDepsFor is what the task gates and the plan's gates read: this
// repository's tasks, the sprint plan pf names and the execution log.
// Without --dir the plan is read from the main working tree (where the
// ticks are kept), also when called from inside a task's worktree.
func gateDepsFor(e *Env, pf planFlags) (gates.Deps, gates.PlanDeps, error) {
	g, err := e.Git()
	if err != nil {
		return gates.Deps{}, gates.PlanDeps{}, err
	}
	m, err := openTasks(e)
	if err != nil {
		return gates.Deps{}, gates.PlanDeps{}, err
	}
	x, err := e.Exec()
	if err != nil {
		return gates.Deps{}, gates.PlanDeps{}, err
	}
	fsRoot, load, err := taskPlan(e, g, pf)
	if err != nil {
		return gates.Deps{}, gates.PlanDeps{}, err
	}
	d := gates.Deps{Git: g, Tasks: m, Log: gates.ExecLog(x), Plan: load, Symbols: gates.ScaffoldSymbols(g)}
	pd := gates.PlanDeps{Git: g, Tasks: m, Exec: x, Plan: load, Root: fsRoot}
	return d, pd, nil
}
