package gitstore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// packed-refs is parsed once and re-parsed when its inode, size or mtime
// change; pack-refs after pack-refs hands out two inode numbers in turn,
// so a new file can carry an old key (same size, same timestamp tick).
// Here the file is rewritten in place with its mtime put back, which makes
// the same key deterministically. A swap from the tip the stale copy shows
// must fail: before the swap read packed-refs from disk, it succeeded and
// dropped the commit the file named (a lost update), and the transaction
// after it must build on the value on disk, not retry on the stale copy.
func TestUpdateRef_StalePackedRefsCacheDoesNotSwap(t *testing.T) {
	dir := gt.NewRepo(t)
	const ref = "refs/ideate/r"
	x := gt.Git(t, dir, "rev-parse", "HEAD")
	y := gt.Git(t, dir, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-p", x, "-m", "y")
	z := gt.Git(t, dir, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-p", x, "-m", "z")
	gt.Git(t, dir, "update-ref", ref, x)
	gt.Git(t, dir, "pack-refs", "--all")
	s := open(t, dir)
	if _, err := s.Refs("refs/ideate/"); err != nil { // a listing parses packed-refs (a single read does not)
		t.Fatal(err)
	}
	if h, err := s.Ref(ref); err != nil || h.String() != x {
		t.Fatalf("Ref = %v, %v; want %s", h, err, x)
	}
	rewritePackedRefs(t, dir, x+" "+ref, y+" "+ref)
	if h, _ := s.Ref(ref); h.String() != x {
		t.Fatalf("precondition: the parsed copy was refreshed (Ref = %s), the key did not repeat", h)
	}
	zh, _ := gitstore.ParseHash(z)
	xh, _ := gitstore.ParseHash(x)
	err := s.UpdateRef(t.Context(), ref, zh, xh)
	if !errors.Is(err, gitstore.ErrStale) {
		t.Fatalf("swap from the stale tip: %v; want ErrStale (git says the ref is %s)", err, gt.Git(t, dir, "rev-parse", ref))
	}
	if got := gt.Git(t, dir, "rev-parse", ref); got != y {
		t.Fatalf("ref is %s, want %s", got, y)
	}
	var tips []string
	if _, err := s.Transact(t.Context(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		tips = append(tips, tip.String())
		c, err := s.ReadCommit(tip)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		return c.Tree, "next\n", nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(tips) != 1 || tips[0] != y {
		t.Fatalf("the transaction built on %v; want once on %s", tips, y)
	}
	gt.Fsck(t, dir)
}

// A build that refuses because the ref is absent, where only the parsed
// packed-refs says so (its key repeated after an in-place rewrite), is
// run again on the value on disk: the refusal is not reported. (The board
// race test saw a claim answer NOT_FOUND for an item that existed, with
// pack-refs running beside.)
func TestTransact_RefusalOnAStalePackedRefsCacheIsRetried(t *testing.T) {
	dir := gt.NewRepo(t)
	const old, ref = "refs/ideate/aaaa", "refs/ideate/bbbb"
	x := gt.Git(t, dir, "rev-parse", "HEAD")
	gt.Git(t, dir, "update-ref", old, x)
	gt.Git(t, dir, "pack-refs", "--all")
	s := open(t, dir)
	if _, err := s.Refs("refs/ideate/"); err != nil { // a listing parses packed-refs (a single read does not)
		t.Fatal(err)
	}
	if h, _ := s.Ref(ref); h != gitstore.ZeroHash {
		t.Fatalf("precondition: %s is %s", ref, h)
	}
	rewritePackedRefs(t, dir, " "+old, " "+ref)
	if h, _ := s.Ref(ref); h != gitstore.ZeroHash {
		t.Fatalf("precondition: the parsed copy was refreshed (%s is %s), the key did not repeat", ref, h)
	}
	var tips []string
	_, err := s.Transact(t.Context(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		tips = append(tips, tip.String())
		if tip == gitstore.ZeroHash {
			return gitstore.ZeroHash, "", apperr.New(apperr.NotFound, "no %s", ref)
		}
		c, err := s.ReadCommit(tip)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		return c.Tree, "next\n", nil
	})
	if err != nil {
		t.Fatalf("Transact: %v (built on %v; git says %s is %s)", err, tips, ref, gt.Git(t, dir, "rev-parse", ref))
	}
	if len(tips) != 2 || tips[1] != x {
		t.Fatalf("the transaction built on %v; want the stale zero, then %s", tips, x)
	}
	gt.Fsck(t, dir)
}

// rewritePackedRefs replaces from with to (of the same length) in the
// repository's packed-refs in place, keeping its inode, size and mtime:
// the key the parsed copy is cached under repeats.
func rewritePackedRefs(t *testing.T, dir, from, to string) {
	t.Helper()
	path := filepath.Join(dir, ".git", "packed-refs")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.Replace(string(data), from, to, 1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
}
