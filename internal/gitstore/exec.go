package gitstore

import (
	"context"
	"os"
	"os/exec"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// killWait is how long Wait waits for a cancelled command's output pipes
// after its process group was killed (or after it exited while a
// descendant still holds them) before closing them itself.
const killWait = 2 * time.Second

// Command is the one way gitstore starts a process that the caller waits
// for: name runs in a process group of its own, and when ctx is done the
// whole group — git and whatever git started (a transport helper, ssh, a
// local receive-pack or upload-pack and what they start) — is killed with
// SIGKILL, not only the direct child. Wait then returns within killWait
// even if something that escaped the group still holds the output pipes.
// On Linux the child is also killed when this process dies without
// cancelling (see dieWithParent).
//
// A group of its own also means a terminal's ^C reaches only this process,
// whose signal handler cancels the root ctx (cmd/git-ideate), and that
// git's children cannot read the terminal: a passphrase prompt of ssh
// needs an ssh agent (git's own credential prompt is off anyway,
// GIT_TERMINAL_PROMPT=0).
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	osproc.Group(cmd)
	dieWithParent(cmd.SysProcAttr)
	cmd.WaitDelay = killWait
	return cmd
}

// git builds a git command against this repository's common directory,
// bound to ctx through Command, that never prompts for credentials.
func (s *Store) git(ctx context.Context, args ...string) *exec.Cmd {
	s.flushNow() // git must see every object this Store wrote; a failure shows as git's own error
	cmd := Command(ctx, "git", append([]string{"--git-dir=" + s.repo.CommonDir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	return cmd
}

// detached builds a command that outlives its caller on purpose: it runs
// in a session of its own (no terminal signal reaches it, and no ctx
// cancels it), and the caller does not wait for it. Only background
// maintenance uses it: a repack or pack-refs killed half-way would leave
// temporary files and gain nothing, and it must not keep a short CLI call
// (or a hook under a deadline) alive until it ends.
func detached(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	osproc.Detach(cmd)
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
