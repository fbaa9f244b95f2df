//go:build linux

package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// retiredInodes lists the retired directory: inode number to link count.
// A file removed between the listing and its lstat (the spares goroutine
// frees them as it goes) is not counted.
func retiredInodes(t *testing.T, s *Store) map[uint64]uint64 {
	t.Helper()
	ents, err := os.ReadDir(s.retiredDir())
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[uint64]uint64{}
	for _, e := range ents {
		fi, err := os.Lstat(filepath.Join(s.retiredDir(), e.Name()))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		out[st.Ino] = uint64(st.Nlink)
	}
	return out
}

// A CLI call's Store (no spares, maintenance on) keeps the ref file a
// write replaces as a name in the retired directory: the same inode, no
// other name left, so its blocks are not freed inside the rename. The ref
// names the new commit, and git sees a whole repository.
func TestRetire_ReplacedRefKeptUntilLater(t *testing.T) {
	s, dir := packStore(t, true)
	commitValue(t, s, 0)
	ref := filepath.Join(s.repo.CommonDir, "refs", "ideate", "t")
	for i := 1; i <= 3; i++ {
		before := inode(t, ref)
		commitValue(t, s, i)
		got := retiredInodes(t, s)
		if n, ok := got[before]; !ok || n != 1 {
			t.Fatalf("write %d: the replaced ref file (inode %d) in the retired directory: %v (inode: links); want it there with one link", i, before, got)
		}
		if len(got) != i {
			t.Fatalf("write %d: %d retired files, want %d", i, len(got), i)
		}
	}
	if h := gt.Git(t, dir, "log", "-1", "--format=%s", "refs/ideate/t"); h != "write 3" {
		t.Fatalf("refs/ideate/t names %q, want write 3", h)
	}
	gt.Fsck(t, dir)
}

// Without maintenance a short-lived Store has nobody to free retired
// files later, so it frees them at once, as before.
func TestRetire_NoneWithoutMaintenanceOrSpares(t *testing.T) {
	s, _ := packStore(t, false)
	for i := range 3 {
		commitValue(t, s, i)
	}
	if got := retiredInodes(t, s); len(got) != 0 {
		t.Fatalf("retired files without maintenance or spares: %v", got)
	}
}

// A long-lived Store's spares goroutine takes what a write retired out
// of the retired directory once the write is done (a spare made of it,
// or freed), and removes the .keep of each write's pack.
func TestRetire_SparesGoroutineFreesThem(t *testing.T) {
	old := recycleAfter
	recycleAfter = 20 * time.Millisecond
	t.Cleanup(func() { recycleAfter = old })
	dir := gt.NewRepo(t)
	s := openWithSpares(t, dir, 3)
	readySpares(t, s, 3)
	for i := range 5 {
		writeOne(t, s, "refs/ideate/t", "v"+strconv.Itoa(i))
	}
	sp := s.spares()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sp.mu.Lock()
		reaped, waiting, ready := sp.reaped, len(sp.waits), len(sp.recycled)
		sp.mu.Unlock()
		left := retiredInodes(t, s)
		// What is left in the store's retired directory is its spares.
		keeps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.keep"))
		if reaped == 9 && waiting == 0 && len(left) == ready && len(keeps) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %d files dealt with by the goroutine (want 9: four replaced ref files, the first write replaced nothing, and five packs' .keep), %d left, %d of them spares, %d waiting, .keep files %v", reaped, len(left), ready, waiting, keeps)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h := gt.Git(t, dir, "log", "-1", "--format=%s", "refs/ideate/t"); h != "v4" {
		t.Fatalf("refs/ideate/t names %q", h)
	}
	gt.Fsck(t, dir)
}

// When every slot tried is taken, the write frees the replaced file at
// once and goes on: the directory never holds more than retiredSlots.
func TestRetire_FullDirectoryFreesAtOnce(t *testing.T) {
	s, dir := packStore(t, true)
	if err := os.MkdirAll(s.retiredDir(), 0o777); err != nil {
		t.Fatal(err)
	}
	for i := range retiredSlots {
		if err := os.WriteFile(filepath.Join(s.retiredDir(), strconv.FormatUint(uint64(i), 16)), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		commitValue(t, s, i)
	}
	if got := retiredInodes(t, s); len(got) != retiredSlots {
		t.Fatalf("%d retired files, want the %d slots", len(got), retiredSlots)
	}
	if h := gt.Git(t, dir, "log", "-1", "--format=%s", "refs/ideate/t"); h != "write 3" {
		t.Fatalf("refs/ideate/t names %q", h)
	}
	gt.Fsck(t, dir)
}

// A finished roll-up's merged packs leave objects/pack by a rename into
// the retired directory (git sees them gone, as after a deletion), and the
// next roll-up's shell frees every retired file.
func TestRetire_MergedPacksMovedOutAndTheRollUpFreesThem(t *testing.T) {
	s, dir := packStore(t, true)
	s.maint.enabled = false // this test starts the roll-ups itself
	for i := range 20 {
		commitValue(t, s, i)
	}
	s.maint.enabled = true // retiring is on for a Store with maintenance
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	rollUp := func(merged []string) {
		t.Helper()
		s.maint.spawnRollUp(merged)
		gt.WaitRemoved(t, filepath.Join(s.repo.StateDir(), "maintenance.lock"))
	}
	stray := filepath.Join(s.retiredDir(), "stray")
	if err := os.MkdirAll(s.retiredDir(), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	merged := s.maint.rollUpSet()
	if len(merged) < 2 {
		t.Fatalf("roll-up set %v", merged)
	}
	var mergedInodes []uint64
	for _, p := range merged {
		mergedInodes = append(mergedInodes, inode(t, filepath.Join(pdir, p)))
	}
	rollUp(merged)
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("the roll-up left a retired file: %v", err)
	}
	s.maint.finishRollUp()
	now := packNames(t, pdir)
	for _, p := range merged {
		if slices.Contains(now, p) {
			t.Fatalf("merged pack %s still in objects/pack", p)
		}
	}
	got := retiredInodes(t, s)
	if len(got) != 2*len(merged) {
		t.Fatalf("%d retired files after the roll-up finished, want %d (each merged pack and its index)", len(got), 2*len(merged))
	}
	for _, ino := range mergedInodes {
		if _, ok := got[ino]; !ok {
			t.Fatalf("merged pack inode %d not in the retired directory", ino)
		}
	}
	gt.Fsck(t, dir)
	for i := 20; i < 40; i++ {
		s.maint.enabled = false
		commitValue(t, s, i)
	}
	s.maint.enabled = true
	rollUp(s.maint.rollUpSet())
	if got := retiredInodes(t, s); len(got) != 0 {
		t.Fatalf("%d retired files after the next roll-up", len(got))
	}
	if n := gt.Git(t, dir, "rev-list", "--count", "refs/ideate/t"); n != "40" {
		t.Fatalf("rev-list --count: %s", n)
	}
	gt.Fsck(t, dir)
}
