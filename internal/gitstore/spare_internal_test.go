//go:build linux

package gitstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func openWithSpares(t *testing.T, dir string, n int) *Store {
	t.Helper()
	r, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Spares = n
	s := OpenRepo(r, opt)
	t.Cleanup(func() { s.Close() })
	return s
}

// readySpares starts s's spares and waits until n are made, returning the
// inode numbers of the free ones.
func readySpares(t *testing.T, s *Store, n int) map[uint64]bool {
	t.Helper()
	sp := s.spares()
	if sp == nil {
		t.Fatal("no spares on this repository")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		sp.mu.Lock()
		free := append([]*os.File(nil), sp.free...)
		sp.mu.Unlock()
		if len(free) >= n {
			inos := map[uint64]bool{}
			for _, f := range free {
				inos[inode(t, f.Name())] = true
			}
			return inos
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spares made after 10 s, want %d", len(free), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Ino)
}

func writeOne(t *testing.T, s *Store, ref, payload string) Hash {
	t.Helper()
	h, err := s.Transact(context.Background(), ref, func(tip Hash) (Hash, string, error) {
		b, err := s.WriteBlob([]byte(payload))
		if err != nil {
			return ZeroHash, "", err
		}
		tree, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f", Hash: b}})
		return tree, payload + "\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A write of a Store with spares makes no file: its pack, its index and
// its ref are spares renamed into place (the same inodes), the ref is
// moved under the ref's lock as before, and git reads all of it; the
// pack files are read-only like git's. Close removes the spares not used.
func TestSpares_AWriteRenamesSparesIntoPlace(t *testing.T) {
	dir := gt.NewRepo(t)
	s := openWithSpares(t, dir, 4)
	spareInos := readySpares(t, s, 4)
	made := s.spareSet.made
	pack := filepath.Join(s.repo.CommonDir, "objects", "pack")
	before, _ := os.ReadDir(pack)

	h := writeOne(t, s, "refs/ideate/spare-test", "spare payload")

	after, _ := os.ReadDir(pack)
	var placed []string
	for _, e := range after {
		if !containsName(before, e.Name()) {
			placed = append(placed, e.Name())
		}
	}
	var fromSpare int
	for _, n := range placed {
		p := filepath.Join(pack, n)
		if strings.HasSuffix(n, ".pack") || strings.HasSuffix(n, ".idx") {
			if !spareInos[inode(t, p)] {
				t.Errorf("%s is a new inode, not one of the spares", n)
			} else {
				fromSpare++
			}
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != 0o444 {
				t.Errorf("%s has mode %v, want read-only", n, fi.Mode().Perm())
			}
		}
	}
	if fromSpare != 2 {
		t.Fatalf("new files in objects/pack %v: %d of them spares, want the .pack and the .idx", placed, fromSpare)
	}
	refFile := filepath.Join(s.repo.CommonDir, "refs", "ideate", "spare-test")
	if !spareInos[inode(t, refFile)] {
		t.Errorf("the ref file is a new inode, not a spare (its lock was created, not renamed)")
	}
	if got := gt.Git(t, dir, "rev-parse", "refs/ideate/spare-test"); got != h.String() {
		t.Fatalf("git reads the ref as %s, want %s", got, h)
	}
	if got := gt.Git(t, dir, "cat-file", "-p", "refs/ideate/spare-test:f"); got != "spare payload" {
		t.Fatalf("git reads the blob as %q", got)
	}
	gt.Fsck(t, dir)
	// The goroutine makes new spares for the three taken.
	readySpares(t, s, 4)
	if got := s.spareSet.made - made; got != 3 {
		t.Errorf("%d spares made after the write, want 3", got)
	}
	spareDir := filepath.Join(s.repo.StateDir(), "spare")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(spareDir); len(left) != 0 {
		t.Fatalf("Close left %d spare files", len(left))
	}
	// A Store closed makes its files as before and starts no spares.
	writeOne(t, s, "refs/ideate/spare-test-2", "after close")
	if left, _ := os.ReadDir(spareDir); len(left) != 0 {
		t.Fatalf("a write after Close made %d spare files", len(left))
	}
}

func containsName(ents []os.DirEntry, name string) bool {
	for _, e := range ents {
		if e.Name() == name {
			return true
		}
	}
	return false
}

// A lock that exists (git holds it) is not replaced by a spare's rename:
// the writer waits as before and reports the lock; git's lock file keeps
// its content and the spare goes back to the pool.
func TestSpares_ExistingLockIsNotReplaced(t *testing.T) {
	dir := gt.NewRepo(t)
	s := openWithSpares(t, dir, 4)
	s.SetLockPolicy(LockPolicy{Timeout: 200 * time.Millisecond, StaleAfter: time.Hour})
	writeOne(t, s, "refs/ideate/locked", "first")
	// The write's pack and index take two; two are left for the lock, so
	// the lock is tried by renaming a spare, not only by creating a file.
	readySpares(t, s, 4)
	lock := filepath.Join(s.repo.CommonDir, "refs", "ideate", "locked.lock")
	if err := os.WriteFile(lock, []byte("git's own\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := s.Transact(context.Background(), "refs/ideate/locked", func(tip Hash) (Hash, string, error) {
		tree, err := s.WriteTree(nil)
		return tree, "second\n", err
	})
	if !apperr.Is(err, apperr.Locked) {
		t.Fatalf("err = %v, want %s", err, apperr.Locked)
	}
	if b, _ := os.ReadFile(lock); string(b) != "git's own\n" {
		t.Fatalf("the held lock now holds %q", b)
	}
	s.spareSet.mu.Lock()
	free := len(s.spareSet.free)
	s.spareSet.mu.Unlock()
	if free < 1 {
		t.Fatalf("%d spares free after the refused rename, want the spare back", free)
	}
}

// A lock renamed from a spare carries the spare's old mtime, so only its
// flock keeps another process's stale-lock breaker away: the breaker must
// leave it alone while the writer holds it.
func TestSpares_OldSpareLockIsNotBrokenWhileHeld(t *testing.T) {
	dir := gt.NewRepo(t)
	s := openWithSpares(t, dir, 1)
	readySpares(t, s, 1)
	s.spareSet.mu.Lock()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(s.spareSet.free[0].Name(), old, old)
	s.spareSet.mu.Unlock()
	lock := filepath.Join(s.repo.CommonDir, "refs", "ideate", "new", "ref.lock")
	f := lockWithSpare(lock, s.spareSet)
	if f == nil {
		t.Fatal("no lock taken with a spare ready (its directory was missing)")
	}
	defer f.Close()
	if breakStaleLock(lock, time.Second) {
		t.Fatal("a held lock with an old mtime was broken")
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the held lock is gone: %v", err)
	}
	// Once its holder is gone it is stale like any other.
	f.Close()
	if !breakStaleLock(lock, time.Second) {
		t.Fatal("an unheld old lock was not broken")
	}
}

// The spares of a process that died are removed when a store starts its
// own; those of a live process are left alone.
func TestSpares_DeadProcessesSparesAreCleared(t *testing.T) {
	dir := gt.NewRepo(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	spareDir := filepath.Join(dir, ".git", "ideate", "spare")
	if err := os.MkdirAll(spareDir, 0o777); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(spareDir, strconv.Itoa(cmd.Process.Pid)+"-7")
	live := filepath.Join(spareDir, strconv.Itoa(os.Getppid())+"-3")
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	s := openWithSpares(t, dir, 1)
	readySpares(t, s, 1)
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead process's spare is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's spare was removed: %v", err)
	}
}

// When a spare cannot be renamed into the objects (here they are on
// another file system), the store makes no spares and writes as before.
func TestSpares_OffWhenObjectsAreOnAnotherFileSystem(t *testing.T) {
	other := "/dev/shm"
	if fi, err := os.Stat(other); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm to hold the objects")
	}
	dir := gt.NewRepo(t)
	elsewhere, err := os.MkdirTemp(other, "spares-objects-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(elsewhere) })
	objects := filepath.Join(dir, ".git", "objects")
	if err := os.Rename(objects, filepath.Join(elsewhere, "objects")); err == nil {
		t.Fatal("objects renamed onto /dev/shm: it is not another file system here")
	}
	if out, err := exec.Command("cp", "-a", objects, elsewhere).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.RemoveAll(objects)
	if err := os.Symlink(filepath.Join(elsewhere, "objects"), objects); err != nil {
		t.Fatal(err)
	}
	s := openWithSpares(t, dir, 2)
	if s.spares() != nil {
		t.Fatal("spares started although they cannot be renamed into the objects")
	}
	h := writeOne(t, s, "refs/ideate/elsewhere", "payload")
	if got := gt.Git(t, dir, "rev-parse", "refs/ideate/elsewhere"); got != h.String() {
		t.Fatalf("git reads %s, want %s", got, h)
	}
	gt.Fsck(t, dir)
}

// Spares removed by hand while the store runs (the whole directory) cost
// nothing but themselves: the writes go on, and new spares are made.
func TestSpares_RemovedByHandWritesGoOn(t *testing.T) {
	dir := gt.NewRepo(t)
	s := openWithSpares(t, dir, 3)
	readySpares(t, s, 3)
	spareDir := filepath.Join(s.repo.StateDir(), "spare")
	if err := os.RemoveAll(spareDir); err != nil {
		t.Fatal(err)
	}
	var h Hash
	for i := 0; i < 3; i++ {
		h = writeOne(t, s, "refs/ideate/removed", "payload "+strconv.Itoa(i))
	}
	if got := gt.Git(t, dir, "rev-parse", "refs/ideate/removed"); got != h.String() {
		t.Fatalf("git reads %s, want %s", got, h)
	}
	gt.Fsck(t, dir)
	readySpares(t, s, 3)
	// Besides the 3 made again, the replaced ref files the writes
	// retired after the removal wait in the store's own retired
	// directory (see recycle), ready or not yet.
	sp := s.spares()
	var free, held int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		sp.mu.Lock()
		reaped := sp.reaped
		free, held = len(sp.free), len(sp.recycled)+len(sp.waits)
		sp.mu.Unlock()
		if reaped >= 2 || time.Now().After(deadline) {
			break // the two replaced ref files are recycled or freed
		}
	}
	var files int
	ents, _ := os.ReadDir(spareDir)
	for _, e := range ents {
		if !e.IsDir() {
			files++
		}
	}
	if files != free || free < 3 {
		t.Fatalf("%d spares in the directory made again, want %d (at least 3)", files, free)
	}
	if got, _ := os.ReadDir(sp.held); len(got) != held {
		t.Fatalf("%d files in the store's retired directory, want %d", len(got), held)
	}
}

// Two stores of one process on one repository keep spares of their own
// (their names never collide), and closing one leaves the other's.
func TestSpares_TwoStoresOfOneProcess(t *testing.T) {
	dir := gt.NewRepo(t)
	a, b := openWithSpares(t, dir, 3), openWithSpares(t, dir, 3)
	readySpares(t, a, 3)
	readySpares(t, b, 3)
	spareDir := filepath.Join(a.repo.StateDir(), "spare")
	if ents, _ := os.ReadDir(spareDir); len(ents) != 6 {
		t.Fatalf("%d spare files for two stores of 3, want 6", len(ents))
	}
	a.Close()
	if ents, _ := os.ReadDir(spareDir); len(ents) != 3 {
		t.Fatalf("%d spare files after one store closed, want the other's 3", len(ents))
	}
	writeOne(t, b, "refs/ideate/two", "from b")
	gt.Fsck(t, dir)
}

// While a hold lasts (HoldSpares, as the MCP server holds one for each
// write call until its answer is written), a write leaves what it hands
// to the spares goroutine — its pack's .keep to remove, the spares it took
// to make again — for the release; then the goroutine does it all.
func TestHoldSpares_DefersTheGoroutinesWorkToTheRelease(t *testing.T) {
	dir := gt.NewRepo(t)
	s := openWithSpares(t, dir, 4)
	readySpares(t, s, 4)
	sp := s.spares()
	keeps := func() []string {
		k, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.keep"))
		return k
	}
	release := HoldSpares()
	inner := HoldSpares() // holds nest
	writeOne(t, s, "refs/ideate/t", "held")
	inner()
	time.Sleep(200 * time.Millisecond)
	sp.mu.Lock()
	free := len(sp.free)
	sp.mu.Unlock()
	if free != 1 || len(keeps()) != 1 {
		t.Fatalf("during the hold: %d spares ready (want 1: the write took 3 of 4, none made), .keep files %v (want its pack's)", free, keeps())
	}
	release()
	release() // a second call does nothing
	readySpares(t, s, 4)
	for deadline := time.Now().Add(10 * time.Second); len(keeps()) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the release the .keep files are still there: %v", keeps())
		}
	}
	if held.n.Load() != 0 || len(held.pending) != 0 {
		t.Fatalf("after the release: %d holds, %d spares pending", held.n.Load(), len(held.pending))
	}
	// Without a hold the goroutine answers at once, as before.
	writeOne(t, s, "refs/ideate/t", "free")
	readySpares(t, s, 4)
}
