package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/fsmonitor"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/worktree"
)

// FsmonitorCmd serves a task worktree's file-system monitor. It is hidden:
// `task start` runs it, detached, from this same binary.
type FsmonitorCmd struct {
	Worktree string        `required:"" help:"The task worktree to watch." placeholder:"DIR"`
	Base     string        `required:"" help:"The commit the seed and the answers are against." placeholder:"HASH"`
	Idle     time.Duration `default:"30m" help:"End after this long without a query."`
}

// Run serves until the worktree is removed, the monitor is stopped or
// idle; a monitor already serving the worktree makes it return at once.
func (c *FsmonitorCmd) Run(ctx context.Context, env *Env) error {
	base, err := gitstore.ParseHash(c.Base)
	if err != nil {
		return apperr.Wrap(apperr.Schema, err, "--base %q is not a commit name", c.Base)
	}
	g, err := gitstore.Open(c.Worktree)
	if err != nil {
		return err
	}
	defer g.Close()
	err = worktree.RunMonitor(ctx, g, c.Worktree, base, c.Idle, nil)
	if errors.Is(err, fsmonitor.ErrRunning) {
		return nil
	}
	return err
}

// monitorCommand is the argv that serves a worktree's monitor: this
// binary's hidden fsmonitor command. None under `go test` (the test binary
// is not git-ideate) or with IDEATE_FSMONITOR=0.
func monitorCommand() []string {
	if os.Getenv("IDEATE_FSMONITOR") == "0" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(filepath.Base(exe), ".test") {
		return nil
	}
	return []string{exe, "fsmonitor"}
}
