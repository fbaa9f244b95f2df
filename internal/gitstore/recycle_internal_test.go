//go:build linux

package gitstore

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/gitstore/odb"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// retiredFile writes a read-only file of size bytes, as a retired pack
// is, and returns its path.
func retiredFile(t *testing.T, dir string, size int) string {
	t.Helper()
	p := filepath.Join(dir, "retired-"+strings.Repeat("x", size%7))
	if err := os.WriteFile(p, bytes.Repeat([]byte("r"), size), 0o444); err != nil {
		t.Fatal(err)
	}
	return p
}

// A retired file nobody holds becomes a spare where it is: the same
// file, open for writing (a read-only pack made writable again). It keeps
// its bytes up to a block, and a write cut to its length (fitSpare)
// leaves only the new bytes; a larger file is emptied.
func TestRecycle_AFileNobodyHoldsBecomesASpare(t *testing.T) {
	d := t.TempDir()
	name := retiredFile(t, d, 1200)
	ino := inode(t, name)
	f, err := promote(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Name() != name || inode(t, name) != ino {
		t.Fatalf("the spare is %s, inode %d; want %s, inode %d", f.Name(), inode(t, f.Name()), name, ino)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm()&0o200 == 0 {
		t.Fatalf("the spare's mode is %v: its owner cannot write it", fi.Mode())
	}
	if _, err := f.Write([]byte("ref\n")); err != nil {
		t.Fatal(err)
	}
	if err := fitSpare(f, 4); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "ref\n" {
		t.Fatalf("the spare holds %q after a write and fitSpare", b)
	}

	big := retiredFile(t, t.TempDir(), 3*spareKeepBytes)
	g, err := promote(big)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if fi, _ := g.Stat(); fi.Size() != 0 {
		t.Fatalf("a recycled file of %d bytes kept %d", 3*spareKeepBytes, fi.Size())
	}
}

// A retired file that anyone still has open or mapped — another process
// (git reads a pack it listed before the roll-up took it away; a reader
// whose open had found a ref file before the rename that replaced it),
// this process's own pack mapping, an open file — or that has a second
// name is not made a spare: promote says errBusy and leaves it whole;
// once let go of, it is.
func TestRecycle_HeldFilesAreNot(t *testing.T) {
	hold := map[string]func(t *testing.T, name string) (release func()){
		"open in another process": func(t *testing.T, name string) func() {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sleep", "60")
			cmd.Stdin = f
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			f.Close() // only the child has it now
			return func() { cmd.Process.Kill(); cmd.Wait() }
		},
		"mapped here, its descriptor closed": func(t *testing.T, name string) func() {
			m, err := odb.MapFile(name)
			if err != nil {
				t.Fatal(err)
			}
			return func() { odb.UnmapFile(m) }
		},
		"open here": func(t *testing.T, name string) func() {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			return func() { f.Close() }
		},
		"a second name": func(t *testing.T, name string) func() {
			other := name + ".second"
			if err := os.Link(name, other); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(other) }
		},
	}
	for what, take := range hold {
		t.Run(what, func(t *testing.T) {
			name := retiredFile(t, t.TempDir(), 1200)
			release := take(t, name)
			f, err := promote(name)
			if !errors.Is(err, errBusy) {
				if f != nil {
					f.Close()
				}
				release()
				t.Fatalf("promote = %v, want errBusy", err)
			}
			if b, err := os.ReadFile(name); err != nil || !bytes.Equal(b, bytes.Repeat([]byte("r"), 1200)) {
				t.Fatalf("the held file changed: %d bytes, %v", len(b), err)
			}
			release()
			f, err = promote(name)
			if err != nil {
				t.Fatalf("after the release: %v", err)
			}
			f.Close()
		})
	}
}

// serverStore is an MCP server's Store over a new repository: spares of
// its own, per-write packs, background maintenance on. Its first n
// commits on refs/ideate/t are made with maintenance held off, so that
// the test starts the roll-up itself.
func serverStore(t *testing.T, n int) (*Store, string) {
	t.Helper()
	old := PerWritePacks
	PerWritePacks = true
	t.Cleanup(func() { PerWritePacks = old })
	oldAfter := recycleAfter
	recycleAfter = 20 * time.Millisecond
	t.Cleanup(func() { recycleAfter = oldAfter })
	dir := gt.NewRepo(t)
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	s := openWithSpares(t, dir, 3)
	readySpares(t, s, 3)
	s.maint.enabled = false
	for i := range n {
		commitValue(t, s, i)
	}
	s.maint.enabled = true
	return s, dir
}

// rollUpNow runs a roll-up of s's packs to its end and takes the merged
// packs out (finishRollUp), then waits until the spares goroutine has
// dealt with every retired file; it returns the inodes of the merged
// packs' files.
func rollUpNow(t *testing.T, s *Store) map[uint64]string {
	t.Helper()
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	merged := s.maint.rollUpSet()
	if len(merged) < 2 {
		t.Fatalf("roll-up set %v", merged)
	}
	inos := map[uint64]string{}
	for _, p := range merged {
		base := strings.TrimSuffix(p, ".pack")
		inos[inode(t, filepath.Join(pdir, base+".pack"))] = base + ".pack"
		inos[inode(t, filepath.Join(pdir, base+".idx"))] = base + ".idx"
	}
	s.maint.spawnRollUp(merged)
	gt.WaitRemoved(t, filepath.Join(s.repo.StateDir(), "maintenance.lock"))
	sp := s.spares()
	sp.mu.Lock()
	before := sp.reaped
	sp.mu.Unlock()
	s.maint.finishRollUp()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		sp.mu.Lock()
		done := sp.reaped-before >= len(inos) && len(sp.reap) == 0 && len(sp.waits) == 0
		sp.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retired packs were not dealt with after 10 s")
		}
	}
	return inos
}

