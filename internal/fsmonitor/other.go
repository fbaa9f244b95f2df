//go:build !linux

package fsmonitor

import (
	"context"
	"errors"
	"net"
)

// errUnsupported: only Linux has a monitor; elsewhere every query falls
// back to the full scan.
var errUnsupported = errors.New("no file-system monitor on this platform")

func checkPeer(c *net.UnixConn) error { return errUnsupported }

// Serve is unsupported on this platform.
func Serve(ctx context.Context, o Options) error { return errUnsupported }
