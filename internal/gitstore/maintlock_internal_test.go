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

// goneProcess is the pid of a process that has started and been reaped.
func goneProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestLockStale: a maintenance lock stands while the shell its pid line
// names lives on this host; it is stale at once when that shell is gone,
// after lockNoPidAge when it never got a pid line, and after lockMaxAge
// whatever it says. A lock of another host stands until lockMaxAge.
func TestLockStale(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gone := goneProcess(t)
	for _, tc := range []struct {
		name, text string
		age        time.Duration
		stale      bool
	}{
		{"a live shell", "roll-up\npid " + strconv.Itoa(os.Getpid()) + " " + host + "\n", 0, false},
		{"a gone shell", "roll-up\npid " + strconv.Itoa(gone) + " " + host + "\n", 0, true},
		{"a gone shell of a repack", "repack\npid " + strconv.Itoa(gone) + " " + host + "\n", time.Second, true},
		{"another host's", "roll-up\npid " + strconv.Itoa(gone) + " elsewhere.example\n", 10 * time.Minute, false},
		{"another host's, old", "roll-up\npid " + strconv.Itoa(gone) + " elsewhere.example\n", lockMaxAge + time.Minute, true},
		{"a live shell, old", "roll-up\npid " + strconv.Itoa(os.Getpid()) + " " + host + "\n", lockMaxAge + time.Minute, true},
		{"no pid yet", "roll-up\n", 0, false},
		{"never a pid", "roll-up\n", lockNoPidAge + time.Second, true},
		{"a pid line cut short", "roll-up\npid ", 0, false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-tc.age)
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := lockStale(path, fi); got != tc.stale {
			t.Errorf("%s: stale %v, want %v", tc.name, got, tc.stale)
		}
		// Breaking removes exactly the stale ones.
		if broke := breakStaleMaintenance(path); broke != tc.stale {
			t.Errorf("%s: broken %v, want %v", tc.name, broke, tc.stale)
		}
		if _, err := os.Stat(path); (err == nil) == tc.stale {
			t.Errorf("%s: the lock is there %v after breaking", tc.name, err == nil)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.stale-*")); len(left) != 0 {
		t.Errorf("files moved aside and left: %v", left)
	}
}

// TestRollUp_KilledRollUpDoesNotStopTheNext: a roll-up killed with its
// whole process group (kill -9) mid-way leaves its lock, with its shell's
// pid in it; the next commits see the shell gone, break the lock and roll
// the packs up, so the pack count stays bounded instead of growing by one
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

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
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
