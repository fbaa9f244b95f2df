//go:build !linux

package gitstore

import (
	"errors"
	"os"
)

// promote: no leases to prove a file unused here, so retired files are
// freed (see the Linux version).
func promote(name string) (*os.File, error) { return nil, errBusy }

var errBusy = errors.New("retired file in use")

const canRecycle = false
