package gates

import (
	"context"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/testrun"
)

// TestRunInput is one run of a task's declared tests (`git ideate test
// run`, MCP test_run).
type TestRunInput struct {
	Task    string
	Label   string // what the run is for (base, red, green, …); "" is "run"
	Attempt int    // the attempt it is recorded under; 0: the contract's
	Timeout time.Duration
}

// TestRunResult is a run of a task's declared tests and whether it was
// recorded on the task's ref.
type TestRunResult struct {
	Task     string          `json:"task"`
	Attempt  int             `json:"attempt"`
	Commit   string          `json:"commit"`
	Label    string          `json:"label"`
	Recorded bool            `json:"recorded"`
	Note     string          `json:"note,omitempty"`
	ExitCode int             `json:"exit_code"`
	Report   *testrun.Report `json:"report"`
}

// TestRun runs the task's declared tests in its worktree with the runner
// of the sprint's standards.md that covers them. A run of a worktree with
// no uncommitted change is recorded on the task's ref, keyed by (task,
// attempt, HEAD), for the gates to compare against; a run of uncommitted
// work is returned only (no commit names what ran), and the result says
// why in Note. The error is the run's own (a timeout, a runner that could
// not start) when a result exists, else the reason there is none.
func TestRun(ctx context.Context, d Deps, in TestRunInput) (*TestRunResult, error) {
	if d.Tasks == nil || d.Git == nil || d.Plan == nil {
		return nil, apperr.New(apperr.Internal, "test run needs the tasks, the repository and the plan")
	}
	ct, err := d.Tasks.Contract(in.Task)
	if err != nil {
		return nil, err
	}
	if len(ct.Tests) == 0 {
		return nil, apperr.New(apperr.Schema, "task %s declares no tests", in.Task)
	}
	if in.Attempt < 0 || in.Attempt > 99 {
		return nil, apperr.New(apperr.Schema, "attempt must be 1..99, not %d", in.Attempt)
	}
	s, err := d.Plan(ctx)
	if err != nil {
		return nil, err
	}
	res, runErr := RunTask(ctx, s.Standards, ct.Path, ct.Tests, RunOptions{Timeout: in.Timeout})
	if res == nil {
		return nil, runErr
	}
	out := &TestRunResult{Task: in.Task, Attempt: ct.Attempt, Label: in.Label, ExitCode: res.ExitCode, Report: res.Report}
	if out.Label == "" {
		out.Label = "run"
	}
	if in.Attempt != 0 {
		out.Attempt = in.Attempt
	}
	ch, cerr := d.Git.WorktreeChanges(ctx, ct.BaseHash(), ct.Path)
	switch {
	case cerr != nil:
		out.Note = "not recorded: " + apperr.Message(cerr)
	case uncommitted(ch):
		out.Note = "not recorded: the worktree has uncommitted changes, so no commit names what ran"
		out.Commit = ch.Head.String()
	case res.Report == nil:
		out.Note = "not recorded: no report"
	default:
		out.Commit = ch.Head.String()
		if _, err := d.Tasks.PutRun(ctx, in.Task, out.Attempt, ch.Head, out.Label, res.Report); err != nil {
			return nil, err
		}
		out.Recorded = true
	}
	return out, runErr
}

// uncommitted reports whether any change of ch is not committed.
func uncommitted(ch *gitstore.Changes) bool {
	for _, x := range ch.List {
		if x.Uncommitted {
			return true
		}
	}
	return false
}
