//go:build !linux

package gitstore

import (
	"errors"
	"os"
)

// quarantine and promote: no leases to prove a file unused here, so
// retired files are freed (see the Linux version).
func quarantine(name, to string) error { return errBusy }

func promote(name string) (*os.File, error) { return nil, errBusy }

var errBusy = errors.New("retired file in use")

const canRecycle = false
