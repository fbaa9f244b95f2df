package gitstore

import "syscall"

// dieWithParent makes the kernel signal the child when the thread that
// started it dies — with this process, however it ends (SIGKILL included,
// which no handler sees). A child in a process group of its own no longer
// dies with a group kill aimed at this process (a host killing a hook's
// group, a test killing a syncing process's group); this keeps that
// guarantee. The signal is SIGTERM, not SIGKILL: git removes its lock
// files on SIGTERM, and a `git update-ref -d` killed outright leaves
// packed-refs.lock behind, which fails every later ref deletion in the
// repository until someone removes it. Go ends an OS thread only when a
// goroutine locked to it returns, which nothing here does.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
