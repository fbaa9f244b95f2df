//go:build linux

package gitstore

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

const watchPrefix = "refs/ideate/w/"

// watchedStore opens dir with ref watches on, and a second store without
// them whose listings walk.
func watchedStore(t *testing.T, dir string) (watched, walked *Store) {
	t.Helper()
	r, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.WatchRefs = true
	watched = OpenRepo(r, opt)
	walked = OpenRepo(r, DefaultOptions())
	t.Cleanup(func() { watched.Close(); walked.Close() })
	return watched, walked
}

// sameListing fails when the watched store's listing of watchPrefix is
// not the walk's.
func sameListing(t *testing.T, step string, watched, walked *Store) []Ref {
	t.Helper()
	p1, l1, _, err := watched.refs.listParts(watchPrefix)
	if err != nil {
		t.Fatalf("%s: watched: %v", step, err)
	}
	p2, l2, err := walked.RefParts(watchPrefix)
	if err != nil {
		t.Fatalf("%s: walked: %v", step, err)
	}
	if d := cmp.Diff(l2, l1); d != "" {
		t.Fatalf("%s: loose refs, watched against walked (-walk +watch):\n%s", step, d)
	}
	if d := cmp.Diff(p2, p1); d != "" {
		t.Fatalf("%s: packed refs differ:\n%s", step, d)
	}
	return l1
}

func (s *Store) watchOf(prefix string) *refWatch {
	s.refs.wmu.Lock()
	defer s.refs.wmu.Unlock()
	return s.refs.watches[filepath.Join(s.repo.CommonDir, filepath.FromSlash(prefix[:len(prefix)-1]))]
}

