package main

import (
	"bytes"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
)

// A ^C (SIGINT) or SIGTERM to a CLI call that runs git ends the git
// processes it started, which run in process groups of their own so a
// terminal's ^C reaches only git-ideate: here a fetch whose transport
// (an ssh command) hangs. The call exits 130 (CANCELED) soon after, and
// the transport's process is gone.
func TestSignal_CLI_EndsTheGitProcessesItStarted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := gt.NewRepo(t)
			pidFile := filepath.Join(t.TempDir(), "transport.pid")
			hang := filepath.Join(t.TempDir(), "hang.sh")
			if err := os.WriteFile(hang, []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 60\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			gt.Git(t, dir, "remote", "add", "origin", "ssh://nowhere.invalid/repo.git")
			// The binary itself: `git ideate` would run it as a child of git.
			cmd := exec.Command(binPath, "sync")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_SSH_COMMAND="+hang)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := 0
			for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
				if b, err := os.ReadFile(pidFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
					pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the transport never started; stderr:\n%s", stderr.String())
				}
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(corecmd.SignalGrace + 5*time.Second):
				cmd.Process.Kill()
				t.Fatalf("the call still runs %v after %v", corecmd.SignalGrace+5*time.Second, sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != corecmd.ExitInterrupted {
				t.Errorf("exit code %d (%v), want %d; stderr:\n%s", code, cmd.ProcessState, corecmd.ExitInterrupted, stderr.String())
			}
			for deadline := time.Now().Add(5 * time.Second); proctest.Alive(pid); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the transport %d still runs after the call ended on %v", pid, sig)
				}
			}
		})
	}
}

// The MCP server watches for signals from its start, though it has run no
// process yet: SIGTERM ends it cleanly (an exit, not a death by the
// signal), with its stdin still open.
func TestSignal_MCPServerEndsOnSIGTERM(t *testing.T) {
	r := startMCP(t, gt.NewRepo(t))
	r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for proctest.Alive(r.cmd.Process.Pid) { // ended, not yet waited for
			time.Sleep(10 * time.Millisecond)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(corecmd.SignalGrace + 5*time.Second):
		t.Fatalf("the server still runs %v after SIGTERM", corecmd.SignalGrace+5*time.Second)
	}
	r.in.Close()
	r.cmd.Wait()
	if !r.cmd.ProcessState.Exited() {
		t.Errorf("the server died by the signal (%v) instead of ending on it", r.cmd.ProcessState)
	}
}

// Only the long-lived commands watch for signals from their start; every
// other call starts watching with its first process (osproc.Group).
func TestSignal_EagerOnlyForLongLivedCommands(t *testing.T) {
	for args, want := range map[string]bool{
		"mcp": true, "-C /x mcp": true,
		"record append --kind finding": false, "work claim --id x": false, "hook pre-tool-use": false,
		"sync": false, "--version": false, "": false,
	} {
		if got := eagerSignals(strings.Fields(args)); got != want {
			t.Errorf("eagerSignals(%q) = %v, want %v", args, got, want)
		}
	}
}
