package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// A long-lived Store's roll-up (the MCP server's) runs git pack-objects
// alone and finishes it itself: the mark, the input and the lock removed,
// no shell — unless the clone's pool of spares has an empty slot, which
// a shell fills after git. Either way the new pack holds every object of
// the merged packs and the next commit's clean-up leaves the repository
// whole.
func TestRollUp_LongLivedStoreRunsGitAlone(t *testing.T) {
	for _, short := range []bool{false, true} {
		r := newServerRollUp(t)
		s, dir, pdir, merged, kept, want := r.s, r.dir, r.pdir, r.merged, r.kept, r.want
		if short {
			os.Remove(poolSlot(filepath.Join(s.repo.StateDir(), "spare"), 7))
		}
		shells, direct := rollUpShells.Load(), rollUpsDirect.Load()
		s.maint.spawnRollUp(merged)
		if rollUpsDirect.Load() != direct+1 {
			t.Fatal("the roll-up did not start git alone")
		}
		if !s.maint.running() {
			t.Fatal("no roll-up running after it was started")
		}
		for deadline := time.Now().Add(20 * time.Second); s.maint.running(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the roll-up still runs after 20 s")
			}
		}
		if n := rollUpShells.Load() - shells; short && n != 1 || !short && n != 0 {
			t.Fatalf("pool short %v: %d shells after git, want %d", short, n, map[bool]int{false: 0, true: 1}[short])
		}
		if got := len(poolInodes(t, s)); got != poolSlots {
			t.Fatalf("pool short %v: %d files in the pool after the roll-up, want %d", short, got, poolSlots)
		}
		for _, f := range []string{"rollup.input", "rollup.list", "rollup.part", "maintenance.lock"} {
			if _, err := os.Stat(filepath.Join(s.repo.StateDir(), f)); err == nil {
				t.Fatalf("the roll-up left %s behind", f)
			}
		}
		if _, err := os.Stat(filepath.Join(s.repo.StateDir(), "rolled-up")); err != nil {
			t.Fatalf("no mark: %v", err)
		}
		s.maint.finishRollUp()
		now := packNames(t, pdir)
		if len(now) != 2 || !slices.Contains(now, kept[0]) {
			t.Fatalf("packs after the roll-up: %v; want the kept one and the new one", now)
		}
		for _, p := range now {
			if p != kept[0] {
				if got := objectsOf(t, dir, pdir, p); !slices.Equal(got, want) {
					t.Fatalf("the roll-up's pack holds %d objects, the merged packs held %d", len(got), len(want))
				}
			}
		}
		if got := strings.TrimSpace(gt.Git(t, dir, "rev-list", "--count", "refs/ideate/t")); got != "120" {
			t.Fatalf("rev-list --count: %s", got)
		}
		gt.Fsck(t, dir)
	}
}

// noKeeps waits until the spares goroutine has removed every write's
// .keep in dir's pack directory.
func noKeeps(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		k, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.keep"))
		if len(k) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s on, .keep files are left: %v", k)
		}
	}
}

// A long-lived Store merges a small set of packs itself, in the
// background, while its writes go on: one pack of every merged object,
// the merged packs retired at once, no process started; a set past the
// bounds goes to git.
func TestRollUp_LongLivedStoreMergesSmallSetsItself(t *testing.T) {
	r := newServerRollUp(t)
	s, dir, pdir, merged, kept, want := r.s, r.dir, r.pdir, r.merged, r.kept, r.want
	s.maint.enabled = false // the writes below start no roll-up of their own

	objects := rollUpHereObjects
	rollUpHereObjects = 10
	if s.maint.rollUpHere(merged) {
		t.Fatal("a set of more than rollUpHereObjects objects was merged in process")
	}
	rollUpHereObjects = objects

	here, direct, shells := rollUpsHere.Load(), rollUpsDirect.Load(), rollUpShells.Load()
	if !s.maint.rollUpHere(merged) {
		t.Fatal("a small set was not merged in process")
	}
	for i := 120; i < 125; i++ { // writes while it merges
		commitValue(t, s, i)
	}
	for deadline := time.Now().Add(20 * time.Second); s.maint.running(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the roll-up still runs after 20 s")
		}
	}
	if rollUpsHere.Load() != here+1 || rollUpsDirect.Load() != direct || rollUpShells.Load() != shells {
		t.Fatalf("merged here %d, by git %d, shells %d; want 1, 0, 0", rollUpsHere.Load()-here, rollUpsDirect.Load()-direct, rollUpShells.Load()-shells)
	}
	for _, f := range []string{"rollup.list", "rolled-up", "maintenance.lock"} {
		if _, err := os.Stat(filepath.Join(s.repo.StateDir(), f)); err == nil {
			t.Fatalf("the roll-up left %s behind", f)
		}
	}
	now := packNames(t, pdir)
	for _, p := range merged {
		if slices.Contains(now, p) {
			t.Fatalf("merged pack %s is still there", p)
		}
	}
	var made string
	var all []string
	for _, p := range now {
		objs := objectsOf(t, dir, pdir, p)
		all = append(all, objs...)
		if p != kept[0] && len(objs) >= len(want) {
			made = p
		}
	}
	if made == "" {
		t.Fatalf("no pack holds the %d merged objects: %v", len(want), now)
	}
	if got := objectsOf(t, dir, pdir, made); !slices.Equal(got, want) {
		t.Fatalf("the merged pack holds %d objects, the merged packs held %d", len(got), len(want))
	}
	if got := strings.TrimSpace(gt.Git(t, dir, "rev-list", "--count", "refs/ideate/t")); got != "125" {
		t.Fatalf("rev-list --count: %s", got)
	}
	gt.Fsck(t, dir)
}

// serverRollUp is a long-lived Store (spares of its own, maintenance on)
// over a new repository of 100 writes in one pack and 20 one-write packs
// after it, the clone's pool full: the 20 (merged) are what a roll-up
// merges, the big one (kept) stays; want is the merged packs' objects.
type serverRollUp struct {
	s                  *Store
	dir, pdir          string
	merged, kept, want []string
}

func newServerRollUp(t *testing.T) serverRollUp {
	t.Helper()
	old := PerWritePacks
	PerWritePacks = true
	t.Cleanup(func() { PerWritePacks = old })
	dir := gt.NewRepo(t)
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	s := openWithSpares(t, dir, 4)
	s.maint.enabled = false
	for i := range 100 {
		commitValue(t, s, i)
	}
	noKeeps(t, dir)                            // a pack with a .keep would stay beside the repack's
	gt.Git(t, dir, "repack", "-q", "-a", "-d") // one big pack that stays
	for i := 100; i < 120; i++ {
		commitValue(t, s, i)
	}
	noKeeps(t, dir)
	s.maint.enabled = true
	fillPool(t, s)
	r := serverRollUp{s: s, dir: dir, pdir: filepath.Join(s.repo.CommonDir, "objects", "pack")}
	r.merged = s.maint.rollUpSet()
	r.kept = keptBy(t, r.pdir, r.merged)
	if len(r.merged) != 20 || len(r.kept) != 1 {
		t.Fatalf("roll-up set: %d merged, %d kept; want 20 and 1", len(r.merged), len(r.kept))
	}
	for _, p := range r.merged {
		r.want = append(r.want, objectsOf(t, dir, r.pdir, p)...)
	}
	slices.Sort(r.want)
	r.want = slices.Compact(r.want)
	return r
}
