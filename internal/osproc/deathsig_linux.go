package osproc

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes the kernel kill cmd (SIGKILL) when the thread that
// started it ends, this process's death included. Call it after Group,
// which replaces SysProcAttr.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
