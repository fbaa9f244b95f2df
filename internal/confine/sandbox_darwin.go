package confine

import (
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/ideate/git-ideate/internal/apperr"
)

// On macOS the command runs under sandbox-exec with a generated profile.
// This code path is built for macOS and not run by our tests.

// Available reports whether commands can be confined here.
func Available() bool {
	_, err := exec.LookPath("sandbox-exec")
	return err == nil
}

// Mode names the confinement in force.
func Mode() string {
	if Available() {
		return "sandbox-exec (macOS, untested)"
	}
	return "none: sandbox-exec is missing"
}

// Profile is the sandbox-exec profile that lets a command write only
// below rw and to the device files.
func Profile(rw []string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n")
	for _, d := range rw {
		b.WriteString("  (subpath " + quoteSB(d) + ")\n")
	}
	b.WriteString("  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n")
	return b.String()
}

func quoteSB(s string) string {
	return "\"" + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + "\""
}

// Enter replaces this process with argv under sandbox-exec.
func Enter(rw []string, argv []string) error {
	if len(argv) == 0 {
		return apperr.New(apperr.Schema, "nothing to run")
	}
	sb, err := exec.LookPath("sandbox-exec")
	if err != nil {
		return apperr.New(apperr.Unverifiable, "sandbox-exec is missing, so the command is not run")
	}
	return syscall.Exec(sb, append([]string{sb, "-p", Profile(rw)}, argv...), os.Environ())
}

func becomeReaper() {}
func reapOrphans()  {}

func nlink(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// threadConfines: no thread can restrict itself here; the command is
// started through this binary's entry (Enter).
const threadConfines = false

func startRestricted(cmd *exec.Cmd, rw []string) error { return cmd.Start() }