// recycledInodes are the inodes of s's recycled spares not yet taken.
func recycledInodes(t *testing.T, s *Store) map[uint64]bool {
	t.Helper()
	sp := s.spares()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	inos := map[uint64]bool{}
	for _, f := range sp.recycled {
		inos[inode(t, f.Name())] = true
	}
	return inos
}

// The MCP server's steady state: what a roll-up takes out of objects/pack
// and what a ref update replaces become its spares (the same inodes), the
// next writes' packs and locks are made of them, and git reads every
// object and ref whole: fsck --strict passes and the history is all
// there.
func TestRecycle_TheServerWritesWithWhatItRetired(t *testing.T) {
	s, dir := serverStore(t, 20)
	// The server has read every object: its own mappings of the packs
	// are what finishRollUp lets go of first.
	db, err := s.db()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range strings.Fields(gt.Git(t, dir, "rev-list", "--objects", "--no-object-names", "refs/ideate/t")) {
		if _, _, err := db.Read(oid.NewHash(o)); err != nil {
			t.Fatal(err)
		}
	}
	merged := rollUpNow(t, s)
	spares := recycledInodes(t, s)
	for ino, name := range merged {
		if !spares[ino] {
			t.Fatalf("merged %s (inode %d) is not a spare; spares %v", name, ino, spares)
		}
	}
	// The next writes take them: their packs, indexes and ref files are
	// inodes that held merged packs a moment ago.
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	s.maint.enabled = false
	before := packNames(t, pdir)
	for i := 20; i < 26; i++ {
		commitValue(t, s, i)
	}
	reused := 0
	for _, p := range packNames(t, pdir) {
		if slices.Contains(before, p) {
			continue
		}
		base := strings.TrimSuffix(p, ".pack")
		for _, f := range []string{base + ".pack", base + ".idx"} {
			if _, ok := merged[inode(t, filepath.Join(pdir, f))]; ok {
				reused++
			}
		}
	}
	if reused == 0 {
		t.Fatal("no new pack or index is a recycled inode")
	}
	if n := gt.Git(t, dir, "rev-list", "--count", "refs/ideate/t"); n != "26" {
		t.Fatalf("rev-list --count: %s", n)
	}
	for i := 0; i < 26; i += 5 {
		rev := "refs/ideate/t~" + strconv.Itoa(25-i)
		if got := gt.Git(t, dir, "log", "-1", "--format=%s", rev); got != "write "+strconv.Itoa(i) {
			t.Fatalf("%s is %q", rev, got)
		}
	}
	gt.Git(t, dir, "fsck", "--strict", "--full", "--no-dangling")
}

