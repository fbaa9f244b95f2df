package gitstore_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

func open(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openWithLock opens a Store on dir with the lock policy p.
func openWithLock(t *testing.T, dir string, p gitstore.LockPolicy) *gitstore.Store {
	t.Helper()
	r, err := gitstore.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := gitstore.OpenRepo(r, gitstore.Options{Lock: p})
	t.Cleanup(func() { s.Close() })
	return s
}

func commit(t *testing.T, s *gitstore.Store, msg string, parent gitstore.Hash) gitstore.Hash {
	t.Helper()
	blob, err := s.WriteBlob([]byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.WriteTree([]gitstore.TreeEntry{{Mode: gitstore.ModeFile, Name: "f", Hash: blob}})
	if err != nil {
		t.Fatal(err)
	}
	c := &gitstore.Commit{Tree: tree, Author: s.Identity(), Committer: s.Identity(), Message: msg + "\n"}
	if parent != gitstore.ZeroHash {
		c.Parents = []gitstore.Hash{parent}
	}
	h, err := s.WriteCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestStore_UpdateRef_CreateUpdateDelete(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	const ref = "refs/ideate/test"
	c1 := commit(t, s, "one", gitstore.ZeroHash)
	c2 := commit(t, s, "two", c1)

	if err := s.UpdateRef(t.Context(), ref, c1, gitstore.ZeroHash); err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := gt.Git(t, dir, "rev-parse", ref); got != c1.String() {
		t.Fatalf("git sees %s, want %s", got, c1)
	}
	// Create-if-absent refuses an existing ref.
	err := s.UpdateRef(t.Context(), ref, c2, gitstore.ZeroHash)
	if !apperr.Is(err, apperr.Conflict) || !errors.Is(err, gitstore.ErrStale) {
		t.Fatalf("create over existing: got %v, want CONFLICT/ErrStale", err)
	}
	// Update from a wrong old value is refused and changes nothing.
	if err := s.UpdateRef(t.Context(), ref, c2, c2); !errors.Is(err, gitstore.ErrStale) {
		t.Fatalf("stale update: got %v", err)
	}
	if err := s.UpdateRef(t.Context(), ref, c2, c1); err != nil {
		t.Fatalf("update: %v", err)
	}
	if got := gt.Git(t, dir, "rev-parse", ref); got != c2.String() {
		t.Fatalf("git sees %s, want %s", got, c2)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", ref+".lock")); !os.IsNotExist(err) {
		t.Fatalf("lock file left behind: %v", err)
	}
	if err := s.UpdateRef(t.Context(), ref, gitstore.ZeroHash, c1); !errors.Is(err, gitstore.ErrStale) {
		t.Fatalf("stale delete: got %v", err)
	}
	if err := s.UpdateRef(t.Context(), ref, gitstore.ZeroHash, c2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if h, _ := s.Ref(ref); h != gitstore.ZeroHash {
		t.Fatalf("ref still reads %s after delete", h)
	}
	if _, err := gt.GitErr(dir, "rev-parse", "--verify", "-q", ref); err == nil {
		t.Fatal("git still sees the deleted ref")
	}
	gt.Fsck(t, dir)
}

func TestStore_UpdateRef_PackedOnly(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	const ref = "refs/ideate/packed"
	c1 := commit(t, s, "one", gitstore.ZeroHash)
	c2 := commit(t, s, "two", c1)
	gt.Git(t, dir, "update-ref", ref, c1.String())
	gt.Git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git", ref)); !os.IsNotExist(err) {
		t.Fatal("ref still loose after pack-refs")
	}
	if h, err := s.Ref(ref); err != nil || h != c1 {
		t.Fatalf("read packed ref: %s %v", h, err)
	}
	// A wrong old value must not leave an empty or broken loose file.
	if err := s.UpdateRef(t.Context(), ref, c2, c2); !errors.Is(err, gitstore.ErrStale) {
		t.Fatalf("stale update of packed ref: %v", err)
	}
	if got := gt.Git(t, dir, "rev-parse", ref); got != c1.String() {
		t.Fatalf("after refused CAS git sees %q", got)
	}
	if err := s.UpdateRef(t.Context(), ref, c2, c1); err != nil {
		t.Fatalf("update packed ref: %v", err)
	}
	if got := gt.Git(t, dir, "rev-parse", ref); got != c2.String() {
		t.Fatalf("git sees %s, want %s", got, c2)
	}
	gt.Git(t, dir, "pack-refs", "--all")
	if err := s.UpdateRef(t.Context(), ref, gitstore.ZeroHash, c2); err != nil {
		t.Fatalf("delete packed ref: %v", err)
	}
	if out := gt.Git(t, dir, "for-each-ref", ref); out != "" {
		t.Fatalf("deleted ref still listed: %q", out)
	}
	gt.Fsck(t, dir)
}

func TestStore_Refs_LooseAndPacked(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	c := commit(t, s, "x", gitstore.ZeroHash)
	for _, n := range []string{"a", "b", "c"} {
		gt.Git(t, dir, "update-ref", "refs/ideate/items/"+n, c.String())
	}
	gt.Git(t, dir, "pack-refs", "--all")
	c2 := commit(t, s, "y", c)
	if err := s.UpdateRef(t.Context(), "refs/ideate/items/b", c2, c); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateRef(t.Context(), "refs/ideate/items/d", c2, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	refs, err := s.Refs("refs/ideate/items/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, strings.TrimPrefix(r.Name, "refs/ideate/items/")+"="+r.Hash.String()[:7])
	}
	want := []string{"a=" + c.String()[:7], "b=" + c2.String()[:7], "c=" + c.String()[:7], "d=" + c2.String()[:7]}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Refs = %v, want %v", got, want)
	}
}

func TestStore_InvalidRefName(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	for _, name := range []string{"HEAD", "refs/ideate/../x", "refs/ideate/x.lock", "refs/ideate/a b", "refs/ideate/", "refs//x"} {
		if err := s.UpdateRef(t.Context(), name, gitstore.ZeroHash, gitstore.ZeroHash); !apperr.Is(err, apperr.Schema) {
			t.Errorf("UpdateRef(%q) = %v, want SCHEMA", name, err)
		}
	}
}

func TestStore_Objects_GitReadsWhatWeWrite(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	c1 := commit(t, s, "hello world", gitstore.ZeroHash)
	if err := s.UpdateRef(t.Context(), "refs/ideate/obj", c1, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if got := gt.Git(t, dir, "show", "refs/ideate/obj:f"); got != "hello world" {
		t.Fatalf("git show = %q", got)
	}
	if got := gt.Git(t, dir, "log", "--format=%an <%ae> %s", "refs/ideate/obj"); got != "Test User <test@example.com> hello world" {
		t.Fatalf("git log = %q", got)
	}
	// And we read what git writes, loose and packed.
	gt.Git(t, dir, "repack", "-adq")
	c, err := s.ReadCommit(c1)
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := s.Lookup(c.Tree, []string{"f"})
	if err != nil || !ok {
		t.Fatalf("lookup: %v %v", ok, err)
	}
	b, err := s.ReadBlob(e.Hash)
	if err != nil || string(b) != "hello world" {
		t.Fatalf("blob = %q, %v", b, err)
	}
	gt.Fsck(t, dir)
}

func TestStore_Insert(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	blob, _ := s.WriteBlob([]byte("x"))
	root := gitstore.ZeroHash
	var err error
	for _, p := range [][]string{{"a", "b"}, {"a", "c"}, {"d"}} {
		root, err = s.Insert(root, p, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: "f.md", Hash: blob}, false)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Insert(root, []string{"a", "b"}, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: "f.md", Hash: blob}, false); !errors.Is(err, gitstore.ErrExists) {
		t.Fatalf("second insert at the same path: %v", err)
	}
	c := &gitstore.Commit{Tree: root, Author: s.Identity(), Committer: s.Identity(), Message: "t\n"}
	h, _ := s.WriteCommit(c)
	got := gt.Git(t, dir, "ls-tree", "-r", "--name-only", h.String())
	if got != "a/b/f.md\na/c/f.md\nd/f.md" {
		t.Fatalf("ls-tree = %q", got)
	}
	gt.Fsck(t, dir)
}

func TestDiscover_SubdirAndLinkedWorktree(t *testing.T) {
	dir := gt.NewRepo(t)
	sub := filepath.Join(dir, "x", "y")
	os.MkdirAll(sub, 0o755)
	s := open(t, sub)
	c := commit(t, s, "from subdir", gitstore.ZeroHash)
	if err := s.UpdateRef(t.Context(), "refs/ideate/wt", c, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "linked")
	gt.Git(t, dir, "worktree", "add", "-q", "-b", "feature", wt)
	ws := open(t, wt)
	if ws.Repo().CommonDir != filepath.Join(dir, ".git") {
		t.Fatalf("common dir = %s", ws.Repo().CommonDir)
	}
	if h, err := ws.Ref("refs/ideate/wt"); err != nil || h != c {
		t.Fatalf("linked worktree reads %s %v, want %s", h, err, c)
	}
	c2 := commit(t, ws, "from worktree", c)
	if err := ws.UpdateRef(t.Context(), "refs/ideate/wt", c2, c); err != nil {
		t.Fatal(err)
	}
	if got := gt.Git(t, dir, "rev-parse", "refs/ideate/wt"); got != c2.String() {
		t.Fatalf("main worktree sees %s, want %s", got, c2)
	}
	if _, err := gitstore.Open(t.TempDir()); !apperr.Is(err, apperr.NotARepo) {
		t.Fatalf("outside a repo: %v", err)
	}
	gt.Fsck(t, dir)
}

func TestStore_Identity_FallsBackWithoutUserName(t *testing.T) {
	dir := gt.NewRepo(t)
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", empty)
	s := open(t, dir)
	if id := s.Identity(); id.Name != "git-ideate" || id.Email != "git-ideate@localhost" {
		t.Fatalf("identity = %+v", id)
	}
	c := commit(t, s, "no identity", gitstore.ZeroHash)
	if err := s.UpdateRef(t.Context(), "refs/ideate/anon", c, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "config", "user.name", "Repo Person")
	gt.Git(t, dir, "config", "user.email", "repo@example.com")
	if id := open(t, dir).Identity(); id.Name != "Repo Person" || id.Email != "repo@example.com" {
		t.Fatalf("identity from repo config = %+v", id)
	}
	gt.Fsck(t, dir)
}

// A lock left by a dead git-ideate writer (its mark, no flock, older than
// StaleAfter) is broken; a young one is waited for; one held by a live
// process, or made by git (no mark: git never flocks), never is, however
// old.
func TestStore_StaleLockPolicy(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	const ref = "refs/ideate/locky"
	c1 := commit(t, s, "one", gitstore.ZeroHash)
	c2 := commit(t, s, "two", c1)
	lock := filepath.Join(dir, ".git", ref+".lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)

	// Young and unheld: waited for, then LOCKED naming the file.
	s = openWithLock(t, dir, gitstore.LockPolicy{Timeout: 150 * time.Millisecond, StaleAfter: time.Hour})
	os.WriteFile(lock, nil, 0o644)
	err := s.UpdateRef(t.Context(), ref, c1, gitstore.ZeroHash)
	if !apperr.Is(err, apperr.Locked) || !strings.Contains(err.Error(), lock) {
		t.Fatalf("young lock: got %v, want LOCKED naming %s", err, lock)
	}

	// Old and unheld but not marked (git's own, which it may hold as long
	// as it likes): waited for, then LOCKED.
	old := time.Now().Add(-5 * time.Second)
	os.Chtimes(lock, old, old)
	s = openWithLock(t, dir, gitstore.LockPolicy{Timeout: 300 * time.Millisecond, StaleAfter: time.Millisecond})
	if err := s.UpdateRef(t.Context(), ref, c1, gitstore.ZeroHash); !apperr.Is(err, apperr.Locked) {
		t.Fatalf("old unmarked lock: got %v, want LOCKED", err)
	}
	os.Remove(lock)

	// Old, marked and unheld (a writer killed while it held the lock):
	// broken, and the update goes through.
	p := spawn(t, "hold-ref-lock", dir, "GITSTORE_TEST_REF="+ref)
	p.WaitOutput(t, "holding", 20*time.Second)
	p.Kill()
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the killed writer left no lock: %v", err)
	}
	os.Chtimes(lock, old, old)
	s = openWithLock(t, dir, gitstore.LockPolicy{Timeout: 2 * time.Second, StaleAfter: time.Second})
	if err := s.UpdateRef(t.Context(), ref, c1, gitstore.ZeroHash); err != nil {
		t.Fatalf("stale lock not broken: %v", err)
	}

	// Old, marked, but flocked by a live process: never broken.
	os.WriteFile(lock, []byte("git-ideate lock\n"), 0o644)
	os.Chtimes(lock, old, old)
	holder := exec.Command("flock", lock, "sleep", "3")
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1) not available: %v", err)
	}
	defer holder.Process.Kill()
	time.Sleep(200 * time.Millisecond)
	s = openWithLock(t, dir, gitstore.LockPolicy{Timeout: 300 * time.Millisecond, StaleAfter: time.Millisecond})
	if err := s.UpdateRef(t.Context(), ref, c2, c1); !apperr.Is(err, apperr.Locked) {
		t.Fatalf("held lock: got %v, want LOCKED", err)
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	os.Remove(lock)
	if err := s.UpdateRef(t.Context(), ref, c2, c1); err != nil {
		t.Fatal(err)
	}
	gt.Fsck(t, dir)
}

func TestStore_Transact_RetriesOnMovedRef(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	const ref = "refs/ideate/txn"
	calls := 0
	h, err := s.Transact(t.Context(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		calls++
		if calls == 1 {
			// Another writer (git itself) moves the ref after we read it.
			other := gt.Git(t, dir, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", "other")
			gt.Git(t, dir, "update-ref", ref, other)
		}
		blob, _ := s.WriteBlob([]byte("mine"))
		tree, err := s.WriteTree([]gitstore.TreeEntry{{Mode: gitstore.ModeFile, Name: "f", Hash: blob}})
		return tree, "mine\n", err
	})
	if err != nil || calls != 2 {
		t.Fatalf("Transact: %v after %d calls", err, calls)
	}
	if got := gt.Git(t, dir, "log", "--format=%s", ref); got != "mine\nother" {
		t.Fatalf("history = %q", got)
	}
	_ = h
	gt.Fsck(t, dir)
}

func TestStore_ReadObject_Missing(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	_, _, err := s.ReadObject(oid.NewHash(strings.Repeat("ab", 20)))
	if !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("missing object: %v", err)
	}
}

// TestStore_RefParts_AgreesWithGit: Refs and RefPartsVersion list what git
// for-each-ref lists, in its order, with packed and loose refs of the same
// names, a name only loose, and nested names ("t/a/b" sorts after "t/a-c"
// in git's byte order, though a directory walk meets it first).
func TestStore_RefParts_AgreesWithGit(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	c := commit(t, s, "x", gitstore.ZeroHash)
	c2 := commit(t, s, "y", c)
	const p = "refs/ideate/t/"
	for _, n := range []string{"a-c", "a/b", "b", "d"} {
		gt.Git(t, dir, "update-ref", p+n, c.String())
	}
	gt.Git(t, dir, "pack-refs", "--all")
	for _, n := range []string{"a/b", "a/a", "a-b", "d", "e/f/g"} {
		gt.Git(t, dir, "update-ref", p+n, c2.String())
	}
	want := gt.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", p)
	var each, list []string
	packed, loose, _, err := s.RefPartsVersion(p)
	if err != nil {
		t.Fatal(err)
	}
	// Loose values replace packed ones of the same name.
	seen := map[string]string{}
	for _, part := range [][]gitstore.Ref{packed, loose} {
		for _, r := range part {
			seen[r.Name] = r.Hash.String()
		}
	}
	for n, h := range seen {
		each = append(each, n+" "+h)
	}
	sort.Strings(each)
	if !sort.SliceIsSorted(loose, func(i, j int) bool { return loose[i].Name < loose[j].Name }) ||
		!sort.SliceIsSorted(packed, func(i, j int) bool { return packed[i].Name < packed[j].Name }) {
		t.Fatalf("parts not sorted by name: %v %v", packed, loose)
	}
	refs, err := s.Refs(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		list = append(list, r.Name+" "+r.Hash.String())
	}
	if got := strings.Join(each, "\n"); got != want {
		t.Fatalf("RefPartsVersion:\n%s\nwant (git for-each-ref):\n%s", got, want)
	}
	if got := strings.Join(list, "\n"); got != want {
		t.Fatalf("Refs:\n%s\nwant (git for-each-ref):\n%s", got, want)
	}
}

// A repository git ideate cannot write without harm is refused at
// discovery, with UnsupportedRepo, before anything is written: SHA-256
// object names (git init --object-format=sha256) and reftable refs (git
// 2.39 cannot make one, so the extension is written into the config as
// newer git writes it). The same config with the files backend opens.
func TestDiscover_RefusesSHA256AndReftable(t *testing.T) {
	sha256 := filepath.Join(t.TempDir(), "sha256")
	gt.Git(t, t.TempDir(), "init", "-q", "--object-format=sha256", sha256)
	reftable := gt.NewRepo(t)
	gt.Git(t, reftable, "config", "core.repositoryformatversion", "1")
	gt.Git(t, reftable, "config", "extensions.refStorage", "reftable")
	// A config too large to scan here (past 4 MiB) is left to git.
	big := gt.NewRepo(t)
	gt.Git(t, big, "config", "core.repositoryformatversion", "1")
	gt.Git(t, big, "config", "extensions.refStorage", "reftable")
	f, err := os.OpenFile(filepath.Join(big, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("# a comment line of the kind a large config carries\n", 100_000))
	f.Close()
	files := gt.NewRepo(t) // format version 0, which git 2.39 still reads
	gt.Git(t, files, "config", "extensions.refStorage", "files")
	for _, dir := range []string{sha256, reftable, big} {
		before := tree(t, dir)
		_, err := gitstore.Open(dir)
		if apperr.CodeOf(err) != gitstore.UnsupportedRepo {
			t.Fatalf("%s: Open = %v, want %s", dir, err, gitstore.UnsupportedRepo)
		}
		if _, err := gitstore.Open(filepath.Join(dir, ".git")); apperr.CodeOf(err) != gitstore.UnsupportedRepo {
			t.Fatalf("%s/.git: Open = %v", dir, err)
		}
		if after := tree(t, dir); after != before {
			t.Fatalf("%s: files changed by the refusal:\n%s\nthen\n%s", dir, before, after)
		}
	}
	s := open(t, files)
	c := commit(t, s, "files backend", gitstore.ZeroHash)
	if err := s.UpdateRef(t.Context(), "refs/ideate/ok", c, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	gt.Fsck(t, files)
}

// A FIFO where packed-refs or HEAD belongs is an error, at once: a plain
// open of a FIFO waits for a writer forever.
func TestStore_FIFOInTheGitDirIsAnError(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	c := commit(t, s, "one", gitstore.ZeroHash)
	if err := s.UpdateRef(t.Context(), "refs/ideate/x", c, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"packed-refs", "HEAD"} {
		path := filepath.Join(dir, ".git", name)
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		done := make(chan error, 1)
		go func() {
			var err error
			if name == "HEAD" {
				_, err = s.Head()
			} else {
				_, err = s.Refs("refs/")
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s is a FIFO: no error", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s is a FIFO: the read still waits after 10 s", name)
		}
		os.Remove(path)
	}
}

// tree lists every file under dir with its size.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %d\n", p, fi.Size())
		}
		return nil
	})
	return b.String()
}

