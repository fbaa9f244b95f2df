//go:build windows

package osproc

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"unsafe"
)

// The kernel32 calls the standard library's syscall package does not wrap.
var (
	kernel32       = syscall.NewLazyDLL("kernel32.dll")
	procLockFileEx = kernel32.NewProc("LockFileEx")
	procUnlockFile = kernel32.NewProc("UnlockFileEx")
)

// The flags of LockFileEx and the error it gives for a held lock.
const (
	lockfileFailImmediately = 0x1
	lockfileExclusiveLock   = 0x2
	errorLockViolation      = syscall.Errno(33)
	detachedProcess         = 0x8
)

// Group makes cmd start in a process group of its own and, when cmd was
// made by exec.CommandContext, makes the context's cancellation kill its
// whole process tree. Windows has no signal to a group, so the tree is
// killed by taskkill /T /F, then the process itself. It first calls what
// SetBeforeGroup installed.
func Group(cmd *exec.Cmd) {
	runBeforeGroup()
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return KillGroup(cmd.Process) }
	}
}

// KillGroup kills the process tree p leads.
func KillGroup(p *os.Process) error {
	if p == nil {
		return os.ErrProcessDone
	}
	_ = exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(p.Pid)).Run()
	return p.Kill()
}

// Gone cannot tell here: it reports false (the process may exist).
func Gone(int) bool { return false }

// Detach makes cmd run detached from the caller's console, in a process
// group of its own.
func Detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}

// Lock takes a lock on the whole of f (LockFileEx over the largest range).
// With NoWait it returns ErrLocked at once when another handle holds a
// conflicting lock; otherwise it waits.
func Lock(f *os.File, mode LockMode) error {
	var flags uint32
	if mode&Exclusive != 0 {
		flags |= lockfileExclusiveLock
	}
	if mode&NoWait != 0 {
		flags |= lockfileFailImmediately
	}
	ol := new(syscall.Overlapped)
	r, _, err := procLockFileEx.Call(f.Fd(), uintptr(flags), 0, 0xFFFFFFFF, 0xFFFFFFFF, uintptr(unsafe.Pointer(ol)))
	if r != 0 {
		return nil
	}
	if err == errorLockViolation {
		return ErrLocked
	}
	return err
}

// Unlock releases the lock Lock took on f. Closing f releases it too.
func Unlock(f *os.File) error {
	ol := new(syscall.Overlapped)
	r, _, err := procUnlockFile.Call(f.Fd(), 0, 0xFFFFFFFF, 0xFFFFFFFF, uintptr(unsafe.Pointer(ol)))
	if r != 0 {
		return nil
	}
	return err
}

// Inode reports no identity on Windows: callers fall back to size and
// modification time, or compare two FileInfos with os.SameFile.
func Inode(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

// KillGroupOnExit: a Windows process tree is not tied to its parent's
// life here; release does nothing.
func KillGroupOnExit(cmd *exec.Cmd) (release func(), err error) { return func() {}, nil }
