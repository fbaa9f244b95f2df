// Package proctest races real OS processes in tests: the test binary
// re-executes itself in a named role, a barrier lets every started process
// begin at once, and each process's output is collected where the test can
// read it while the process still runs.
//
// # Use
//
// A test package routes its TestMain through [Main] with the function that
// plays the roles, then starts processes with [Start]:
//
//	func TestMain(m *testing.M) { proctest.Main(m, clientMain) }
//
//	func clientMain(role string) int { … os.Getenv("BOARD_TEST_DIR") … }
//
//	bar := proctest.NewBarrier(t)
//	p := proctest.Start(t, proctest.Spec{Role: "claim", Barrier: bar, Env: []string{"BOARD_TEST_DIR=" + dir}})
//	bar.Release(t)          // returns once every process waits at the barrier
//	lines := p.Wait(t)      // stdout, one string per line
//
// Parameters travel in the environment ([Spec.Env]); the role function reads
// them with os.Getenv. A child inherits the parent's environment, so what
// gitstoretest.Isolate set holds for the children too.
//
// # Processes
//
// Each child runs in its own process group; [Proc.Kill] sends SIGKILL to the
// whole group, and a child still running when its test ends is killed the
// same way. Processes the child started in groups of their own (gitstore
// starts each git so) are not in it and live on. Stdout and stderr go to
// buffers guarded by a mutex, so [Proc.Output] may be read at any time.
package proctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// The environment a child is started with.
const (
	roleEnv    = "PROCTEST_ROLE"    // the role to play
	barrierEnv = "PROCTEST_BARRIER" // the barrier directory, if any
	markEnv    = "PROCTEST_MARK"    // a file the child creates to prove Main ran
)

// barrierWait bounds how long Release waits for every process to arrive.
const barrierWait = 2 * time.Minute

// Main is the body of a test package's TestMain. In a process started by
// Start it waits at the barrier (if one was given), runs child(role) and
// exits with its result; otherwise it runs the tests.
func Main(m *testing.M, child func(role string) int) {
	role := os.Getenv(roleEnv)
	if role == "" {
		os.Exit(m.Run())
	}
	if mark := os.Getenv(markEnv); mark != "" {
		if err := os.WriteFile(mark, nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "proctest:", err)
			os.Exit(2)
		}
	}
	if dir := os.Getenv(barrierEnv); dir != "" {
		if err := arrive(dir); err != nil {
			fmt.Fprintln(os.Stderr, "proctest:", err)
			os.Exit(2)
		}
	}
	os.Exit(child(role))
}

// arrive announces this process at the barrier and waits until it opens.
func arrive(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("ready.%d", os.Getpid())), nil, 0o644); err != nil {
		return err
	}
	open := filepath.Join(dir, "go")
	for deadline := time.Now().Add(barrierWait + time.Minute); ; time.Sleep(100 * time.Microsecond) {
		if _, err := os.Stat(open); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("barrier %s never opened", dir)
		}
	}
}

// Barrier holds the processes started with it until Release.
type Barrier struct {
	dir string

	mu    sync.Mutex
	procs []*Proc
}

// NewBarrier returns a closed barrier.
func NewBarrier(t testing.TB) *Barrier {
	t.Helper()
	return &Barrier{dir: t.TempDir()}
}

