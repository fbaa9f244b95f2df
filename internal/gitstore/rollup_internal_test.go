package gitstore

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// packNames lists the pack files of a pack directory, sorted by name.
func packNames(t *testing.T, pdir string) []string {
	t.Helper()
	ents, err := os.ReadDir(pdir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pack") {
			names = append(names, e.Name())
		}
	}
	return names
}

// keptBy is the packs of pdir a roll-up of merged leaves in place.
func keptBy(t *testing.T, pdir string, merged []string) []string {
	t.Helper()
	var kept []string
	for _, p := range packNames(t, pdir) {
		if !slices.Contains(merged, p) {
			kept = append(kept, p)
		}
	}
	return kept
}

// objectsOf is `git show-index` of a pack: its object names, sorted.
func objectsOf(t *testing.T, dir, pdir, pack string) []string {
	t.Helper()
	idx, err := os.ReadFile(filepath.Join(pdir, strings.TrimSuffix(pack, ".pack")+".idx"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(gt.GitStdin(t, dir, string(idx), "show-index")), "\n") {
		f := strings.Fields(line)
		out = append(out, f[1])
	}
	slices.Sort(out)
	return out
}

// A roll-up's new pack holds every object of the merged packs (an index
// of version 1 among them too), the merged packs are deleted by the next
// commit, and the repository stays whole.
func TestRollUp_NamesEveryMergedObject(t *testing.T) {
	for _, v1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v1=%v", v1), func(t *testing.T) {
			s, dir := packStore(t, false)
			for i := range 100 {
				commitValue(t, s, i)
			}
			gt.Git(t, dir, "repack", "-q", "-a", "-d") // one big pack that stays
			for i := 100; i < 120; i++ {
				commitValue(t, s, i)
			}
			pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
			merged := s.maint.rollUpSet()
			kept := keptBy(t, pdir, merged)
			if len(merged) != 20 || len(kept) != 1 {
				t.Fatalf("roll-up set: %d merged, %d kept; want 20 and 1", len(merged), len(kept))
			}
			if v1 {
				base := filepath.Join(pdir, strings.TrimSuffix(merged[5], ".pack"))
				os.Remove(base + ".idx")
				gt.Git(t, dir, "index-pack", "--index-version=1", "-o", base+".idx", base+".pack")
			}
			var want []string
			for _, p := range merged {
				want = append(want, objectsOf(t, dir, pdir, p)...)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			s.maint.spawnRollUp(merged)
			mark := filepath.Join(s.repo.StateDir(), "rolled-up")
			lock := filepath.Join(s.repo.StateDir(), "maintenance.lock")
			for i := 0; ; i++ {
				_, errMark := os.Stat(mark)
				_, errLock := os.Stat(lock)
				if errMark == nil && errLock != nil { // done, and its clean-up too
					break
				}
				if i == 500 {
					t.Fatal("no roll-up mark after 10 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := os.Stat(filepath.Join(s.repo.StateDir(), "rollup.list")); err == nil {
				t.Errorf("the roll-up left rollup.list behind")
			}
			s.maint.finishRollUp()
			now := packNames(t, pdir)
			if len(now) != 2 || !slices.Contains(now, kept[0]) {
				t.Fatalf("packs after the roll-up: %v; want the kept one and the new one", now)
			}
			var made string
			for _, p := range now {
				if p != kept[0] {
					made = p
				}
			}
			if got := objectsOf(t, dir, pdir, made); !slices.Equal(got, want) {
				t.Fatalf("the roll-up's pack holds %d objects, the merged packs held %d", len(got), len(want))
			}
			if got := gt.Git(t, dir, "rev-list", "--count", "refs/ideate/t"); got != "120" {
				t.Errorf("rev-list --count: %s", got)
			}
			gt.Fsck(t, dir)
		})
	}
}

// A roll-up that cannot read a merged pack's index fails: no mark, its
// files and lock removed, every pack still there, and the repository whole.
func TestRollUp_BrokenIndexStopsIt(t *testing.T) {
	s, dir := packStore(t, false)
	for i := range 20 {
		commitValue(t, s, i)
	}
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	merged := s.maint.rollUpSet()
	if len(merged) != 20 {
		t.Fatalf("roll-up set: %d merged, want 20", len(merged))
	}
	idx := filepath.Join(pdir, strings.TrimSuffix(merged[3], ".pack")+".idx")
	good, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(idx, 0o644)
	if err := os.WriteFile(idx, good[:100], 0o444); err != nil {
		t.Fatal(err)
	}
	s.maint.spawnRollUp(merged)
	gt.WaitRemoved(t, filepath.Join(s.repo.StateDir(), "maintenance.lock"))
	for _, f := range []string{"rolled-up", "rollup.list"} {
		if _, err := os.Stat(filepath.Join(s.repo.StateDir(), f)); err == nil {
			t.Errorf("a failed roll-up left %s", f)
		}
	}
	if now := packNames(t, pdir); len(now) != 20 {
		t.Fatalf("%d packs after a failed roll-up, want the 20", len(now))
	}
	os.Chmod(idx, 0o644)
	os.WriteFile(idx, good, 0o444)
	gt.Fsck(t, dir)
}

// A long-lived store lists objects/pack only when its own packs since the
// last listing could have brought the count to rollUpAt, not after every
// commit; roll-ups still keep the packs down.
func TestRollUp_ListsThePackDirectoryOnlyWhenOneMayBeDue(t *testing.T) {
	listings := 0
	testHookListPacks = func() { listings++ }
	t.Cleanup(func() { testHookListPacks = nil })
	s, dir := packStore(t, true)
	const commits = 48
	for i := range commits {
		commitValue(t, s, i)
	}
	during := listings
	lock := filepath.Join(s.repo.StateDir(), "maintenance.lock")
	// A roll-up's merged packs go at the commit after it ends; on a slow
	// machine the burst outruns the roll-ups, so let them catch up.
	for i := 0; i < 3; i++ {
		gt.WaitRemoved(t, lock)
		commitValue(t, s, commits+i)
	}
	gt.WaitRemoved(t, lock)
	packs := len(packNames(t, filepath.Join(s.repo.CommonDir, "objects", "pack")))
	t.Logf("%d commits: %d listings of objects/pack, %d packs after three more", commits, during, packs)
	if during > commits/3 {
		t.Errorf("objects/pack listed %d times in %d commits; want at most %d", during, commits, commits/3)
	}
	if during == 0 || packs > 2*rollUpAt {
		t.Errorf("%d listings, %d packs: roll-ups no longer keep the packs down", during, packs)
	}
	gt.Fsck(t, dir)
}

// packStore opens a store over a new repository with per-transaction packs
// on, and background maintenance on or off.
func packStore(t *testing.T, maintenance bool) (*Store, string) {
	t.Helper()
	dir := gt.NewRepo(t) // which turns maintenance off
	if maintenance {
		t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// commitValue commits "value i" in one of three files on refs/ideate/t.
func commitValue(t *testing.T, s *Store, i int) {
	t.Helper()
	_, err := s.Transact(t.Context(), "refs/ideate/t", func(tip Hash) (Hash, string, error) {
		b, err := s.WriteBlob([]byte("value " + strconv.Itoa(i) + "\n"))
		if err != nil {
			return ZeroHash, "", err
		}
		tree, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f" + strconv.Itoa(i%3), Hash: b}})
		return tree, "write " + strconv.Itoa(i) + "\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A roll-up weighs packs by the objects they hold, as git repack
// --geometric does, not by their bytes: a pack of 300 small objects that
// git packed into few bytes stays beside 20 writes of a large random blob
// each (60 objects, many more bytes), which are merged.
func TestRollUpSet_WeighsObjectsNotBytes(t *testing.T) {
	s, dir := packStore(t, false)
	for i := range 100 {
		commitValue(t, s, i)
	}
	gt.Git(t, dir, "repack", "-q", "-a", "-d")
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	big := packNames(t, pdir)
	if len(big) != 1 {
		t.Fatalf("packs after git repack: %v", big)
	}
	noise := make([]byte, 8192)
	for i := range 20 {
		rand.Read(noise)
		_, err := s.Transact(t.Context(), "refs/ideate/t", func(tip Hash) (Hash, string, error) {
			b, err := s.WriteBlob(noise)
			if err != nil {
				return ZeroHash, "", err
			}
			tree, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "noise", Hash: b}})
			return tree, "noise " + strconv.Itoa(i) + "\n", err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fi, _ := os.Stat(filepath.Join(pdir, big[0]))
	if fi.Size() > 20*8192/2 {
		t.Fatalf("git's pack is %d bytes: not light enough for this test", fi.Size())
	}
	merged := s.maint.rollUpSet()
	kept := keptBy(t, pdir, merged)
	if len(merged) != 20 || !slices.Equal(kept, big) {
		t.Fatalf("roll-up set: %d merged, kept %v; want the 20 writes merged and git's pack %v kept", len(merged), kept, big)
	}
}

// The large packs the geometric progression keeps do not count toward a
// roll-up: with ten of them, fifteen small packs wait, and the sixteenth
// starts one that merges the small packs alone. (Counting every pack, a
// store with thousands of records rolled up every few writes.)
func TestRollUpSet_WaitsForRollUpAtSmallPacks(t *testing.T) {
	s, _ := packStore(t, false)
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	if err := os.MkdirAll(pdir, 0o777); err != nil {
		t.Fatal(err)
	}
	n := 0
	fake := func(objects int) string {
		n++
		base := filepath.Join(pdir, fmt.Sprintf("pack-%040x", n))
		os.WriteFile(base+".pack", nil, 0o444)
		os.WriteFile(base+".idx", make([]byte, idxHead+objects*idxPerObject+idxTrailer), 0o444)
		return filepath.Base(base) + ".pack"
	}
	var small []string
	for range rollUpAt - 1 {
		small = append(small, fake(9))
	}
	sum := 9 * rollUpAt // the progression holds with the sixteenth small pack too
	for range 10 {
		big := 2*sum + 1
		fake(big)
		sum += big
	}
	if merged := s.maint.rollUpSet(); merged != nil {
		t.Fatalf("%d small packs beside the progression: merged %v, want none yet", len(small), merged)
	}
	small = append(small, fake(9))
	merged := s.maint.rollUpSet()
	slices.Sort(merged)
	slices.Sort(small)
	if !slices.Equal(merged, small) {
		t.Fatalf("merged %v, want the %d small packs %v", merged, len(small), small)
	}
}
