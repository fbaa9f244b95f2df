package confine_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ideate/git-ideate/internal/confine"
)

// Package initialization runs on the process's main thread: the helper
// process of TestStartRestricted_TheCommandCannotKillItsEntry starts its
// confined command from there, the case a goroutine meets when the
// scheduler happens to run it on that thread.
func init() {
	if os.Getenv("CONFINE_TEST_LEADER") != "1" {
		return
	}
	if unix.Gettid() != unix.Getpid() {
		fmt.Fprintln(os.Stderr, "init is not on the main thread")
		os.Exit(3)
	}
	cmd := exec.Command("/bin/sh", "-c", "kill -9 $PPID; echo tried")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := confine.StartOnThisThread(cmd, []string{os.Getenv("CONFINE_TEST_DIR")}); err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		os.Exit(4)
	}
	cmd.Wait()
	fmt.Println("entry survived")
	os.Exit(0)
}

// A confined command cannot kill the process that confined it, even when
// that process restricted a thread from its main thread: a signal to the
// process is checked against the main thread's domain, so the domain must
// never be the main thread's.
func TestStartRestricted_TheCommandCannotKillItsEntry(t *testing.T) {
	if confine.ABI() < 6 {
		t.Skip("Landlock ABI below 6: signals are not scoped here")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CONFINE_TEST_LEADER=1", "CONFINE_TEST_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "entry survived") {
		t.Fatalf("the entry: %v\n%s", err, out)
	}
}
