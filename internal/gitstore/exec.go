package gitstore

import (
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// killWait is how long Wait waits for a cancelled command's output pipes
// after its process group was killed (or after it exited while a
// descendant still holds them) before closing them itself.
const killWait = 2 * time.Second

// Command is the one way gitstore starts a process that the caller waits
// for and may stop: name runs in a process group of its own, killed whole
// (git, ssh, a transport helper) when ctx is done; Wait returns within
// killWait even if an escaped descendant holds the pipes. In a group of
// its own the child would outlive a group kill aimed at this process (a
// host killing a hook's group), so on Linux it dies with this process, by
// SIGTERM, on which git removes the locks it registered. A git that
// writes refs is not started so (see gitToEnd).
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	osproc.Group(cmd)
	osproc.DieWithParent(cmd, syscall.SIGTERM)
	cmd.WaitDelay = killWait
	return cmd
}

// gitToEnd runs a git that writes this repository's refs (update-ref,
// pack-refs) to its end whatever becomes of its caller, and returns its
// output: in a process group of its own, but killed neither when the
// caller's ctx ends nor when this process dies; a ctx already done starts
// nothing. git creates a lock file
// before it registers it for removal on a signal (tempfile.c opens, then
// activates), so a signal that lands in between (a parent-death SIGTERM
// arriving while the open runs; any SIGKILL) leaves the lock with nobody
// to remove it, and git never breaks a lock: every later write of that
// ref, of any ref for packed-refs.lock, fails until a person removes it.
// Seen under load when a sync was killed during its ref deletions; such a
// git is local and ends within milliseconds, its lock waits bounded by
// git's own timeouts. hold (may be nil) is passed to git as descriptor 3:
// a flocked file stays locked until git has ended.
func (s *Store) gitToEnd(ctx context.Context, stdin io.Reader, hold *os.File, args ...string) ([]byte, error) {
	if err := s.flushNow(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command("git", append([]string{"--git-dir=" + s.repo.CommonDir}, args...)...)
	osproc.Group(cmd)
	cmd.Env = gitEnv()
	cmd.Stdin = stdin
	if hold != nil && runtime.GOOS != "windows" { // which passes no open file; its children never died with it
		cmd.ExtraFiles = []*os.File{hold}
	}
	return cmd.CombinedOutput()
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
