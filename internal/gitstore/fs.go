package gitstore

import (
	"io"
	"os"
)

// readSmall reads the file at path whole into buf's storage (new storage
// when it has no room for the file and a byte more). With limit > 0 it
// reads at most limit bytes (a ref file is 41; a large file where a ref
// should be is not read whole). With st non-nil it also returns the
// stat of the open file, which belongs to the version read.
func readSmall(path string, buf []byte, limit int, st *os.FileInfo) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := limit // a small file read to its limit needs no stat
	if st != nil || limit <= 0 {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if st != nil {
			*st = fi
		}
		want = int(fi.Size()) + 1 // the byte: room to see the end
		if limit > 0 {
			want = min(want, limit)
		}
	}
	b := buf[:0]
	if cap(b) < want {
		b = make([]byte, 0, want)
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, int64(limit))
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // it grew while we read
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
