//go:build !linux

package osproc

import "os/exec"

// DieWithParent: only Linux has a parent-death signal; KillGroupOnExit
// covers the others.
func DieWithParent(cmd *exec.Cmd) {}
