package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gates"
)

// GateCmd judges a task's committed worktree with one gate and stores the
// verdict.
type GateCmd struct {
	Gate    string `arg:"" enum:"red,scaffold,green,structure,final" help:"The gate: red, scaffold, green, structure or final."`
	Task    string `required:"" help:"Task whose worktree HEAD is judged (S1-01/T1)."`
	Attempt int    `help:"Attempt the verdict is stored under (default: the task's)." placeholder:"N"`
	Timeout int    `default:"600" help:"Seconds each test run may take before its tests are TIMEOUT." placeholder:"S"`
	planFlags
}

// gateOut is what gate prints with --json.
type gateOut struct {
	MessageType string `json:"message_type"`
	gates.Verdict
}

// Run judges, stores and prints the verdict: exit 0 on PASS, 3 on FAIL,
// 4 on UNVERIFIABLE.
func (c *GateCmd) Run(ctx context.Context, env *Env) error {
	reg, log, err := gatesFor(env, c.planFlags)
	if err != nil {
		return err
	}
	in := gates.Input{Task: c.Task, Attempt: c.Attempt, Dir: env.Dir, Timeout: time.Duration(c.Timeout) * time.Second}
	v, err := gates.Judge(ctx, reg, log, gates.Name(c.Gate), in)
	if err != nil {
		return err
	}
	if c.JSON {
		if err := corecmd.WriteJSON(env.Out, gateOut{MessageType: "gate_verdict", Verdict: v}, true); err != nil {
			return err
		}
	} else {
		line := v.String()
		if v.Commit != "" {
			line += fmt.Sprintf(" [task %s attempt %d commit %.12s]", v.Task, v.Attempt, v.Commit)
		}
		fmt.Fprintln(env.Out, line)
		for _, n := range v.Notes {
			fmt.Fprintln(env.Out, "  note: "+n)
		}
	}
	switch v.Result {
	case gates.PASS:
		return nil
	case gates.FAIL:
		return apperr.New(apperr.GateFail, "the %s gate fails task %s", c.Gate, c.Task)
	default:
		return apperr.New(apperr.Unverifiable, "the %s gate could not judge task %s", c.Gate, c.Task)
	}
}
