//go:build !linux && !darwin

package confine

import (
	"os"
	"os/exec"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Available reports whether commands can be confined here: not on this
// system.
func Available() bool { return false }

// Mode names the confinement in force.
func Mode() string { return "none: no operating-system confinement on this system" }

// Enter cannot confine here: it runs nothing.
func Enter(rw []string, argv []string) error {
	return apperr.New(apperr.Unverifiable, "no operating-system confinement on this system, so the command is not run")
}

func becomeReaper() {}
func reapOrphans()  {}

func nlink(os.FileInfo) uint64 { return 1 }

// threadConfines: no thread can restrict itself here; the command is
// started through this binary's entry (Enter).
const threadConfines = false

func startRestricted(cmd *exec.Cmd, rw []string) error { return cmd.Start() }
