//go:build unix

package symbols

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A helper that does not answer is killed with its whole process group
// when the ctx of the call it serves ends, and the call returns ctx's
// error rather than a weaker reading.
func TestHelper_CtxEndKillsTheHelpersGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "helper.sh")
	// The helper starts a child of its own and never answers.
	body := "#!/bin/sh\nsleep 600 &\necho $! > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	p := newHelperPool()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // cancel once the helper runs its child
		for {
			if _, err := os.Stat(pidFile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, ok, err := p.ask(ctx, script, HelperRequest{Lang: Python, Path: "a.py", Src: []byte("x = 1\n")})
	if ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("ok %v, err %v; want context.Canceled", ok, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the helper's child %d outlived the cancelled call", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p.running != 0 {
		t.Fatalf("%d helpers still counted as running", p.running)
	}
}