// A git process that read the packs before the roll-up (git cat-file
// --batch keeps each pack it used open and its index mapped) goes on
// reading them whole after the roll-up took them out: the files it holds
// are freed when it lets go, never made spares under it.
func TestRecycle_PacksGitHoldsAreNotReused(t *testing.T) {
	s, dir := serverStore(t, 20)
	objs := strings.Fields(gt.Git(t, dir, "rev-list", "--objects", "--no-object-names", "refs/ideate/t"))
	cat := exec.Command("git", "cat-file", "--batch")
	cat.Dir = dir
	in, err := cat.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cat.Stdout = &out
	if err := cat.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Process.Kill(); cat.Wait() })
	// First pass: git maps every pack.
	for _, o := range objs {
		if _, err := in.Write([]byte(o + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	merged := rollUpNow(t, s)
	spares := recycledInodes(t, s)
	for ino, name := range merged {
		if spares[ino] {
			t.Fatalf("merged %s (inode %d), which git holds, was made a spare", name, ino)
		}
	}
	// The writes that follow take spares (the ref files the first
	// commits retired, made ones): none of them is git's.
	s.maint.enabled = false
	for i := 20; i < 26; i++ {
		commitValue(t, s, i)
	}
	// Second pass through the same process, then compare both passes
	// with what a fresh git reads.
	for _, o := range objs {
		if _, err := in.Write([]byte(o + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	in.Close()
	if err := cat.Wait(); err != nil {
		t.Fatalf("git cat-file: %v", err)
	}
	fresh := exec.Command("git", "cat-file", "--batch")
	fresh.Dir = dir
	fresh.Stdin = strings.NewReader(strings.Join(objs, "\n") + "\n")
	want, err := fresh.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want)+string(want) {
		t.Fatalf("the git process that held the packs read %d bytes in two passes, want twice %d", len(got), len(want))
	}
	gt.Git(t, dir, "fsck", "--strict", "--full", "--no-dangling")
}

// A file the server retired waits recycleAfter in its own retired
// directory before a write may use it, and a write meanwhile takes
// another spare; once the wait is over it is a spare.
func TestRecycle_RetiredFilesWaitBeforeUse(t *testing.T) {
	s, _ := serverStore(t, 0)
	recycleAfter = 400 * time.Millisecond // serverStore restores it
	writeOne(t, s, "refs/ideate/w", "first")
	start := time.Now()
	writeOne(t, s, "refs/ideate/w", "second") // retires the first ref file
	sp := s.spares()
	var waiting []waiting
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		sp.mu.Lock()
		waiting = append(waiting[:0], sp.waits...)
		sp.mu.Unlock()
		if len(waiting) == 1 || time.Now().After(deadline) {
			break
		}
	}
	if len(waiting) != 1 || filepath.Dir(waiting[0].name) != sp.held {
		t.Fatalf("waiting %v, want the replaced ref file in %s", waiting, sp.held)
	}
	ino := inode(t, waiting[0].name)
	writeOne(t, s, "refs/ideate/other", "meanwhile")
	if time.Since(start) < recycleAfter {
		if got := inode(t, filepath.Join(s.repo.CommonDir, "refs", "ideate", "other")); got == ino {
			t.Fatal("a write used the retired file before its wait was over")
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if recycledInodes(t, s)[ino] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retired file is not a spare 5 s later")
		}
	}
	if d := time.Since(start); d < recycleAfter {
		t.Fatalf("made a spare after %v, before the wait of %v", d, recycleAfter)
	}
}

// The shell that ends a roll-up of a short-lived process frees the shared
// retired directory's files (rm -f of its names); the server's own
// retired directory, beside them, keeps its files.
func TestRecycle_TheSharedRollUpLeavesTheServersAlone(t *testing.T) {
	s, dir := serverStore(t, 0)
	recycleAfter = time.Hour // they stay waiting
	for i := range 3 {
		writeOne(t, s, "refs/ideate/w", "v"+strconv.Itoa(i))
	}
	sp := s.spares()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		sp.mu.Lock()
		n := len(sp.waits)
		sp.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d retired files waiting, want 2", n)
		}
	}
	shared := s.sharedRetiredDir()
	if err := os.MkdirAll(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "1f"), []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	// The retired directories live apart: the server's is not under the
	// shared one, which is all the shell removes from.
	if strings.HasPrefix(sp.held, shared) {
		t.Fatalf("the server's retired directory %s is inside the shared %s", sp.held, shared)
	}
	sh := exec.Command("sh", "-c", strings.TrimPrefix(s.finishShell(), "; "))
	sh.Dir = dir
	sh.Run() // rm reports the directories it does not remove; that is all
	if left, _ := os.ReadDir(shared); len(left) != 0 {
		t.Fatalf("the shell left %d files in the shared directory", len(left))
	}
	if got, _ := os.ReadDir(sp.held); len(got) != 2 {
		t.Fatalf("%d files left in the server's retired directory, want 2", len(got))
	}
}

// A retired pack is read-only (0444). Its owner, when permissions stop
// it (anyone but root), cannot open it for writing: promote makes it
// writable through a read-only descriptor of the file itself, then
// opens it. Run as root, the test runs that part as nobody, in a child
// process of this test binary.
func TestRecycle_AReadOnlyFileOfAnOrdinaryUser(t *testing.T) {
	if p := os.Getenv("GIT_IDEATE_TEST_PROMOTE"); p != "" {
		// The child: promote as whoever this is.
		f, err := promote(p)
		if err != nil {
			t.Fatalf("promote as uid %d: %v", os.Getuid(), err)
		}
		f.Close()
		return
	}
	d := t.TempDir()
	name := retiredFile(t, d, 1200)
	bin := os.Args[0]
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		const nobody = 65534
		// nobody must reach the file and run the test binary: a copy
		// of it beside the file, in directories open to all.
		for _, p := range []string{d, filepath.Dir(d)} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for p := filepath.Dir(filepath.Dir(d)); p != "/"; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
				t.Skipf("%s is closed to other users", p)
			}
		}
		data, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(d, "test.bin")
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(name, nobody, nobody); err != nil {
			t.Skipf("cannot give the file to nobody: %v", err)
		}
		cred = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	cmd := exec.Command(bin, "-test.run=^TestRecycle_AReadOnlyFileOfAnOrdinaryUser$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GIT_IDEATE_TEST_PROMOTE="+name)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		t.Fatalf("the file is %v after promote: not writable by its owner", fi.Mode())
	}
}
