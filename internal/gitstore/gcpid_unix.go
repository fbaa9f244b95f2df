//go:build unix

package gitstore

import (
	"errors"
	"syscall"
)

// processGone reports whether no process pid exists on this host.
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
