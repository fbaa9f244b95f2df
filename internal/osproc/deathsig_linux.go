package osproc

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes the kernel send cmd sig when the thread that started
// it ends, this process's death included (SIGKILL too, which no handler
// sees). Go ends an OS thread only when a goroutine locked to it returns.
// Call it after Group, which replaces SysProcAttr.
func DieWithParent(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}
