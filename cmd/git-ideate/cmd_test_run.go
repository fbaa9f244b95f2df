package main

import (
	"context"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/testrun"
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
	MessageType string          `json:"message_type"`
	Task        string          `json:"task"`
	Attempt     int             `json:"attempt"`
	Commit      string          `json:"commit"`
	Label       string          `json:"label"`
	Recorded    bool            `json:"recorded"`
	Note        string          `json:"note,omitempty"`
	ExitCode    int             `json:"exit_code"`
	Report      *testrun.Report `json:"report"`
}

// Run picks the runner of standards.md that matches the declared tests'
// files, runs them in the task's worktree and prints the report. A run of
// a worktree without uncommitted changes is recorded on the task's ref,
// keyed by (task, attempt, HEAD), for the gates to compare against; a run
// of uncommitted work is printed only.
func (c *TestRunCmd) Run(ctx context.Context, env *Env) error {
	m, err := openTasks(env)
	if err != nil {
		return err
	}
	ct, err := m.Contract(c.Task)
	if err != nil {
		return err
	}
	if len(ct.Tests) == 0 {
		return apperr.New(apperr.Schema, "task %s declares no tests", c.Task)
	}
	s, err := loadPlan(ctx, env, c.planFlags)
	if err != nil {
		return err
	}
	res, runErr := gates.RunTask(ctx, s.Standards, ct.Path, ct.Tests, gates.RunOptions{Timeout: time.Duration(c.Timeout) * time.Second})
	if res == nil {
		return runErr
	}
	out := testRunOut{MessageType: "test_run", Task: c.Task, Attempt: ct.Attempt, Label: c.Label, ExitCode: res.ExitCode, Report: res.Report}
	if c.Attempt != 0 {
		out.Attempt = c.Attempt
	}
	g, _ := env.Git()
	ch, cerr := g.WorktreeChanges(ctx, ct.BaseHash(), ct.Path)
	switch {
	case cerr != nil:
		out.Note = "not recorded: " + apperr.Message(cerr)
	case hasUncommitted(ch):
		out.Note = "not recorded: the worktree has uncommitted changes, so no commit names what ran"
		out.Commit = ch.Head.String()
	case res.Report == nil:
		out.Note = "not recorded: no report"
	default:
		out.Commit = ch.Head.String()
		if _, err := m.PutRun(ctx, c.Task, out.Attempt, ch.Head, c.Label, res.Report); err != nil {
			return err
		}
		out.Recorded = true
	}
	if werr := writeJSON(env.Out, out, true); werr != nil {
		return werr
	}
	return runErr
}

func hasUncommitted(ch *gitstore.Changes) bool {
	for _, x := range ch.List {
		if x.Uncommitted {
			return true
		}
	}
	return false
}
