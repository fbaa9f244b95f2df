package gitstore

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
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
// pack-refs) to its end whatever becomes of its caller (runToEnd), and
// returns its output; a ctx already done starts nothing. git creates a
// lock file before it registers it for removal on a signal (tempfile.c
// opens, then activates), so a signal that lands in between (a
// parent-death SIGTERM arriving while the open runs; any SIGKILL) leaves
// the lock with nobody to remove it, and git never breaks a lock: every
// later write of that ref, of any ref for packed-refs.lock, fails until a
// person removes it. Seen under load when a sync was killed during its
// ref deletions. hold (may be nil) is passed to git as descriptor 3: a
// flocked file stays locked until git has ended.
func (s *Store) gitToEnd(ctx context.Context, stdin io.Reader, hold *os.File, args ...string) ([]byte, error) {
	if err := s.flushNow(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := commandToEnd(append([]string{"--git-dir=" + s.repo.CommonDir}, args...)...)
	cmd.Stdin = stdin
	if hold != nil && runtime.GOOS != "windows" { // which passes no open file; its children never died with it
		cmd.ExtraFiles = []*os.File{hold}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := runToEnd(ctx, cmd)
	return out.Bytes(), err
}

// commandToEnd builds a git that writes refs (here or in a repository on
// this machine) and must run to its end: in a process group of its own,
// with no parent-death signal, so neither its caller's death nor a group
// kill aimed at its caller reaches it.
func commandToEnd(args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	osproc.Group(cmd)
	cmd.Env = gitEnv()
	return cmd
}

// runToEnd starts cmd (commandToEnd) and waits for it. Such a git ends
// within milliseconds; only once ctx has been done for toEndGrace (a hook
// of the repository hanging: a reference-transaction hook, a remote's
// pre-receive) is its group killed.
func runToEnd(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-done:
		return err
	case <-time.After(toEndGrace):
		_ = osproc.KillGroup(cmd.Process)
		return <-done
	}
}

// toEndGrace is how long runToEnd lets a git run on once its caller has
// given up.
const toEndGrace = 10 * time.Second

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

// ReceivePack runs `git receive-pack path` for a repository on this
// machine with request on its standard input and returns its output (the
// ref list, then its report). It writes that repository's refs, so it
// runs to its end (runToEnd): a receive-pack signalled while it makes a
// ref's lock leaves the lock in the remote, which then refuses every
// later push of that ref.
func ReceivePack(ctx context.Context, path string, request []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := commandToEnd("receive-pack", path)
	cmd.Stdin = bytes.NewReader(request)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := runToEnd(ctx, cmd); err != nil {
		return out.Bytes(), &apperr.Error{Code: GitFailed, Msg: "git receive-pack failed: " + firstLine(errb.String(), err), Err: err}
	}
	return out.Bytes(), nil
}
