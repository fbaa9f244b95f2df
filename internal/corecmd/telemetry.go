package corecmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/telemetry"
)

// TelemetryCmd prints the report of this clone's telemetry counters.
type TelemetryCmd struct {
	JSON bool   `name:"json" help:"Print the summary as JSON."`
	Dir  string `help:"state directory (default: this clone's .git/ideate)" placeholder:"DIR"`
}

// Run folds the event file and prints every counter.
func (c *TelemetryCmd) Run(ctx context.Context, env *Env) error {
	dir, err := c.stateDir(env)
	if err != nil {
		return err
	}
	s, err := telemetry.Read(dir)
	if err != nil {
		return err
	}
	if s.BadLines > 0 {
		fmt.Fprintf(env.Err, "note: skipped %d unparseable line(s) in %s\n", s.BadLines, s.File)
	}
	if c.JSON {
		return WriteJSON(env.Out, s, true)
	}
	return s.WriteText(env.Out)
}

// stateDir is --dir (relative to the directory the command runs in, which
// must exist), else the repository's state directory (which need not
// exist yet: no events is an empty report).
func (c *TelemetryCmd) stateDir(env *Env) (string, error) {
	if c.Dir == "" {
		g, err := env.Git()
		if err != nil {
			return "", err
		}
		return g.Repo().StateDir(), nil
	}
	dir := c.Dir
	if !filepath.IsAbs(dir) && env.Dir != "" {
		dir = filepath.Join(env.Dir, dir)
	}
	fi, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		return "", apperr.New(apperr.Schema, "--dir %s does not exist", c.Dir)
	case err != nil:
		return "", apperr.Wrap(apperr.Schema, err, "--dir %s cannot be used: %v", c.Dir, err)
	case !fi.IsDir():
		return "", apperr.New(apperr.Schema, "--dir %s is not a directory", c.Dir)
	}
	return dir, nil
}
