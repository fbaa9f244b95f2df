//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/corecmd"
)

// execFull replaces this process with the full binary: same process id,
// streams, environment and working directory, so a host's hook or MCP
// server sees one process and the exit status is the full binary's own.
func execFull(full string, args []string) error {
	err := syscall.Exec(full, append([]string{corecmd.FullName}, args...), os.Environ())
	return apperr.Wrap(corecmd.NotInstalled, err, "cannot run %s: %v", full, err)
}
