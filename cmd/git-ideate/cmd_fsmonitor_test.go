package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/fsmonitor"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/worktree"
)

// `git ideate task start` runs the worktree's monitor (the hidden
// fsmonitor command of the same binary, detached); task scope sees a
// write made just before it; abandon ends the monitor.
func TestTask_CLI_StartRunsTheMonitor(t *testing.T) {
	t.Setenv("IDEATE_FSMONITOR", "1") // TestMain turns monitors off
	dir := gt.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	tj := parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", "T1", "--scope", "a.txt", "--json")).out)
	gd, err := gitstore.WorktreeGitDir(tj.Path)
	if err != nil {
		t.Fatal(err)
	}
	state := worktree.MonitorDir(gd)
	var pid int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pid, err = fsmonitor.Ping(context.Background(), state, time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no monitor answers for %s: %v", tj.Path, err)
		}
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err := os.WriteFile(filepath.Join(tj.Path, "b.txt"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustOK(t, bin(t, dir, "", "task", "scope", "T1", "--json")).out; !strings.Contains(out, "b.txt") {
		t.Errorf("task scope misses the write just made:\n%s", out)
	}
	mustOK(t, bin(t, dir, "", "task", "abandon", "T1"))
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor %d still runs after task abandon", pid)
		}
	}
}
