package gitstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
)

// waitPID reads a pid a script wrote to path, waiting up to 10s for it.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was never written: the transport script did not start", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Cancelling the ctx of a push or fetch kills git and everything git
// started: here the remote's receive-pack/upload-pack is a script that
// starts a sleeping grandchild of its own and then waits. Both must be gone
// once the call returns, and the call must return ctx.Err() at once rather
// than when the script would have ended (five minutes).
func TestStore_Remote_CancelKillsProcessGroup(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		call      func(ctx context.Context, s *gitstore.Store) error
	}{
		{"push", "receivepack", func(ctx context.Context, s *gitstore.Store) error {
			h, err := s.Ref("refs/heads/main")
			if err != nil {
				return err
			}
			_, err = s.Push(ctx, "origin", []gitstore.PushUpdate{{Ref: "refs/ideate/x", New: h}}, gitstore.RemoteOptions{})
			return err
		}},
		{"fetch", "uploadpack", func(ctx context.Context, s *gitstore.Store) error {
			return s.Fetch(ctx, "origin", gitstore.RemoteOptions{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gt.NewRepo(t)
			remote := t.TempDir()
			gt.Git(t, remote, "init", "-q", "--bare")
			pids := t.TempDir()
			script := filepath.Join(pids, "transport.sh")
			// The transport: record its pid, start a grandchild that would
			// outlive it, record that, and wait without answering git.
			body := "#!/bin/sh\n" +
				"echo $$ > " + filepath.Join(pids, "child.tmp") + " && mv " + filepath.Join(pids, "child.tmp") + " " + filepath.Join(pids, "child") + "\n" +
				"sleep 300 &\n" +
				"echo $! > " + filepath.Join(pids, "grandchild.tmp") + " && mv " + filepath.Join(pids, "grandchild.tmp") + " " + filepath.Join(pids, "grandchild") + "\n" +
				"wait\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			gt.Git(t, dir, "remote", "add", "origin", remote)
			gt.Git(t, dir, "config", "remote.origin."+tc.key, script)
			s := open(t, dir)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tc.call(ctx, s) }()
			child := waitPID(t, filepath.Join(pids, "child"))
			grandchild := waitPID(t, filepath.Join(pids, "grandchild"))
			if !proctest.Alive(child) || !proctest.Alive(grandchild) {
				t.Fatalf("the transport (%d) and its child (%d) should run before the cancel", child, grandchild)
			}
			select {
			case err := <-done:
				t.Fatalf("the call returned before the cancel: %v", err)
			case <-time.After(100 * time.Millisecond):
			}

			cancelled := time.Now()
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("after cancel: got %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not return within 10s of the cancel")
			}
			t.Logf("returned %v after the cancel", time.Since(cancelled).Round(time.Millisecond))
			// SIGKILL is delivered before Wait returns, but a process is
			// only gone once the kernel has torn it down: allow a moment.
			deadline := time.Now().Add(5 * time.Second)
			for proctest.Alive(child) || proctest.Alive(grandchild) {
				if time.Now().After(deadline) {
					t.Fatalf("still running after the cancel: transport %d alive=%v, its child %d alive=%v",
						child, proctest.Alive(child), grandchild, proctest.Alive(grandchild))
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// A transaction that keeps losing its compare-and-swap retries for up to
// 60s; cancelling its ctx ends that at once with ctx.Err(), and the ref is
// left as the other writer made it.
func TestStore_Transact_CancelWhileRetrying(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	other := open(t, dir)
	const ref = "refs/ideate/contended"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	var last gitstore.Hash
	start := time.Now()
	_, err := s.Transact(ctx, ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		calls++
		if calls == 2 {
			// The cancel arrives from outside while the transaction is
			// retrying (a fixed timer from the start raced the first
			// attempt on a loaded machine and saw no retry at all).
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		// Another writer moves the ref after every read, so every swap
		// of this transaction fails and it retries.
		c := commit(t, other, fmt.Sprintf("other %d", calls), tip)
		if err := other.UpdateRef(context.Background(), ref, c, tip); err != nil {
			return gitstore.ZeroHash, "", err
		}
		last = c
		blob, err := s.WriteBlob([]byte("mine"))
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		tree, err := s.WriteTree([]gitstore.TreeEntry{{Mode: gitstore.ModeFile, Name: "f", Hash: blob}})
		return tree, "mine\n", err
	})
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Transact after %d attempts: got %v, want context.Canceled", calls, err)
	}
	if calls < 2 {
		t.Fatalf("only %d attempt(s): the transaction never retried", calls)
	}
	if took > 5*time.Second {
		t.Fatalf("Transact took %v to notice the cancel", took)
	}
	if got, _ := s.Ref(ref); got != last {
		t.Fatalf("ref is %s, want the other writer's %s", got, last)
	}
	t.Logf("%d attempts, returned %v after start", calls, took.Round(time.Millisecond))
}

// A ref lock held by someone else is waited for until the policy's
// timeout; a cancelled ctx ends the wait first, with ctx.Err().
func TestStore_UpdateRef_CancelWhileLocked(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	const ref = "refs/ideate/held"
	c := commit(t, s, "one", gitstore.ZeroHash)
	lock := filepath.Join(dir, ".git", ref+".lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openWithLock(t, dir, gitstore.LockPolicy{Timeout: time.Minute, StaleAfter: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.UpdateRef(ctx, ref, c, gitstore.ZeroHash)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the wait took %v, not the ctx's 200ms", took)
	}
	if got, _ := s.Ref(ref); got != gitstore.ZeroHash {
		t.Fatalf("ref moved to %s", got)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("someone else's lock was removed: %v", err)
	}
}
