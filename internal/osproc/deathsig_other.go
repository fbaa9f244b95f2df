//go:build !linux

package osproc

import (
	"os/exec"
	"syscall"
)

// DieWithParent: only Linux has a parent-death signal; KillGroupOnExit
// covers the others.
func DieWithParent(*exec.Cmd, syscall.Signal) {}
