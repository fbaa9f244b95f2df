package gitstore

import (
	"errors"
	"os"
	"syscall"
)

// promote opens the retired file name (in a Store's own retired
// directory, recycleAfter after it was retired) as a spare, where it is:
// only when no process has it open or mapped, which a write lease proves
// (the kernel grants F_WRLCK only when no other open file description of
// the inode exists, and a mapping holds one), and only when name is its
// only name. A reader whose open(2) had looked the file up just before
// the rename that retired it has finished that open by now and is seen
// here. A file of more than a block (a roll-up's pack) is emptied; a
// smaller one keeps its bytes, which whoever fills the spare writes over
// and cuts (fitSpare), so that no block is freed inside a call.
//
// errBusy: someone has it open or mapped, or it has another name; the
// caller frees the name as before.
func promote(name string) (*os.File, error) {
	fd, err := openForLease(name)
	if err != nil {
		return nil, err
	}
	st, err := leased(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	leaseNone(fd)
	if st.Mode&0o200 == 0 {
		// Opened read-only as it was (a pack or an index) by a user whom
		// permissions do not stop: a spare is written and appended to.
		syscall.Fchmod(fd, 0o644)
	}
	if st.Size > spareKeepBytes {
		syscall.Ftruncate(fd, 0)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openForLease opens name for writing, never through a symbolic link and
// without waiting on another's lease; a read-only file (a pack or an
// index) is made writable by its owner first.
func openForLease(name string) (int, error) {
	fd, err := openNoFollow(name, syscall.O_RDWR)
	if !errors.Is(err, syscall.EACCES) {
		return fd, err
	}
	// Made writable through a descriptor of the file itself, never
	// through a symbolic link put in its place; that descriptor is closed
	// before the lease, which it would refuse.
	ro, rerr := openNoFollow(name, syscall.O_RDONLY)
	if rerr != nil {
		return -1, err
	}
	cerr := syscall.Fchmod(ro, 0o644)
	syscall.Close(ro)
	if cerr != nil {
		return -1, err
	}
	return openNoFollow(name, syscall.O_RDWR)
}

// leased takes a write lease on fd and checks that the file is a regular
// file with one name; it returns holding the lease, or errBusy holding
// nothing.
func leased(fd int) (syscall.Stat_t, error) {
	var st syscall.Stat_t
	if leaseWrite(fd) != nil {
		return st, errBusy
	}
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 {
		leaseNone(fd)
		return st, errBusy
	}
	return st, nil
}

// errBusy: a retired file someone else still has open or mapped.
var errBusy = errors.New("retired file in use")

func openNoFollow(name string, mode int) (int, error) {
	for {
		fd, err := syscall.Open(name, mode|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func leaseWrite(fd int) error {
	_, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETLEASE, syscall.F_WRLCK)
	if e != 0 {
		return e
	}
	return nil
}

func leaseNone(fd int) {
	syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETLEASE, syscall.F_UNLCK)
}

// canRecycle: retired files can become spares here.
const canRecycle = true

// openFileLimit is the process's limit on open files (RLIMIT_NOFILE's
// soft limit, which Go raises to the hard one at start).
func openFileLimit() (uint64, bool) {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0, false
	}
	return lim.Cur, true
}
