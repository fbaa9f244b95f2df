//go:build linux

package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func spareDir(s *Store) string { return filepath.Join(s.repo.StateDir(), "spare") }

// fillPool runs the shell a roll-up ends with to make the pool's files.
func fillPool(t *testing.T, s *Store) {
	t.Helper()
	script := strings.TrimPrefix(s.poolShell(), "; ")
	if script == "" {
		t.Skip("no shared spares here")
	}
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("pool shell: %v\n%s", err, out)
	}
}

// poolInodes lists the pool's slots: inode number to size. Anything else
// in the spare directory but this process's own spares fails the test.
func poolInodes(t *testing.T, s *Store) map[uint64]int64 {
	t.Helper()
	ents, err := os.ReadDir(spareDir(s))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[uint64]int64{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), strconv.Itoa(os.Getpid())+"-") {
			continue // a long-lived store's own spares
		}
		if !strings.HasPrefix(e.Name(), "pool-") {
			t.Fatalf("%s in the spare directory", e.Name())
		}
		k, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "pool-"))
		if err != nil || k < 0 || k >= poolSlots {
			t.Fatalf("%s in the spare directory", e.Name())
		}
		fi, err := os.Lstat(filepath.Join(spareDir(s), e.Name()))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			t.Fatalf("%s is %v", e.Name(), fi.Mode())
		}
		out[fi.Sys().(*syscall.Stat_t).Ino] = fi.Size()
	}
	return out
}

// wholePool checks that every slot holds an empty file and returns them.
func wholePool(t *testing.T, s *Store) map[uint64]int64 {
	t.Helper()
	pool := poolInodes(t, s)
	if len(pool) != poolSlots {
		t.Fatalf("%d files in the pool, want %d", len(pool), poolSlots)
	}
	for ino, size := range pool {
		if size != 0 {
			t.Fatalf("pool file %d has %d bytes", ino, size)
		}
	}
	return pool
}

// A short-lived Store with maintenance on (a CLI call) takes its pack, its
// index and its ref lock from the clone's pool: three slots fewer per
// write, and the files in objects/pack and the ref are the pool's inodes.
func TestPool_ShortLivedWriteTakesPooledFiles(t *testing.T) {
	s, dir := packStore(t, true)
	fillPool(t, s)
	pool := wholePool(t, s)
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	ref := filepath.Join(s.repo.CommonDir, "refs", "ideate", "t")
	for i := 1; i <= 3; i++ {
		before := packNames(t, pdir)
		commitValue(t, s, i)
		left := poolInodes(t, s)
		if len(left) != poolSlots-3*i {
			t.Fatalf("write %d: %d files left in the pool, want %d", i, len(left), poolSlots-3*i)
		}
		var placed []string
		for _, p := range packNames(t, pdir) {
			if !slices.Contains(before, p) {
				placed = append(placed, filepath.Join(pdir, p), filepath.Join(pdir, strings.TrimSuffix(p, ".pack")+".idx"))
			}
		}
		if len(placed) != 2 {
			t.Fatalf("write %d placed %v", i, placed)
		}
		for _, p := range append(placed, ref) {
			if _, ok := pool[inode(t, p)]; !ok {
				t.Fatalf("write %d: %s is not one of the pool's files", i, p)
			}
		}
	}
	if h := gt.Git(t, dir, "log", "-1", "--format=%s", "refs/ideate/t"); h != "write 3" {
		t.Fatalf("refs/ideate/t names %q", h)
	}
	gt.Fsck(t, dir)
}

// Without maintenance nobody refills the pool, and a short-lived Store
// leaves it alone.
func TestPool_NotUsedWithoutMaintenance(t *testing.T) {
	s, _ := packStore(t, false)
	fillPool(t, s)
	for i := range 3 {
		commitValue(t, s, i)
	}
	if n := len(poolInodes(t, s)); n != poolSlots {
		t.Fatalf("%d files in the pool after writes without maintenance, want %d", n, poolSlots)
	}
}

// A roll-up's shell makes the missing slots and leaves no probe behind:
// the pool is whole again, every file empty.
func TestPool_RollUpRefillsIt(t *testing.T) {
	s, dir := packsToRollUp(t, 12)
	if n := len(poolInodes(t, s)); n != 0 {
		t.Fatalf("%d pool files before any roll-up", n)
	}
	commitValue(t, s, 12) // takes nothing: the pool is empty
	s.maint.spawnRollUp(s.maint.rollUpSet())
	gt.WaitRemoved(t, filepath.Join(s.repo.StateDir(), "maintenance.lock"))
	wholePool(t, s)
	for _, d := range []string{filepath.Join(s.repo.CommonDir, "objects", "pack"), filepath.Join(s.repo.CommonDir, "refs")} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.Contains(e.Name(), "probe") {
				t.Fatalf("probe left: %s", filepath.Join(d, e.Name()))
			}
		}
	}
	// A Store opened now (maintenance on) takes from the refilled pool.
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	commitValue(t, s2, 13)
	if n := len(poolInodes(t, s)); n != poolSlots-3 {
		t.Fatalf("%d files in the pool after one more write, want %d", n, poolSlots-3)
	}
	gt.Fsck(t, dir)
}

