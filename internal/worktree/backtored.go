package worktree

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// RoleRed is the role a task goes back to when its tests must change.
const RoleRed = "red-worker"

// KeptBranch is the branch that keeps a task's work of attempt k when
// the task goes back to RED.
func KeptBranch(task string, k int) string { return Branch(task) + "-green-" + strconv.Itoa(k) }

// BackToRed moves an open task to its next attempt as a RED one: its
// branch and worktree return to red (the verified RED commit, which the
// branch must hold) and its role becomes RoleRed. The tests are frozen
// after RED and a red-worker may change only tests and shims, so tests
// that must grow start again from the RED commit; the commit the branch
// held is kept on a branch of its own (kept, returned), from which GREEN
// takes its work back. Uncommitted changes in the worktree are refused
// (apperr.Conflict), as is a task already at its last attempt. A branch
// already at red only moves the attempt.
func (m *Manager) BackToRed(ctx context.Context, task string, red gitstore.Hash) (c *Contract, kept string, err error) {
	if err := CheckTaskID(task); err != nil {
		return nil, "", err
	}
	release, err := m.lock(ctx, task)
	if err != nil {
		return nil, "", err
	}
	defer release()
	tip, c, err := m.read(task)
	if err != nil {
		return nil, "", err
	}
	switch {
	case c == nil:
		return nil, "", apperr.New(apperr.NotFound, "no task %s has been started", task)
	case c.Status != StatusOpen:
		return nil, "", apperr.New(Closed, "task %s is %s; only an open task goes back to RED", task, c.Status)
	case c.Attempt >= 99:
		return nil, "", apperr.New(apperr.Schema, "task %s is at attempt %d, the last", task, c.Attempt)
	}
	if c.Attempt < 1 {
		c.Attempt = 1
	}
	head, err := m.git.Ref("refs/heads/" + c.Branch)
	if err != nil {
		return nil, "", err
	}
	if head != red {
		if ok, err := m.git.IsAncestor(red, head); err != nil {
			return nil, "", err
		} else if !ok {
			return nil, "", apperr.New(apperr.Conflict, "task %s's branch %s does not hold its verified RED commit %s; it cannot go back to it", task, c.Branch, red.String()[:12])
		}
		out, err := m.git.RunGit(ctx, c.Path, "status", "--porcelain", "--untracked-files=no")
		if err != nil {
			return nil, "", err
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			return nil, "", apperr.New(apperr.Conflict, "task %s's worktree holds uncommitted changes (%s); commit or discard them before it goes back to RED", task, strings.Join(strings.Fields(s), " "))
		}
		kept = KeptBranch(task, c.Attempt)
		if had, err := m.git.Ref("refs/heads/" + kept); err != nil {
			return nil, "", err
		} else if had != head {
			// Created, never moved: a branch of that name holding other
			// work is not overwritten.
			if err := m.git.UpdateRef(ctx, "refs/heads/"+kept, head, gitstore.ZeroHash); err != nil {
				return nil, "", err
			}
		}
		if _, err := m.git.RunGit(ctx, c.Path, "reset", "--hard", "--quiet", red.String()); err != nil {
			return nil, "", err
		}
	}
	c.Attempt++
	c.Role = RoleRed
	c.Note = fmt.Sprintf("back to RED at %s", red.String()[:12])
	if kept != "" {
		c.Note += fmt.Sprintf("; the work after it is kept on branch %s (%s)", kept, head.String()[:12])
	}
	if err := m.write(ctx, tip, c, fmt.Sprintf("task %s: attempt %d (%s), back to RED", task, c.Attempt, RoleRed)); err != nil {
		return nil, "", err
	}
	if err := m.writeCopy(c); err != nil {
		return nil, "", err
	}
	return c, kept, nil
}
