//go:build !unix

package telemetry

import "os"

// writeOnce writes line with one call; where write(2) is not the system
// interface, the file's own append mode keeps the line whole.
func writeOnce(f *os.File, line []byte) error {
	_, err := f.Write(line)
	return err
}

// unlinked is true: without fstat's link count, every event opens the file.
func unlinked(f *os.File) bool { return true }
