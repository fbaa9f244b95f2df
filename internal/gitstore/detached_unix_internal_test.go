//go:build unix

package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A detached job runs in a session of its own, which its ctx bounds: when
// the ctx ends the job is killed with everything it started, though
// nobody waits for it.
func TestDetached_CtxEndKillsTheSessionsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := detached(ctx, "sh", "-c", "sleep 600 & echo $! > "+pidFile+".tmp && mv "+pidFile+".tmp "+pidFile+"; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if pgid, err := syscall.Getpgid(cmd.Process.Pid); err != nil || pgid != cmd.Process.Pid {
		t.Fatalf("the job's process group is %d (%v), not its own %d", pgid, err, cmd.Process.Pid)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			t.Fatal("the job did not start its child")
		}
	}
	cancel() // nobody waits for the job: the kill must not need Wait
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job's child %d outlived the ctx", pid)
		}
	}
	cmd.Wait()
}