// Release waits until every process started with the barrier is waiting
// at it, then lets them all go at once. It fails the test if a process
// exits before it arrives or they do not all arrive within two minutes.
func (b *Barrier) Release(t testing.TB) {
	t.Helper()
	b.mu.Lock()
	procs := append([]*Proc(nil), b.procs...)
	b.mu.Unlock()
	for deadline := time.Now().Add(barrierWait); ; time.Sleep(200 * time.Microsecond) {
		ready, err := filepath.Glob(filepath.Join(b.dir, "ready.*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(ready) >= len(procs) {
			break
		}
		for _, p := range procs {
			if p.exited() && !fileExists(filepath.Join(b.dir, fmt.Sprintf("ready.%d", p.cmd.Process.Pid))) {
				t.Fatalf("proctest: role %s exited before the barrier: %v\n%s", p.role, p.err, p.Stderr())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("proctest: %d of %d processes reached the barrier in %s", len(ready), len(procs), barrierWait)
		}
	}
	if err := os.WriteFile(filepath.Join(b.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Spec describes one child process.
type Spec struct {
	Role    string   // passed to the child function given to Main
	Env     []string // KEY=value pairs added to the inherited environment
	Barrier *Barrier // nil: the role starts at once
}

// Proc is a running child.
type Proc struct {
	role string
	cmd  *exec.Cmd
	mark string
	out  Buffer
	errb Buffer

	done chan struct{} // closed when the process has exited and its output is in
	err  error         // the exit status; read only after done is closed
}

// Start runs this test binary as a child playing s.Role. The child runs
// no tests (-test.run=^$): Main hands it to the role function.
func Start(t testing.TB, s Spec) *Proc {
	t.Helper()
	if s.Role == "" {
		t.Fatal("proctest: Start needs a role")
	}
	p := &Proc{role: s.Role, mark: filepath.Join(t.TempDir(), "started"), done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), roleEnv+"="+s.Role, markEnv+"="+p.mark)
	if s.Barrier != nil {
		p.cmd.Env = append(p.cmd.Env, barrierEnv+"="+s.Barrier.dir)
	}
	p.cmd.Env = append(p.cmd.Env, s.Env...)
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = &p.errb
	osproc.Group(p.cmd)
	// A grandchild outside the group that kept the output pipes open must
	// not hold Wait forever once the child itself has exited.
	p.cmd.WaitDelay = 10 * time.Second
	if s.Barrier != nil {
		// Joined before the start, so a Release racing this Start counts it.
		s.Barrier.mu.Lock()
		s.Barrier.procs = append(s.Barrier.procs, p)
		s.Barrier.mu.Unlock()
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("proctest: start role %s: %v", s.Role, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.Kill() })
	return p
}

func (p *Proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the process to exit and returns its stdout, one string
// per line. It fails the test if the process exited non-zero, or if the
// test binary's TestMain does not go through Main.
func (p *Proc) Wait(t testing.TB) []string {
	t.Helper()
	if err := p.WaitErr(); err != nil {
		t.Fatalf("proctest: role %s: %v\nstderr:\n%s", p.role, err, p.Stderr())
	}
	return p.Lines()
}

// WaitErr waits for the process to exit and returns its exit error (nil
// for status 0). A child that exited 0 without reaching Main is an error:
// its TestMain does not hand roles to Main.
func (p *Proc) WaitErr() error {
	<-p.done
	if p.err != nil {
		return p.err
	}
	if !fileExists(p.mark) {
		return fmt.Errorf("the child did not run proctest.Main: call it from TestMain")
	}
	return nil
}

// Kill sends SIGKILL to the process's whole group and waits for it to
// exit. It reports whether the process was still running.
func (p *Proc) Kill() bool {
	if p.exited() {
		return false
	}
	osproc.KillGroup(p.cmd.Process)
	<-p.done
	return true
}

// Pid is the child's process id, which is also its process group id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Output returns what the process wrote to stdout so far.
func (p *Proc) Output() string { return p.out.String() }

// Stderr returns what the process wrote to stderr so far.
func (p *Proc) Stderr() string { return p.errb.String() }

// Lines returns stdout so far, one string per line, without a trailing
// empty line.
func (p *Proc) Lines() []string {
	s := strings.TrimRight(p.Output(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// WaitOutput waits until stdout contains substr. It fails the test if the
// process exits first or timeout passes.
func (p *Proc) WaitOutput(t testing.TB, substr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.Output(), substr) {
		if p.exited() {
			if strings.Contains(p.Output(), substr) {
				return
			}
			t.Fatalf("proctest: role %s exited (%v) before printing %q\nstdout:\n%s\nstderr:\n%s", p.role, p.err, substr, p.Output(), p.Stderr())
		}
		if time.Now().After(deadline) {
			t.Fatalf("proctest: role %s did not print %q in %s", p.role, substr, timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Buffer is a bytes.Buffer that another goroutine (os/exec's copying one)
// may write while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Alive reports whether process pid still runs. A zombie — a process that
// has ended and waits for its parent to reap it, perhaps a container's init
// that never does — counts as ended. Only Linux tells a zombie (its state
// in /proc); elsewhere a process that exists runs.
func Alive(pid int) bool {
	if osproc.Gone(pid) {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// "pid (comm) S …": the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
