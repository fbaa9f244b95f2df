package confine

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/ideate/git-ideate/internal/apperr"
	"golang.org/x/sys/unix"
)

// abi is the kernel's Landlock ABI version, 0 when Landlock is off.
func abi() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// Available reports whether commands can be confined here.
func Available() bool { return abi() >= 1 }

// Mode names the confinement in force: "landlock ABI n", or why there is
// none (then the guard reads commands instead, the weaker mode).
func Mode() string {
	if v := abi(); v >= 6 {
		return "landlock ABI " + itoa(v)
	} else if v >= 1 {
		return "landlock ABI " + itoa(v) + " (signals are not scoped before ABI 6, Linux 6.12: a command can end its confining entry before the entry puts back what the command changed; the gates still judge the commits)"
	}
	return "none: Landlock is not enabled in this kernel"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// writeRights are the rights the domain handles at an ABI version: every
// kind of write. Reading and running are not handled, so they stay open
// everywhere.
func writeRights(v int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if v >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER // renames and links across directories
	}
	if v >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return r
}

// fileRights are the rights a rule on a file (not a directory) may hold.
const fileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE

// devices are the files any command may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx"}

// Enter restricts this process's writes to rw (directories, each with
// everything below it) and the device files, then replaces the process
// with argv. Reading and running stay open everywhere. It returns only
// on failure: when Landlock cannot restrict writes, nothing runs.
//
// One thread restricts itself and becomes argv: a Landlock domain passes
// through execve, and no other thread of this process runs anything
// before the exec replaces them all.
func Enter(rw []string, argv []string) error {
	if len(argv) == 0 {
		return apperr.New(apperr.Schema, "nothing to run")
	}
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return apperr.Wrap(apperr.NotFound, err, "%s", argv[0])
	}
	runtime.LockOSThread()
	if err := restrictThread(rw); err != nil {
		return err
	}
	return syscall.Exec(prog, argv, os.Environ())
}

// threadConfines: a thread restricts itself and starts the command
// (startRestricted), so the command needs no entry of this binary.
const threadConfines = true

// startRestricted starts cmd from a thread that restricted its own
// writes to rw first (restrictThread): the child inherits the thread's
// Landlock domain and keeps it through its exec, and this process is not
// started a second time to enter it. The thread is never unlocked, so it
// ends with its goroutine and nothing else ever runs on it.
func startRestricted(cmd *exec.Cmd, rw []string) error {
	errc := make(chan error, 1)
	go restrictAndStart(cmd, rw, errc, nil)
	return <-errc
}

// restrictAndStart is startRestricted's work on the calling goroutine,
// which it locks to its thread; locked, when not nil, is closed once that
// thread is locked. The process's main thread is never the one restricted:
// a signal sent to the process is checked against the main thread's
// domain, so a command sharing it could kill this entry before it puts
// back what the command changed. On the main thread the goroutine holds
// it, so the scheduler cannot hand it on, until another goroutine has
// locked a thread of its own for the work.
func restrictAndStart(cmd *exec.Cmd, rw []string, errc chan<- error, locked chan<- struct{}) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		other := make(chan struct{})
		go restrictAndStart(cmd, rw, errc, other)
		<-other
		runtime.UnlockOSThread()
		return
	}
	if locked != nil {
		close(locked)
	}
	if err := restrictThread(rw); err != nil {
		errc <- err
		return
	}
	err := cmd.Start()
	errc <- err
	if err == nil && cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
		// A parent-death signal is sent when the thread that started
		// the child ends, and this one ends with its goroutine: it
		// stays until the child has ended (WNOWAIT leaves the child
		// for cmd.Wait to reap).
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
	}
}

// restrictThread restricts the calling thread's writes (its goroutine
// locked to it) to rw and the device files, and proves it did.
func restrictThread(rw []string) error {
	v := abi()
	if v < 1 {
		return apperr.New(apperr.Unverifiable, "Landlock is not enabled in this kernel, so the command is not run")
	}
	handled := writeRights(v)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	if v >= 6 {
		// The command may signal, and reach through an abstract socket,
		// only what it started itself: killing this entry before it puts
		// back what the command changed, or the hooks of later calls,
		// would let the command's writes stand.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return apperr.Wrap(apperr.Unverifiable, errno, "Landlock refused a ruleset, so the command is not run")
	}
	defer unix.Close(int(fd))
	add := func(path string, rights uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(pfd)
		rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(pfd)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return errno
		}
		return nil
	}
	// No FIFO is made anywhere, not even in the command's temporary
	// directory: linked or renamed into the worktree or its git
	// directory, one holds every git, and every open, that reads it
	// after the command (the put-back here, the gates) forever.
	// Landlock asks for the right on the destination of a rename or a
	// link too.
	dirRights := handled &^ unix.LANDLOCK_ACCESS_FS_MAKE_FIFO
	for _, d := range rw {
		if err := add(d, dirRights); err != nil {
			return apperr.Wrap(apperr.Unverifiable, err, "cannot open %s to the command, so it is not run", d)
		}
	}
	for _, d := range devices {
		if _, err := os.Stat(d); err == nil {
			add(d, fileRights&handled) // a device missing here is nothing to open
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			add(d, dirRights)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return apperr.Wrap(apperr.Unverifiable, err, "cannot set no_new_privs, so the command is not run")
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return apperr.Wrap(apperr.Unverifiable, errno, "Landlock did not restrict this process, so the command is not run")
	}
	return checkRestricted(rw)
}

// checkRestricted proves that writes are held: making a file in / or
// /tmp (unless one is a writable place) must fail now.
func checkRestricted(rw []string) error {
	for _, probe := range []string{"/", "/tmp"} {
		inside := false
		for _, d := range rw {
			if d == probe {
				inside = true
			}
		}
		if inside {
			continue
		}
		fd, err := unix.Open(probe, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
			return apperr.New(apperr.Unverifiable, "Landlock did not restrict writes (a file could still be made in %s), so the command is not run", probe)
		}
	}
	return nil
}
