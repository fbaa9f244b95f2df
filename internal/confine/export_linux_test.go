package confine

import "os/exec"

// StartOnThisThread is startRestricted's work run on the calling
// goroutine (and its thread), for a test that calls it from the
// process's main thread.
func StartOnThisThread(cmd *exec.Cmd, rw []string) error {
	errc := make(chan error, 1)
	restrictAndStart(cmd, rw, errc, nil)
	return <-errc
}

// ABI is the kernel's Landlock ABI version (0: none).
func ABI() int { return abi() }
