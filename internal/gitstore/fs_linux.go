package gitstore

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// sysRenameat2 is renameat2(2)'s number on this architecture, 0 where this
// file does not know it (spares are then off).
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

var renameNoReplaceSupported = sysRenameat2() != 0

// renameNoReplace renames from to to unless to exists (EEXIST then): the
// same exclusion as creating to with O_EXCL, which is how git takes a
// lock, without making an inode.
func renameNoReplace(from, to string) error {
	f, err := syscall.BytePtrFromString(from)
	if err != nil {
		return err
	}
	t, err := syscall.BytePtrFromString(to)
	if err != nil {
		return err
	}
	const renameNoReplaceFlag = 1 // RENAME_NOREPLACE
	cwd := -100                   // AT_FDCWD
	_, _, e := syscall.Syscall6(sysRenameat2(), uintptr(cwd), uintptr(unsafe.Pointer(f)), uintptr(cwd), uintptr(unsafe.Pointer(t)), renameNoReplaceFlag, 0)
	if e != 0 {
		return &os.LinkError{Op: "renameat2", Old: from, New: to, Err: e}
	}
	return nil
}

// linked reports whether f still has a name (a spare removed by hand has
// none, and renaming it would fail).
func linked(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 0
}

// looseKeyOf is the identity of one version of a loose ref file (see
// looseKey).
func looseKeyOf(fi os.FileInfo) (looseKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return looseKey{}, false
	}
	return looseKey{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
