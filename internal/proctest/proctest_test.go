package proctest_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m, child) }

func child(role string) int {
	switch role {
	case "echo":
		fmt.Println(os.Getenv("PROCTEST_TEST_MSG"))
		fmt.Fprintln(os.Stderr, "to stderr")
		return 0
	case "stamp":
		fmt.Println(time.Now().UnixNano())
		return 0
	case "fail":
		fmt.Fprintln(os.Stderr, "failing on purpose")
		return 3
	case "chatter":
		for i := 0; ; i++ {
			fmt.Printf("line %d\n", i)
		}
	case "hang":
		sleeper := exec.Command("sleep", "3600")
		if err := sleeper.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Printf("grandchild %d\n", sleeper.Process.Pid)
		time.Sleep(time.Hour)
	}
	fmt.Fprintln(os.Stderr, "unknown role", role)
	return 2
}

func TestStart_EnvAndOutput(t *testing.T) {
	p := proctest.Start(t, proctest.Spec{Role: "echo", Env: []string{"PROCTEST_TEST_MSG=hello there"}})
	if got := p.Wait(t); len(got) != 1 || got[0] != "hello there" {
		t.Fatalf("stdout lines %q", got)
	}
	if got := p.Stderr(); got != "to stderr\n" {
		t.Fatalf("stderr %q", got)
	}
}

func TestWaitErr_NonZeroExit(t *testing.T) {
	p := proctest.Start(t, proctest.Spec{Role: "fail"})
	err := p.WaitErr()
	var ee *exec.ExitError
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("WaitErr = %v, want exit status 3", err)
	}
	if !errors.As(err, &ee) {
		t.Fatalf("WaitErr = %T, want *exec.ExitError", err)
	}
	if !strings.Contains(p.Stderr(), "failing on purpose") {
		t.Fatalf("stderr %q", p.Stderr())
	}
}

// Processes started with a barrier do nothing until Release: every stamp
// is later than the moment just before Release, although the processes
// were started 300 ms earlier.
func TestBarrier_HoldsUntilRelease(t *testing.T) {
	bar := proctest.NewBarrier(t)
	var ps []*proctest.Proc
	for i := 0; i < 6; i++ {
		ps = append(ps, proctest.Start(t, proctest.Spec{Role: "stamp", Barrier: bar}))
	}
	time.Sleep(300 * time.Millisecond)
	for _, p := range ps {
		if out := p.Output(); out != "" {
			t.Fatalf("a process ran before the release: %q", out)
		}
	}
	before := time.Now().UnixNano()
	bar.Release(t)
	for _, p := range ps {
		lines := p.Wait(t)
		ns, err := strconv.ParseInt(lines[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if ns < before {
			t.Fatalf("a process stamped %d, %d ns before the release", ns, before-ns)
		}
	}
}

// Output may be read while os/exec is still writing it (run with -race).
func TestOutput_ReadWhileWriting(t *testing.T) {
	p := proctest.Start(t, proctest.Spec{Role: "chatter"})
	p.WaitOutput(t, "line 1000\n", 30*time.Second)
	for i := 0; i < 50; i++ {
		if n := len(p.Lines()); n == 0 {
			t.Fatal("no lines")
		}
	}
	if !p.Kill() {
		t.Fatal("Kill reported the chatterer already gone")
	}
	if p.Kill() {
		t.Fatal("a second Kill reported a running process")
	}
	if err := p.WaitErr(); err == nil {
		t.Fatal("a killed process reported success")
	}
}

// Kill reaches the whole process group: a grandchild dies too.
func TestKill_WholeGroup(t *testing.T) {
	p := proctest.Start(t, proctest.Spec{Role: "hang"})
	p.WaitOutput(t, "\n", 30*time.Second)
	var pid int
	if _, err := fmt.Sscanf(p.Lines()[0], "grandchild %d", &pid); err != nil {
		t.Fatalf("%q: %v", p.Output(), err)
	}
	if !proctest.Alive(pid) {
		t.Fatal("the grandchild is not running before the kill")
	}
	p.Kill()
	for deadline := time.Now().Add(10 * time.Second); proctest.Alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the grandchild outlived the kill of its group")
		}
	}
}

// Alive: this process runs; a child that has exited but was not waited
// for (a zombie) has ended; so has one that was waited for.
func TestAlive(t *testing.T) {
	if !proctest.Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); proctest.Alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a child that exited (a zombie until waited for) is still alive: %d", pid)
		}
	}
	if osproc.Gone(pid) {
		t.Fatal("the zombie should still exist for kill(pid, 0) until it is waited for")
	}
	cmd.Wait()
	if proctest.Alive(pid) {
		t.Fatalf("a child that was waited for is alive: %d", pid)
	}
}