// TestPool_RefillProbesOnce: the first refill of a clone probes that a
// spare can move into objects/pack and refs/ (two links) and marks it;
// later refills start no process at all (every command they run is a
// shell builtin), and each leaves the pool whole.
func TestPool_RefillProbesOnce(t *testing.T) {
	s, _ := packStore(t, true)
	script := strings.TrimPrefix(s.poolShell(), "; ")
	if script == "" {
		t.Skip("no shared spares here")
	}
	run := func() string {
		out, err := exec.Command("sh", "-x", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("pool shell: %v\n%s", err, out)
		}
		wholePool(t, s)
		return string(out)
	}
	first := run()
	if !strings.Contains(first, "+ ln ") {
		t.Fatalf("the first refill did not probe:\n%s", first)
	}
	if _, err := os.Stat(filepath.Join(s.repo.StateDir(), "spare.probed")); err != nil {
		t.Fatalf("the probe's success is not marked: %v", err)
	}
	for k := range poolSlots / 2 { // as takes leave them
		os.Remove(poolSlot(spareDir(s), k))
	}
	second := run()
	for _, cmd := range []string{"+ ln ", "+ rm ", "+ mkdir "} {
		if strings.Contains(second, cmd) {
			t.Fatalf("the second refill ran %q:\n%s", strings.TrimSpace(cmd), second)
		}
	}
}

// Takers racing each other and a refill never get the same file: every
// file taken is a distinct inode, empty, at the taker's own name.
func TestPool_TakersNeverShareAFile(t *testing.T) {
	s, _ := packStore(t, true)
	fillPool(t, s)
	const takers, each = 8, 12
	var mu sync.Mutex
	seen := map[uint64]string{}
	var wg sync.WaitGroup
	refill := strings.TrimPrefix(s.poolShell(), "; ")
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 3 {
			exec.Command("sh", "-c", refill).Run()
		}
	}()
	for w := range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				own := filepath.Join(spareDir(s), strconv.Itoa(os.Getpid())+"-t"+strconv.Itoa(w)+"-"+strconv.Itoa(i))
				f := takePooled(spareDir(s), own)
				if f == nil {
					continue
				}
				fi, err := f.Stat()
				f.Close()
				if err != nil || fi.Size() != 0 || f.Name() != own {
					t.Errorf("taker %d: %v %v %s", w, err, fi, f.Name())
					return
				}
				ino := fi.Sys().(*syscall.Stat_t).Ino
				mu.Lock()
				if other, ok := seen[ino]; ok {
					t.Errorf("inode %d taken twice: %s and %s", ino, other, own)
				}
				seen[ino] = own
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) < poolSlots/2 {
		t.Fatalf("only %d files taken by %d takers", len(seen), takers*each)
	}
}