// A watched listing is what a walk finds, through every way git and
// git ideate change a directory of loose refs: updates by rename (git
// update-ref, our own), deletes, a file written in place, a stray lock,
// pack-refs --prune removing the files and the emptied directory, the
// directory made again, and a directory inside it (from then on the
// listing walks).
func TestRefWatch_ListsWhatAWalkFinds(t *testing.T) {
	dir := gt.NewRepo(t)
	watched, walked := watchedStore(t, dir)
	head := mustHash(t, gt.Git(t, dir, "rev-parse", "HEAD"))
	c2 := mustHash(t, gt.Git(t, dir, "commit-tree", "-m", "two", gt.Git(t, dir, "rev-parse", "HEAD^{tree}")))
	sameListing(t, "no directory yet", watched, walked)
	for i := range 20 {
		gt.Git(t, dir, "update-ref", watchPrefix+"r"+strconv.Itoa(i), head.String())
	}
	if got := sameListing(t, "20 made by git", watched, walked); len(got) != 20 {
		t.Fatalf("%d loose refs, want 20", len(got))
	}
	w := watched.watchOf(watchPrefix)
	if w == nil || w.fd < 0 || w.off {
		t.Fatalf("no live watch after the first listing: %+v", w)
	}
	// Files this young are not cached (racyLoose): a walk reads all 20
	// again, the watch none, since none changed.
	read := 0
	testHookReadLoose = func(string) { read++ }
	t.Cleanup(func() { testHookReadLoose = nil })
	if _, _, _, err := watched.refs.listParts(watchPrefix); err != nil {
		t.Fatal(err)
	}
	if read != 0 {
		t.Fatalf("a listing with nothing changed read %d ref files", read)
	}
	for i := range 5 {
		gt.Git(t, dir, "update-ref", watchPrefix+"r"+strconv.Itoa(i), c2.String())
	}
	read = 0
	sameListing(t, "5 moved by git", watched, walked)
	if read > 5+20 || read < 5 { // the watched store read the 5; the walk, all 20
		t.Fatalf("%d ref files read", read)
	}
	gt.Git(t, dir, "update-ref", "-d", watchPrefix+"r7")
	gt.Git(t, dir, "update-ref", "-d", watchPrefix+"r8")
	sameListing(t, "2 deleted", watched, walked)
	if err := watched.UpdateRef(t.Context(), watchPrefix+"r9", c2, head); err != nil {
		t.Fatal(err)
	}
	sameListing(t, "1 moved by the store", watched, walked)
	ref := filepath.Join(dir, ".git", filepath.FromSlash(watchPrefix), "r10")
	if err := os.WriteFile(ref, []byte(c2.String()+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	sameListing(t, "1 written in place", watched, walked)
	if err := os.WriteFile(ref+"x.lock", []byte(head.String()+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	sameListing(t, "a stray lock", watched, walked)
	os.Remove(ref + "x.lock")
	gt.Git(t, dir, "pack-refs", "--all", "--prune")
	if got := sameListing(t, "packed and pruned", watched, walked); len(got) != 0 {
		t.Fatalf("%d loose refs after pack-refs --prune", len(got))
	}
	if _, err := os.Stat(filepath.Dir(ref)); !os.IsNotExist(err) {
		t.Logf("pack-refs left the directory (%v)", err)
	}
	gt.Git(t, dir, "update-ref", watchPrefix+"again", c2.String())
	sameListing(t, "made again", watched, walked)
	if w := watched.watchOf(watchPrefix); w.fd < 0 || w.off {
		t.Fatalf("no live watch after the directory came back")
	}
	gt.Git(t, dir, "update-ref", watchPrefix+"sub/x", c2.String())
	sameListing(t, "a directory inside", watched, walked)
	if w := watched.watchOf(watchPrefix); !w.off {
		t.Fatalf("the watch is still on with a directory inside")
	}
	gt.Git(t, dir, "update-ref", watchPrefix+"r11", c2.String())
	sameListing(t, "walking", watched, walked)
}

// When the kernel's queue overflowed, events were lost: the listing reads
// the whole directory again. The lost events are made here by swapping
// the watch for a pipe that carries nothing but the overflow.
func TestRefWatch_OverflowReadsEverythingAgain(t *testing.T) {
	dir := gt.NewRepo(t)
	watched, walked := watchedStore(t, dir)
	head := mustHash(t, gt.Git(t, dir, "rev-parse", "HEAD"))
	c2 := mustHash(t, gt.Git(t, dir, "commit-tree", "-m", "two", gt.Git(t, dir, "rev-parse", "HEAD^{tree}")))
	for i := range 3 {
		gt.Git(t, dir, "update-ref", watchPrefix+"r"+strconv.Itoa(i), head.String())
	}
	sameListing(t, "seeded", watched, walked)
	w := watched.watchOf(watchPrefix)
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[1])
	w.mu.Lock()
	syscall.Close(w.fd)
	w.fd = p[0] // the watch's events from here on are lost
	w.mu.Unlock()
	gt.Git(t, dir, "update-ref", watchPrefix+"r1", c2.String())
	gt.Git(t, dir, "update-ref", watchPrefix+"new", c2.String())
	var ev syscall.InotifyEvent
	ev.Wd, ev.Mask = -1, syscall.IN_Q_OVERFLOW
	if _, err := syscall.Write(p[1], (*[syscall.SizeofInotifyEvent]byte)(unsafe.Pointer(&ev))[:]); err != nil {
		t.Fatal(err)
	}
	if got := sameListing(t, "after the overflow", watched, walked); len(got) != 4 {
		t.Fatalf("%d loose refs, want 4", len(got))
	}
}

func mustHash(t *testing.T, s string) Hash {
	t.Helper()
	h, err := ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A ref's lock present when the watch is first made (a writer between
// writing its lock and renaming it into place) is no ref: not listed then,
// and after the rename the ref holds the lock's value, listed once. Taken
// in by the first read, the lock stood in every later listing (its rename
// is an event for a lock name, which the watch passes over): the board
// index built from it held the item twice, once as it was.
func TestRefWatch_ALockAtTheFirstListingIsNoRef(t *testing.T) {
	dir := gt.NewRepo(t)
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	next := gt.Git(t, dir, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-p", head, "-m", "next")
	gt.Git(t, dir, "update-ref", watchPrefix+"a", head)
	gt.Git(t, dir, "update-ref", watchPrefix+"b", head)
	lock := filepath.Join(dir, ".git", filepath.FromSlash(watchPrefix), "a.lock")
	if err := os.WriteFile(lock, []byte(next+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	watched, walked := watchedStore(t, dir)
	if l := sameListing(t, "a lock beside its ref", watched, walked); len(l) != 2 {
		t.Fatalf("listed %v, want a and b", l)
	}
	if err := os.Rename(lock, strings.TrimSuffix(lock, ".lock")); err != nil {
		t.Fatal(err)
	}
	l := sameListing(t, "the lock renamed into place", watched, walked)
	if len(l) != 2 || l[0].Hash.String() != next {
		t.Fatalf("listed %v, want a at %s and b", l, next)
	}
}

// The watched directory removed (pack-refs --prune empties and removes
// it) while another holds it open, and made again with a new ref in it
// before the kernel has told the watch anything: the removal's
// IN_DELETE_SELF waits for the last reference to the directory, so the
// watch sat on the removed directory and listed the new one as empty.
// The listing must find the new ref, as a walk does.
func TestRefWatch_TheDirectoryMadeAgainWhileTheOldIsHeld(t *testing.T) {
	dir := gt.NewRepo(t)
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	gt.Git(t, dir, "update-ref", watchPrefix+"a", head)
	watched, walked := watchedStore(t, dir)
	if l := sameListing(t, "seeded", watched, walked); len(l) != 1 {
		t.Fatalf("listed %v, want a", l)
	}
	root := filepath.Join(dir, ".git", filepath.FromSlash(watchPrefix))
	held, err := os.Open(root) // another process's open directory, or its cwd
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	gt.Git(t, dir, "pack-refs", "--all", "--prune")
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("pack-refs --prune left %s: %v", root, err)
	}
	gt.Git(t, dir, "update-ref", watchPrefix+"b", head)
	if l := sameListing(t, "b in the directory made again", watched, walked); len(l) != 1 || !strings.HasSuffix(l[0].Name, "/b") {
		t.Fatalf("listed %v, want b", l)
	}
}

// The count of loose refs a watched store gives for the background
// pack-refs' threshold is the directory's, through updates, a delete and
// pack-refs --prune, and it comes from the watch.
func TestRefWatch_CountsTheLooseRefs(t *testing.T) {
	dir := gt.NewRepo(t)
	watched, walked := watchedStore(t, dir)
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	check := func(step string, want int) {
		t.Helper()
		if n := walked.looseRefs(watchPrefix); n != want {
			t.Fatalf("%s: the directory holds %d, want %d", step, n, want)
		}
		if n := watched.looseRefs(watchPrefix); n != want {
			t.Fatalf("%s: the watch counts %d, want %d", step, n, want)
		}
	}
	for i := range 5 {
		gt.Git(t, dir, "update-ref", watchPrefix+"r"+strconv.Itoa(i), head)
	}
	check("five made", 5)
	if w := watched.watchOf(watchPrefix); w == nil || !w.seeded {
		t.Fatal("the count did not come from a watch")
	}
	gt.Git(t, dir, "update-ref", "-d", watchPrefix+"r0")
	gt.Git(t, dir, "update-ref", watchPrefix+"r9", head)
	check("one deleted, one made", 5)
	gt.Git(t, dir, "pack-refs", "--all", "--prune")
	check("packed", 0)
	next := gt.Git(t, dir, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-p", head, "-m", "next")
	gt.Git(t, dir, "update-ref", watchPrefix+"r1", next) // a packed value unchanged writes no loose file
	check("one moved again", 1)
}
