package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// TestMaintenanceLock_HeldWhileTheJobLives: the maintenance lock stands
// while its job (the shell and what it started) lives, however old the
// lock; once the job's process group is killed, the lock is stale after
// DefaultStaleAfter and the next job breaks it.
func TestMaintenanceLock_HeldWhileTheJobLives(t *testing.T) {
	s, _ := packStore(t, false)
	lock := filepath.Join(s.repo.StateDir(), "maintenance.lock")
	if s.maint.startJob("test", "sleep 60 & wait") == nil {
		t.Fatal("no job started")
	}
	if s.maint.startJob("test", "true") != nil {
		t.Fatal("a second job started beside the first")
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if !s.maint.running() {
		t.Fatal("an old lock whose job lives was taken as stale")
	}
	b, _ := os.ReadFile(lock)
	pid := 0
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "pid "); ok {
			pid, _ = strconv.Atoi(rest)
		}
	}
	if !strings.HasPrefix(string(b), "test\n") || pid == 0 {
		t.Fatalf("the lock says %q, want our mark, the job's name and its shell's pid", b)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; s.maint.running(); i++ {
		if i == 500 {
			t.Fatal("the killed job's lock still stands after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if done := s.maint.startJob("test", "true"); done == nil {
		t.Fatal("no job started after the killed one")
	} else {
		<-done
	}
	gt.WaitRemoved(t, lock)
}

// TestRollUp_KilledRollUpDoesNotStopTheNext: a roll-up killed with its
// whole process group (kill -9) mid-way leaves its lock, unheld; the next
// commits past the stale age break it and roll the packs up, so the pack count stays bounded instead of growing by one
// a write for half an hour. The repository stays whole.
func TestRollUp_KilledRollUpDoesNotStopTheNext(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	s, dir := packStore(t, true)
	state := s.repo.StateDir()
	lock := filepath.Join(state, "maintenance.lock")
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	t.Cleanup(func() { // the last commit's roll-up or pack-refs, still writing
		gt.WaitRemoved(t, lock)
		gt.WaitRemoved(t, filepath.Join(s.repo.CommonDir, "packed-refs.lock"))
	})
	// A git whose pack-objects hangs: the roll-up waits in it until killed.
	bin := t.TempDir()
	script := "#!/bin/sh\ncase \" $* \" in *\" pack-objects \"*) sleep 120 ;; esac\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+path)
	pid := 0
	for i := 0; i < 4*rollUpAt && pid == 0; i++ {
		commitValue(t, s, i)
		b, _ := os.ReadFile(lock)
		if strings.HasPrefix(string(b), "roll-up\n") {
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(line, "pid "); ok {
					pid, _ = strconv.Atoi(strings.Fields(rest)[0])
				}
			}
		}
	}
	if pid == 0 {
		t.Fatal("no roll-up started, or its lock has no pid line")
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the roll-up's group: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the killed roll-up is still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the killed roll-up left no lock (%v): the test shows nothing", err)
	}
	t.Setenv("PATH", path)
	old := time.Now().Add(-2 * DefaultStaleAfter) // the stale age has passed
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	before := len(packNames(t, pdir))
	for i := 0; i < 3*rollUpAt; i++ {
		commitValue(t, s, 1000+i)
		if i%rollUpAt == rollUpAt-1 {
			gt.WaitRemoved(t, lock)
		}
	}
	gt.WaitRemoved(t, lock)
	commitValue(t, s, 2000) // deletes what the last roll-up merged
	after := len(packNames(t, pdir))
	t.Logf("packs: %d when the roll-up was killed, %d after %d more commits", before, after, 3*rollUpAt+1)
	if after > 2*rollUpAt {
		t.Fatalf("%d packs after the killed roll-up: no roll-up ran since", after)
	}
	gt.Fsck(t, dir)
}

// TestRollUp_ABurstWaitsForASlowRollUp: a roll-up slower than a burst of
// commits (here a git whose pack-objects takes a second, as a loaded
// machine made it) no longer lets packs pile up without bound: at
// PacksAtMost the next commit waits for this process's roll-up and
// deletes what it merged, so the count never passes PacksAtMost and one
// roll-up's new pack. Every commit lands and fsck finds the store whole.
func TestRollUp_ABurstWaitsForASlowRollUp(t *testing.T) {
	if testing.Short() {
		t.Skip("background processes and a slow git")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	s, dir := packStore(t, true)
	lock := filepath.Join(s.repo.StateDir(), "maintenance.lock")
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	bin := t.TempDir()
	script := "#!/bin/sh\ncase \" $* \" in *\" pack-objects \"*) sleep 1 ;; esac\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Cleanup(func() { gt.WaitRemoved(t, lock) })
	waits := rollUpWaits.Load()
	const commits = PacksAtMost + PacksAtMost/2
	most := 0
	for i := 0; i < commits; i++ {
		commitValue(t, s, i)
		most = max(most, len(packNames(t, pdir)))
	}
	t.Logf("%d commits: at most %d packs, %d waits", commits, most, rollUpWaits.Load()-waits)
	if most > PacksAtMost+1 {
		t.Errorf("%d packs during the burst, past %d and a roll-up's own", most, PacksAtMost)
	}
	if rollUpWaits.Load() == waits {
		t.Error("no commit waited for the slow roll-up: the test shows nothing")
	}
	gt.WaitRemoved(t, lock)
	if got := gt.Git(t, dir, "rev-list", "--count", "refs/ideate/t"); got != strconv.Itoa(commits) {
		t.Errorf("rev-list --count: %s, want %d", got, commits)
	}
	gt.Fsck(t, dir)
}
