package worktree

import (
	"context"
	"os"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/pathglob"
)

// Changes lists what the task's worktree changed against the task's base
// (committed and uncommitted; see gitstore.WorktreeChanges).
func (m *Manager) Changes(ctx context.Context, task string) (*Contract, *gitstore.Changes, error) {
	c, err := m.Contract(task)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(c.Path); err != nil {
		return c, nil, apperr.New(apperr.NotFound, "task %s has no worktree at %s", task, c.Path)
	}
	ch, err := m.git.WorktreeChanges(ctx, c.BaseHash(), c.Path)
	return c, ch, err
}

// ScopeReport is a diff checked against a scope.
type ScopeReport struct {
	Task    string   `json:"task"`
	Base    string   `json:"base"`
	Head    string   `json:"head"`
	Scope   []string `json:"scope"`
	Changed []string `json:"changed"`
	// Outside names every changed path no scope glob allows (both sides
	// of a rename count).
	Outside []string `json:"outside"`
	// Declared is false when the contract names no scope: nothing can be
	// judged in scope, and the report says so instead of passing.
	Declared bool `json:"declared"`
}

// InScope reports whether the task changed nothing outside its scope. It
// is false when no scope is declared.
func (r *ScopeReport) InScope() bool { return r.Declared && len(r.Outside) == 0 }

// Scope checks the task's changes against its contract's scope globs.
func (m *Manager) Scope(ctx context.Context, task string) (*ScopeReport, error) {
	c, ch, err := m.Changes(ctx, task)
	if err != nil {
		return nil, err
	}
	return CheckScope(c, ch, c.Scope)
}

// CheckScope checks changes against globs (the contract's scope, or
// another, e.g. RED's test-file globs).
func CheckScope(c *Contract, ch *gitstore.Changes, globs []string) (*ScopeReport, error) {
	set, err := pathglob.Compile(globs)
	if err != nil {
		return nil, err
	}
	r := &ScopeReport{Task: c.Task, Base: c.Base, Head: ch.Head.String(), Scope: nonNil(globs),
		Changed: ch.Paths(), Declared: len(globs) > 0}
	r.Outside = nonNil(set.Outside(r.Changed))
	return r, nil
}
