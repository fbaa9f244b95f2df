// Package osproc holds the few places where git ideate depends on the
// operating system, so every other package builds for Linux, macOS and
// Windows alike:
//
//   - process groups: Group starts a command in a group of its own and makes
//     its context's cancellation (exec.CommandContext) kill the whole group (on Unix a negative
//     pid; on Windows the process tree, through taskkill /T), calling first
//     what SetBeforeGroup installed (the CLI's signal handling);
//   - detached processes (Detach): a session of its own on Unix, a detached
//     process in a group of its own on Windows;
//   - advisory whole-file locks (Lock, Unlock): flock on Unix, LockFileEx on
//     Windows; ErrLocked when a non-waiting lock is held elsewhere;
//     LockContext waits for one until a context ends;
//   - a file's identity (Inode): device and inode on Unix; none on Windows,
//     where callers fall back to size and time, or to os.SameFile.
//
// Only Unix builds are tested (Linux here, macOS by its build); the
// Windows half is built and vetted by the tests, never run.
package osproc

import (
	"context"
	"errors"
	"os"
	"time"
)

// ErrLocked is returned by Lock without wait when another open file
// description holds the lock.
var ErrLocked = errors.New("osproc: the file is locked")

// LockMode says which lock Lock takes and whether it waits.
type LockMode int

// The lock modes, combined with |.
const (
	Shared    LockMode = 0
	Exclusive LockMode = 1
	NoWait    LockMode = 2
)

// LockContext takes the lock of mode on f, waiting while another open file
// description holds it (polling, the pause doubling up to 50 ms) until ctx
// is done, when it returns ctx.Err().
func LockContext(ctx context.Context, f *os.File, mode LockMode) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		if err := Lock(f, mode|NoWait); err != ErrLocked {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
