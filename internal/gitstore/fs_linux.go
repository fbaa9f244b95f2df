package gitstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// looseKeyOf is the identity of one version of a loose ref file (see
// looseKey).
func looseKeyOf(fi os.FileInfo) (looseKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return looseKey{}, false
	}
	return looseKey{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// openRaw opens path as os.OpenFile does, but the file it returns is not
// offered to the runtime's poller. os.OpenFile tries to register every
// file it opens with epoll, which refuses a regular file, and sets and
// clears O_NONBLOCK around the attempt: four fcntl calls and a failing
// epoll_ctl per open (strace of the MCP server: 25 of an append's 66
// system calls). os.NewFile asks for the flags once and registers
// nothing. The files opened here are regular files, read or written in
// one go, which the poller could not wait on anyway.
func openRaw(path string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, perm)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// readSmall reads the file at path whole into buf's storage (new storage
// when it has no room for the file and a byte more) without an
// os.File: open, fstat, read until the end, close. With limit > 0 it
// reads at most limit bytes (a ref file is 41; a large file where a ref
// should be is not read whole). With st non-nil it also returns the
// stat, which belongs to the version of the file read.
func readSmall(path string, buf []byte, limit int, st *fileStat) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var own fileStat
	if st == nil {
		st = &own
	}
	if err := syscall.Fstat(fd, st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	b := buf[:0]
	want := int(st.Size) + 1 // the byte: room to see the end
	if limit > 0 {
		want = min(want, limit)
	}
	if cap(b) < want {
		b = make([]byte, 0, want)
	}
	for {
		if limit > 0 && len(b) >= limit {
			return b[:limit], nil
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // it grew while we read
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// fileStat is what readSmall can fill in besides the bytes.
type fileStat = syscall.Stat_t

// looseKeyOfStat is looseKeyOf for a stat taken by readSmall.
func looseKeyOfStat(st *fileStat) (looseKey, bool) {
	return looseKey{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// createTemp is os.CreateTemp (a new file, mode 0600, named prefix and a
// random number) opened by openRaw.
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		f, err := openRaw(filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// keyOfStat is statKey for a stat taken by readSmall.
func keyOfStat(st *fileStat) fileKey {
	return fileKey{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), exists: true}
}
