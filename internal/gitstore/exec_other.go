//go:build !linux

package gitstore

import "syscall"

// dieWithParent has no portable equivalent outside Linux: a child started
// there outlives this process if it is killed without a chance to cancel.
func dieWithParent(*syscall.SysProcAttr) {}
