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

// openFileLimit is not read here: nothing is recycled (canRecycle).
func openFileLimit() (uint64, bool) { return 0, false }
