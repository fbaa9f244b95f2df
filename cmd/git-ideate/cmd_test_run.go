package main

import (
	"context"
	"github.com/ideate/git-ideate/internal/corecmd"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
)

// TestRunCmd runs a task's declared tests in its worktree.
type TestRunCmd struct {
	Task    string `required:"" help:"Task whose declared tests run, in its worktree."`
	Label   string `default:"run" help:"What the run is for (base, red, green, …), kept with the recorded run."`
	Attempt int    `help:"Attempt the run is recorded under (default: the task's)." placeholder:"N"`
	Timeout int    `default:"600" help:"Seconds before the run is killed (its tests are then TIMEOUT)." placeholder:"S"`
	planFlags
}

// testRunOut is what test run prints.
type testRunOut struct {
	MessageType string `json:"message_type"`
	*gates.TestRunResult
}

// Run picks the runner of standards.md that matches the declared tests'
// files, runs them in the task's worktree and prints the report (see
// gates.TestRun: a run of committed work is recorded for the gates).
func (c *TestRunCmd) Run(ctx context.Context, env *Env) error {
	d, _, err := gateDepsFor(env, c.planFlags)
	if err != nil {
		return err
	}
	res, runErr := gates.TestRun(ctx, d, gates.TestRunInput{Task: c.Task, Label: c.Label, Attempt: c.Attempt,
		Timeout: time.Duration(c.Timeout) * time.Second})
	if res == nil {
		return runErr
	}
	if werr := corecmd.WriteJSON(env.Out, testRunOut{MessageType: "test_run", TestRunResult: res}, true); werr != nil {
		return werr
	}
	return runErr
}