// TestStore_UpdateRef_LockIsNeverSeenUnmarked: whoever looks at a ref's
// lock while git ideate updates the ref finds the mark (a mode writable
// by nobody), from the lock's first moment to its rename: a lock without
// the mark is git's and never broken, so a writer killed at such a moment
// would block the ref for good.
func TestStore_UpdateRef_LockIsNeverSeenUnmarked(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	const ref = "refs/ideate/marked"
	heads := []gitstore.Hash{commit(t, s, "one", gitstore.ZeroHash)}
	heads = append(heads, commit(t, s, "two", heads[0]))
	lock := filepath.Join(dir, ".git", ref+".lock")
	done := make(chan struct{})
	seen, bad := 0, ""
	go func() {
		defer close(done)
		old := gitstore.ZeroHash
		for i := 0; i < 3000 && bad == ""; i++ {
			if err := s.UpdateRef(t.Context(), ref, heads[i%2], old); err != nil {
				bad = err.Error()
			}
			old = heads[i%2]
		}
	}()
	for {
		select {
		case <-done:
			if bad != "" {
				t.Fatal(bad)
			}
			t.Logf("the lock was seen %d times", seen)
			return
		default:
		}
		if fi, err := os.Lstat(lock); err == nil {
			seen++
			if fi.Mode().Perm()&0o200 != 0 {
				<-done
				t.Fatalf("the lock's mode was %v, writable by its owner as git's are", fi.Mode())
			}
		}
	}
}
