//go:build unix

package telemetry

import (
	"fmt"
	"os"
	"syscall"
)

// writeOnce issues exactly one write(2) of line. A short write is an error
// (the line is then torn, and the report counts it as unparseable) rather
// than a second write that could land after another process's line.
func writeOnce(f *os.File, line []byte) error {
	for {
		n, err := syscall.Write(int(f.Fd()), line)
		if err == syscall.EINTR {
			continue // nothing was written
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: f.Name(), Err: err}
		}
		if n != len(line) {
			return fmt.Errorf("short write to %s: %d of %d bytes", f.Name(), n, len(line))
		}
		return nil
	}
}

// unlinked reports whether f's file has been deleted since it was opened.
func unlinked(f *os.File) bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return true
	}
	return st.Nlink == 0
}
