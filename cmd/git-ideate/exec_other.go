//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/corecmd"
)

// execFull runs the full binary as a child with this process's streams
// and exits with its status (a system without exec(2)).
func execFull(full string, args []string) error {
	c := exec.Command(full, args...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err == nil {
		os.Exit(0)
	}
	return apperr.Wrap(corecmd.NotInstalled, err, "cannot run %s: %v", full, err)
}
