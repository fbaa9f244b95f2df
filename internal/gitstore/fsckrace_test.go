package gitstore_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// TestMaintenance_FsckNeverSeesMissingObjects: appends with the
// maintenance repack on (gc.auto and gc.autoPackLimit low, so it runs every few
// writes, both the plain and the -a kind), and `git fsck` run right after
// each burst of writes. fsck must never report a missing object:
// maintenance may not take away a loose object or a pack that a reader
// which listed it a moment ago still looks for, so the write that starts
// a repack returns only once it is done (without that wait this failed 3
// of 30 rounds).
func TestMaintenance_FsckNeverSeesMissingObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	dir := gt.NewRepo(t)
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	gt.Git(t, dir, "config", "gc.auto", "20")
	gt.Git(t, dir, "config", "gc.autoPackLimit", "3")
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const rounds, burst = 30, 40
	const ref = "refs/ideate/counter"
	bad := 0
	for r := 0; r < rounds; r++ {
		for i := 0; i < burst; i++ {
			if _, err := s.Transact(t.Context(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
				blob, err := s.WriteBlob([]byte(fmt.Sprintf("%d %d", r, i)))
				if err != nil {
					return gitstore.ZeroHash, "", err
				}
				tree, err := s.WriteTree([]gitstore.TreeEntry{{Mode: gitstore.ModeFile, Name: "n", Hash: blob}})
				return tree, fmt.Sprintf("round %d seq %d\n", r, i), err
			}); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", "fsck", "--no-progress", "--no-dangling")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "missing") {
			bad++
			t.Errorf("round %d: git fsck: %v\n%s", r, err, out)
		}
	}
	// Let the last repack finish, then the repository is whole.
	lock := filepath.Join(dir, ".git", "ideate", "maintenance.lock")
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(lock); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d of %d fsck runs saw a broken repository", bad, rounds)
	gt.Fsck(t, dir)
}

// Writing an object that already exists loose freshens it, as git does:
// an unreachable leftover (a lost compare-and-swap attempt) older than an
// hour is what maintenance's `git prune --expire=1.hour.ago` deletes, and
// a new commit that reuses it must not lose it to that prune.
func TestWriteObject_FreshensAnExistingLooseObject(t *testing.T) {
	dir := gt.NewRepo(t)
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.WriteBlob([]byte("leftover"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".git", "objects", h.String()[:2], h.String()[2:])
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteBlob([]byte("leftover")); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "prune", "--expire=1.hour.ago")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the object written again was pruned: %v", err)
	}
}

// The usual repack deletes nothing; the commit after it finished deletes
// the loose copies it packed, so loose objects do not pile up.
func TestMaintenance_LooseCopiesGoAtTheNextCommit(t *testing.T) {
	dir := gt.NewRepo(t)
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	gt.Git(t, dir, "config", "gc.auto", "20")
	// The usual repack, not the full one: per-write packs may pass git's
	// default gc.autoPackLimit while roll-ups lag behind on a loaded
	// machine, and the full repack leaves no mark.
	gt.Git(t, dir, "config", "gc.autoPackLimit", "100000")
	// A roll-up the last commits started runs detached; the temporary
	// directory goes once it has ended.
	t.Cleanup(func() { waitNoMaintenance(t, dir) })
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	commit := func() {
		t.Helper()
		n++
		// Written outside the transaction, the blob is a loose object (a
		// transaction's own objects go to one pack).
		blob, err := s.WriteBlob([]byte(fmt.Sprint(n)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Transact(t.Context(), "refs/ideate/counter", func(tip gitstore.Hash) (gitstore.Hash, string, error) {
			tree, err := s.WriteTree([]gitstore.TreeEntry{{Mode: gitstore.ModeFile, Name: "n", Hash: blob}})
			return tree, fmt.Sprintf("seq %d\n", n), err
		}); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(dir, ".git", "ideate")
	loose := func() int {
		out := gt.Git(t, dir, "count-objects")
		var c int
		fmt.Sscanf(out, "%d objects", &c)
		return c
	}
	// Commit until the usual repack has started (its lock says "repack")
	// or has left its mark: a commit after it ended would take the mark
	// and delete the loose copies itself, before the test could look.
	for i := 0; i < 3000; i++ {
		commit()
		if _, err := os.Stat(filepath.Join(state, "repacked")); err == nil {
			break
		}
		if b, _ := os.ReadFile(filepath.Join(state, "maintenance.lock")); strings.HasPrefix(string(b), "repack\n") {
			break
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, errMark := os.Stat(filepath.Join(state, "repacked"))
		_, errLock := os.Stat(filepath.Join(state, "maintenance.lock"))
		if errMark == nil && errLock != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no background repack finished")
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := loose()
	if before == 0 {
		t.Fatal("the background repack deleted the loose copies itself")
	}
	commit()
	if after := loose(); after >= before {
		t.Fatalf("loose objects %d before the next commit, %d after", before, after)
	}
	if _, err := os.Stat(filepath.Join(state, "repacked")); err == nil {
		t.Fatal("the mark is still there")
	}
	gt.Fsck(t, dir)
}

// waitNoMaintenance waits (up to a minute) until no background maintenance
// job of dir's repository holds its lock.
func waitNoMaintenance(t *testing.T, dir string) {
	t.Helper()
	lock := filepath.Join(dir, ".git", "ideate", "maintenance.lock")
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(lock); err != nil {
			return
		}
	}
	t.Error("a background maintenance job still runs after a minute")
}