// A lock already held: the pooled file goes back into a slot, and the
// pool has as many files as before.
func TestPool_HeldLockGivesTheFileBack(t *testing.T) {
	s, _ := packStore(t, true)
	fillPool(t, s)
	lock := filepath.Join(s.repo.CommonDir, "refs", "ideate", "held.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	before := poolInodes(t, s)
	if f := lockWithSpare(lock, s.spares()); f != nil {
		t.Fatal("took a lock that is held")
	}
	if after := poolInodes(t, s); len(after) != len(before) {
		t.Fatalf("%d pool files after the refused take, %d before", len(after), len(before))
	}
}

// Pool files that are not empty (written to by hand) are removed, never
// used: the write makes its own files and git sees a whole repository.
func TestPool_WrittenFilesAreNotUsed(t *testing.T) {
	s, dir := packStore(t, true)
	fillPool(t, s)
	for k := range poolSlots {
		if err := os.WriteFile(poolSlot(spareDir(s), k), []byte(strings.Repeat("junk", 30000)), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	pool := poolInodes(t, s)
	commitValue(t, s, 0)
	left := poolInodes(t, s)
	if len(left) >= len(pool) {
		t.Fatalf("%d pool files after the write, %d before: the written ones tried are not removed", len(left), len(pool))
	}
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	for _, p := range packNames(t, pdir) {
		if b, err := os.ReadFile(filepath.Join(pdir, p)); err != nil || strings.Contains(string(b), "junk") {
			t.Fatalf("pack %s: %v, or a written pool file's bytes in it", p, err)
		}
	}
	gt.Fsck(t, dir)
}

// A spare directory on another mount than the objects: the refill's probe
// link fails, so no pool is made; and files put there by hand are tried
// once, refused by the rename (EXDEV), and the write goes on in place.
func TestPool_AnotherMountIsNotUsed(t *testing.T) {
	s, dir := packStore(t, true)
	shm, err := os.MkdirTemp("/dev/shm", "pool-")
	if err != nil {
		t.Skip("no /dev/shm")
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	var a, b syscall.Stat_t
	if syscall.Stat(shm, &a) != nil || syscall.Stat(dir, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is not another mount here")
	}
	if err := os.MkdirAll(s.repo.StateDir(), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shm, spareDir(s)); err != nil {
		t.Fatal(err)
	}
	exec.Command("sh", "-c", strings.TrimPrefix(s.poolShell(), "; ")).Run()
	if ents, _ := os.ReadDir(shm); len(ents) != 0 {
		t.Fatalf("the refill made %d files on another mount", len(ents))
	}
	if _, err := os.Stat(filepath.Join(s.repo.StateDir(), "spare.probed")); err == nil {
		t.Fatal("a failed probe was marked as passed")
	}
	for k := range poolSlots {
		if err := os.WriteFile(poolSlot(shm, k), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		commitValue(t, s, i)
	}
	if h := gt.Git(t, dir, "log", "-1", "--format=%s", "refs/ideate/t"); h != "write 2" {
		t.Fatalf("refs/ideate/t names %q", h)
	}
	gt.Fsck(t, dir)
}

// A long-lived Store takes the pool's files before its own spares where
// poolFirst is set (ext4 without a journal), and only its own elsewhere.
func TestPool_LongLivedStoreTakesPoolFirstWhereSet(t *testing.T) {
	for _, first := range []bool{true, false} {
		dir := gt.NewRepo(t)
		t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
		s := openWithSpares(t, dir, 3)
		own := readySpares(t, s, 3)
		sp := s.spares()
		sp.mu.Lock()
		sp.poolFirst = first
		sp.mu.Unlock()
		fillPool(t, s)
		pool := poolInodes(t, s)
		writeOne(t, s, "refs/ideate/t", "v")
		ino := inode(t, filepath.Join(s.repo.CommonDir, "refs", "ideate", "t"))
		_, fromPool := pool[ino]
		if fromPool != first || own[ino] == first {
			t.Fatalf("poolFirst %v: the ref's inode is the pool's: %v, the store's own spare's: %v", first, fromPool, own[ino])
		}
		if n := len(poolInodes(t, s)); first && n != poolSlots-3 || !first && n != poolSlots {
			t.Fatalf("poolFirst %v: %d files left in the pool", first, n)
		}
		gt.Fsck(t, dir)
	}
}

// The files a roll-up's caller leaves for its shell (the list of merged
// packs, the object names) are spares renamed into place when the pool
// has some, not new inodes; the shell can append to them, and the roll-up
// it starts merges the packs as ever.
func TestPool_RollUpFilesAreSpares(t *testing.T) {
	s, dir := packsToRollUp(t, 20)
	fillPool(t, s)
	before := poolInodes(t, s)
	// A store opened now, as a CLI call opens one (maintenance on: the
	// pool is its spares).
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	state := filepath.Join(s.repo.StateDir(), "state-probe")
	if err = s.writeState(state, []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(state, &st); err != nil {
		t.Fatal(err)
	}
	if _, ok := before[uint64(st.Ino)]; !ok {
		t.Fatalf("%s is a new inode, not one of the pool's %d", state, len(before))
	}
	f, err := os.OpenFile(state, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatalf("the shell could not append to it: %v", err)
	}
	f.WriteString("b\n")
	f.Close()
	if data, _ := os.ReadFile(state); string(data) != "a\nb\n" {
		t.Fatalf("%s holds %q", state, data)
	}
	os.Remove(state)

	left := len(poolInodes(t, s))
	merged := s.maint.rollUpSet()
	if len(merged) == 0 {
		t.Fatal("no roll-up due after 20 packs")
	}
	s.maint.spawnRollUp(merged)
	if n := len(poolInodes(t, s)); n != left-2 {
		t.Fatalf("%d pool files after the roll-up started, want %d: its list and input from the pool", n, left-2)
	}
	gt.WaitRemoved(t, filepath.Join(s.repo.StateDir(), "maintenance.lock"))
	s.maint.finishRollUp()
	if got := gt.Git(t, dir, "rev-list", "--count", "refs/ideate/t"); got != "20" {
		t.Fatalf("rev-list --count: %s", got)
	}
	if n := len(packNames(t, filepath.Join(s.repo.CommonDir, "objects", "pack"))); n >= 20 {
		t.Fatalf("%d packs after the roll-up", n)
	}
	gt.Fsck(t, dir)
}

// packsToRollUp is a store with maintenance on and n packs of one commit
// each, written with maintenance off so that the test starts the roll-up
// itself.
func packsToRollUp(t *testing.T, n int) (*Store, string) {
	t.Helper()
	s, dir := packStore(t, true)
	s.maint.enabled = false
	for i := range n {
		commitValue(t, s, i)
	}
	s.maint.enabled = true
	return s, dir
}
