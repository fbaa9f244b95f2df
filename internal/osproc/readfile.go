package osproc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is returned by OpenRegular and ReadRegular for a path
// that names something other than a regular file (a FIFO, a device, a
// socket, a directory), after following symlinks.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned by ReadRegular for a file over its cap.
var ErrTooLarge = errors.New("file too large")

// OpenRegular opens path for reading without blocking (a FIFO with no
// writer would hold a plain open forever) and returns it only when it is a
// regular file: a FIFO, /dev/zero, or a symlink to either is refused at
// once with ErrNotRegular. Every file read from user or host input (a
// transcript path from the host, a plan file, standards.md, a worker's
// output.md) is opened this way.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return f, fi, nil
}

// ReadRegular reads the regular file at path (OpenRegular), at most max
// bytes: a larger file is ErrTooLarge and nothing is returned. A file
// that grows while it is read is read up to max+1 bytes and refused.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, fi, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, the cap is %d", ErrTooLarge, fi.Size(), max)}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: over the cap of %d bytes", ErrTooLarge, max)}
	}
	return b, nil
}
