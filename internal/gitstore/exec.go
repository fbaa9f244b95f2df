package gitstore

import (
	"context"
	"os/exec"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// killWait is how long Wait waits for a cancelled command's output pipes
// after its process group was killed (or after it exited while a
// descendant still holds them) before closing them itself.
const killWait = 2 * time.Second

// Command is the one way gitstore starts a process that the caller waits
// for: name runs in a process group of its own, killed whole (git, ssh, a
// transport helper) when ctx is done; Wait returns within killWait even if
// an escaped descendant holds the pipes. In a group of its own the child
// would outlive a group kill aimed at this process (a host killing a hook's
// group), so on Linux it dies with this process: by SIGTERM, not SIGKILL,
// as git removes its lock files on SIGTERM, and a `git update-ref -d`
// killed outright leaves packed-refs.lock behind, which fails every later
// ref deletion until someone removes it.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	osproc.Group(cmd)
	osproc.DieWithParent(cmd, syscall.SIGTERM)
	cmd.WaitDelay = killWait
	return cmd
}

// git builds a git command against this repository's common directory
// (gitProc).
func (s *Store) git(ctx context.Context, args ...string) *exec.Cmd {
	s.flushNow() // git must see every object this Store wrote; a failure shows as git's own error
	return gitProc(ctx, "", append([]string{"--git-dir=" + s.repo.CommonDir}, args...)...)
}

// detached builds a command its caller does not wait for, in a session
// of its own: background maintenance, which must not keep a hook alive.
// When ctx ends first the whole group is killed.
func detached(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	osproc.Detach(cmd)
	cmd.Cancel = func() error { return osproc.KillGroup(cmd.Process) }
	return cmd
}

// sleep waits d, or until ctx is done, and returns ctx.Err() in that case.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
