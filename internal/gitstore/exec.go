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

// ReceivePack runs `git receive-pack path` for a repository on this
// machine with request on its standard input and returns its output (the
// ref list, then its report). It writes that repository's refs, so it is
// not signalled with its caller as Command's processes are: a
// receive-pack signalled while it makes a ref's lock leaves the lock in
// the remote, which then refuses every later push of that ref. Its input
// is whole already, so it ends within milliseconds; only when ctx has
// been done for receivePackGrace (a hook of that repository hanging) is
// its group killed.
func ReceivePack(ctx context.Context, path string, request []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command("git", "receive-pack", path)
	osproc.Group(cmd)
	cmd.Env = gitEnv()
	cmd.Stdin = bytes.NewReader(request)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return nil, &apperr.Error{Code: GitFailed, Msg: "git receive-pack could not start: " + err.Error(), Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(receivePackGrace):
			_ = osproc.KillGroup(cmd.Process)
			err = <-done
		}
	}
	if err != nil {
		return out.Bytes(), &apperr.Error{Code: GitFailed, Msg: "git receive-pack failed: " + firstLine(errb.String(), err), Err: err}
	}
	return out.Bytes(), nil
}

// receivePackGrace is how long ReceivePack lets a receive-pack run on
// once its caller has given up.
const receivePackGrace = 10 * time.Second
