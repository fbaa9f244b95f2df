//go:build unix

package osproc_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// Cancelling the context kills the whole group: the shell and the sleep
// it started in the background, which would otherwise outlive it.
func TestGroup_CancelKillsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 60 & echo $! >"+pidFile+"; wait")
	osproc.Group(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for i := 0; i < 500 && child == 0; i++ {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("the shell never started its child")
	}
	if pgid, _ := syscall.Getpgid(child); pgid != cmd.Process.Pid {
		t.Fatalf("child's group %d, want the leader's %d", pgid, cmd.Process.Pid)
	}
	cancel()
	cmd.Wait()
	for i := 0; i < 200; i++ {
		if syscall.Kill(child, 0) == syscall.ESRCH {
			if err := osproc.KillGroup(cmd.Process); err != os.ErrProcessDone {
				t.Fatalf("KillGroup of a gone group: %v", err)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the group's other process %d outlived the cancel", child)
}

// Two open file descriptions of one file: the second cannot take the
// exclusive lock without waiting until the first lets go; shared locks
// coexist.
func TestLock_ExclusiveSharedNoWait(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	a, _ := os.Create(p)
	defer a.Close()
	b, _ := os.Open(p)
	defer b.Close()
	if err := osproc.Lock(a, osproc.Exclusive|osproc.NoWait); err != nil {
		t.Fatal(err)
	}
	if err := osproc.Lock(b, osproc.Shared|osproc.NoWait); err != osproc.ErrLocked {
		t.Fatalf("a shared lock beside an exclusive one: %v", err)
	}
	if err := osproc.Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := osproc.Lock(b, osproc.Shared|osproc.NoWait); err != nil {
		t.Fatalf("after the unlock: %v", err)
	}
	if err := osproc.Lock(a, osproc.Shared); err != nil {
		t.Fatalf("two shared locks: %v", err)
	}
	if err := osproc.Lock(a, osproc.Exclusive|osproc.NoWait); err != osproc.ErrLocked {
		t.Fatalf("an exclusive lock beside a shared one: %v", err)
	}
	// A waiting lock returns once the holder closes its file.
	done := make(chan error, 1)
	go func() { done <- osproc.Lock(a, osproc.Exclusive) }()
	select {
	case err := <-done:
		t.Fatalf("took the lock while held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	b.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestInode(t *testing.T) {
	dir := t.TempDir()
	p, q := filepath.Join(dir, "p"), filepath.Join(dir, "q")
	os.WriteFile(p, nil, 0o644)
	os.WriteFile(q, nil, 0o644)
	os.Link(p, filepath.Join(dir, "p2"))
	id := func(n string) [2]uint64 {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		d, i, ok := osproc.Inode(fi)
		if !ok || i == 0 {
			t.Fatalf("%s: no inode", n)
		}
		return [2]uint64{d, i}
	}
	if id("p") != id("p2") || id("p") == id("q") {
		t.Fatalf("p %v, p2 %v, q %v", id("p"), id("p2"), id("q"))
	}
}

// Gone: this process exists; a child that has exited and been reaped
// does not.
func TestGone(t *testing.T) {
	if osproc.Gone(os.Getpid()) {
		t.Fatal("Gone(this process) = true")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !osproc.Gone(cmd.Process.Pid) {
		t.Fatalf("Gone(%d), an exited and reaped child, = false", cmd.Process.Pid)
	}
}
