package osproc

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// sysRenameat2 is renameat2(2)'s number on this architecture, 0 where it is
// not known here (HasRenameNoReplace is then false).
func sysRenameat2() uintptr {
	switch runtime.GOARCH {
	case "amd64":
		return 316
	case "arm64", "riscv64", "loong64":
		return 276
	case "386":
		return 353
	case "arm":
		return 382
	}
	return 0
}

// HasRenameNoReplace reports whether RenameNoReplace can work here (a file
// system may still refuse it: EINVAL).
var HasRenameNoReplace = sysRenameat2() != 0

// RenameNoReplace renames from to to unless to exists, in which case it
// fails with an error matching os.ErrExist: the exclusion that creating to
// with O_EXCL gives (how git takes a lock), without making an inode. It is
// renameat2(2) with RENAME_NOREPLACE.
func RenameNoReplace(from, to string) error {
	nr := sysRenameat2()
	if nr == 0 {
		return &os.LinkError{Op: "renameat2", Old: from, New: to, Err: syscall.ENOSYS}
	}
	f, err := syscall.BytePtrFromString(from)
	if err != nil {
		return err
	}
	t, err := syscall.BytePtrFromString(to)
	if err != nil {
		return err
	}
	const noReplace = 1 // RENAME_NOREPLACE
	cwd := -100         // AT_FDCWD
	_, _, e := syscall.Syscall6(nr, uintptr(cwd), uintptr(unsafe.Pointer(f)), uintptr(cwd), uintptr(unsafe.Pointer(t)), noReplace, 0)
	if e != 0 {
		return &os.LinkError{Op: "renameat2", Old: from, New: to, Err: e}
	}
	return nil
}

// Rename is os.Rename without its look at the destination first: os.Rename
// lstats the new name (to refuse moving a directory over an empty one,
// which rename(2) allows) before it renames, one more path walk for
// every rename, and a write renames three or four files into place (an
// lstat was a third of the MCP server's rename cost, pprof of appends on
// tmpfs). For files only: a directory's rename here may replace an empty
// directory. Its errors are os.Rename's (*os.LinkError, matching
// os.ErrNotExist and the like).
func Rename(from, to string) error {
	for {
		err := syscall.Rename(from, to)
		switch err {
		case nil:
			return nil
		case syscall.EINTR:
			continue
		}
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
}
