package confine

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// abi is the kernel's Landlock ABI version, 0 when Landlock is off.
func abi() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// Available reports whether commands can be confined here.
func Available() bool { return abi() >= 1 }

// Mode names the confinement in force: "landlock ABI n", or why there is
// none (then the guard reads commands instead, the weaker mode).
func Mode() string {
	if v := abi(); v >= 1 {
		return "landlock ABI " + itoa(v)
	}
	return "none: Landlock is not enabled in this kernel"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// devices are the files any command may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx"}

// Enter restricts this process's writes to rw (directories, each with
// everything below it) and the device files, then replaces the process
// with argv. Reading and running stay open everywhere. It returns only
// on failure: when Landlock cannot restrict writes, nothing runs.
func Enter(rw []string, argv []string) error {
	if len(argv) == 0 {
		return apperr.New(apperr.Schema, "nothing to run")
	}
	if v := abi(); v < 1 {
		return apperr.New(apperr.Unverifiable, "Landlock is not enabled in this kernel, so the command is not run")
	}
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return apperr.Wrap(apperr.NotFound, err, "%s", argv[0])
	}
	rules := []landlock.Rule{landlock.RODirs("/")}
	for _, d := range rw {
		rules = append(rules, landlock.RWDirs(d).WithRefer())
	}
	var devs []string
	for _, d := range devices {
		if _, err := os.Stat(d); err == nil {
			devs = append(devs, d)
		}
	}
	rules = append(rules, landlock.RWFiles(devs...).WithIoctlDev(), landlock.RWDirs("/dev/pts", "/dev/shm").IgnoreIfMissing())
	// One thread restricts itself and becomes argv: the domain passes
	// through execve, and no other thread of ours runs unrestricted.
	runtime.LockOSThread()
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return apperr.Wrap(apperr.Unverifiable, err, "Landlock refused the rules, so the command is not run")
	}
	if err := checkRestricted(rw); err != nil {
		return err
	}
	return syscall.Exec(prog, argv, os.Environ())
}

// checkRestricted proves that writes are held: creating a file in the
// root directory's temporary place must fail now (unless it is one of
// the writable places).
func checkRestricted(rw []string) error {
	for _, probe := range []string{"/", "/tmp", os.TempDir()} {
		inside := false
		for _, d := range rw {
			if d == probe {
				inside = true
			}
		}
		if inside {
			continue
		}
		fd, err := unix.Open(probe, unix.O_TMPFILE|unix.O_WRONLY, 0o600)
		if err == nil {
			unix.Close(fd)
			return apperr.New(apperr.Unverifiable, "Landlock did not restrict writes (a file could still be made in %s), so the command is not run", probe)
		}
	}
	return nil
}
