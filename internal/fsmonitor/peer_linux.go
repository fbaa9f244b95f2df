package fsmonitor

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkPeer refuses a peer run by another user.
func checkPeer(c *net.UnixConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var uc *syscall.Ucred
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		uc, gerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if gerr != nil {
		return gerr
	}
	if int(uc.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not %d", uc.Uid, os.Getuid())
	}
	return nil
}
