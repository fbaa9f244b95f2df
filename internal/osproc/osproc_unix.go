//go:build unix

package osproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Group makes cmd start in a process group of its own (so a terminal's ^C
// reaches only the caller, and the command's children can be killed with
// it) and, when cmd was made by exec.CommandContext, makes the context's
// cancellation kill that whole group. It replaces any SysProcAttr cmd had.
// It first calls what SetBeforeGroup installed.
func Group(cmd *exec.Cmd) {
	runBeforeGroup()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Cancel != nil { // exec.CommandContext set it: a context is bound
		cmd.Cancel = func() error { return KillGroup(cmd.Process) }
	}
}

// KillGroup kills the process group p leads, at once (SIGKILL). A group
// already gone is os.ErrProcessDone.
func KillGroup(p *os.Process) error {
	if p == nil {
		return os.ErrProcessDone
	}
	// Negative pid: the process group whose id is the leader's pid.
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return os.ErrProcessDone
	}
	return err
}

// Gone reports whether no process pid exists on this host.
func Gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// Detach makes cmd run in a session of its own: no terminal signal reaches
// it, and it outlives its caller.
func Detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// Lock takes an advisory lock on the whole of f (flock). With NoWait it
// returns ErrLocked at once when another open file description holds a
// conflicting lock; otherwise it waits. An interrupted wait is retried.
func Lock(f *os.File, mode LockMode) error {
	how := syscall.LOCK_SH
	if mode&Exclusive != 0 {
		how = syscall.LOCK_EX
	}
	if mode&NoWait != 0 {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		default:
			return err
		}
	}
}

// Unlock releases the lock Lock took on f. Closing f releases it too.
func Unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// Inode returns the device and inode number of fi, when the system has
// them.
func Inode(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true
}

// KillGroupOnExit makes the process group cmd leads (cmd started, in a
// group of its own through Group) die with this process, however this
// process ends, kill -9 included: a watcher shell joins the group and
// blocks reading a pipe whose only writer is this process; when the
// writer closes (release, or the kernel closing it at this process's
// death) the watcher kills the whole group, itself with it. Pdeathsig
// alone would reach only the direct child, never what it started. Call
// release once the command was waited for.
func KillGroupOnExit(cmd *exec.Cmd) (release func(), err error) {
	if cmd.Process == nil {
		return func() {}, errors.New("osproc: the command was not started")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}, err
	}
	watch := exec.Command("/bin/sh", "-c", "read -r _; kill -KILL 0")
	watch.Stdin = r
	watch.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: cmd.Process.Pid}
	err = watch.Start()
	r.Close()
	if err != nil {
		w.Close()
		return func() {}, err
	}
	return func() {
		w.Close()
		_ = watch.Wait()
	}, nil
}
