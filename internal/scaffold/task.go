package scaffold

import (
	"context"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/worktree"
)

// TaskDeps are what a task's scaffold run needs; the composition root
// builds them.
type TaskDeps struct {
	Git   *gitstore.Store
	Tasks *worktree.Manager
	Exec  *execlog.Log // nil: the actions are not logged
	Plan  func(ctx context.Context) (*plan.Sprint, error)
}

// TaskResult is a task's scaffold run: what Run did, where, and the log
// entries that hold it.
type TaskResult struct {
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	Dir     string `json:"dir"`
	Result
	Logged int `json:"logged"`
}

// RunTask scaffolds a started task's worktree from the plan's Symbols:
// and Files: for it and standards.md's markers (Run), then writes each
// action to the execution log: Phase "scaffold", Event the action
// (create, update, delete), the task and attempt, Paths [file], Detail
// the qualified symbol. It commits nothing: the post-planner reviews,
// finishes what was left undecided and commits.
func RunTask(ctx context.Context, d TaskDeps, task string, attempt int) (*TaskResult, error) {
	ct, err := d.Tasks.Contract(task)
	if err != nil {
		return nil, err
	}
	if attempt == 0 {
		attempt = ct.Attempt
	}
	sp, err := d.Plan(ctx)
	if err != nil {
		return nil, err
	}
	t := findTask(sp, task)
	if t == nil {
		return nil, apperr.New(apperr.NotFound, "the sprint's plan has no task %s", task)
	}
	in := Input{Dir: ct.Path, Declared: t.Symbols, Files: t.Files}
	if st := sp.Standards; st != nil {
		in.ShimMarker = st.ShimMarker
		for _, p := range st.StubMarkers {
			if p.Text != "" && in.StubMarker == "" {
				in.StubMarker = p.Text
			}
		}
	}
	if in.Paths, err = WorkTreeFiles(ctx, d.Git, ct.Path); err != nil {
		return nil, err
	}
	r, err := Run(ctx, in)
	if err != nil {
		return nil, err
	}
	out := &TaskResult{Task: task, Attempt: attempt, Dir: ct.Path, Result: *r}
	if d.Exec == nil {
		return out, nil
	}
	wave := 0
	for _, u := range plan.Schedule(sp) {
		if u.Task == t {
			wave = u.Wave
		}
	}
	for _, a := range r.Actions {
		e := execlog.Entry{Actor: "git-ideate scaffold", Sprint: sp.Number, Wave: wave, Task: task, Attempt: attempt,
			Phase: "scaffold", Event: a.Op, Paths: []string{a.Path}, Detail: a.Symbol}
		if _, err := d.Exec.Append(ctx, e); err != nil {
			return out, err
		}
		out.Logged++
	}
	return out, nil
}

// findTask is the plan's task for a reference (`S1-01/T2`).
func findTask(sp *plan.Sprint, task string) *plan.Task {
	story, tk, _ := strings.Cut(task, "/")
	for _, sd := range sp.StoryDirs {
		if sd.Story != story || sd.Tasks == nil {
			continue
		}
		for _, t := range sd.Tasks.Tasks {
			if t.ID == tk || "T"+strings.TrimLeft(strings.TrimPrefix(tk, "T"), "0") == t.ID {
				return t
			}
		}
	}
	return nil
}
