package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// Inside Together, objects written for a second ref inside the first
// ref's transaction go to disk in that transaction's pack, and the pack
// keeps its .keep until Together returns: the second ref is moved by a
// plain UpdateRef later, and until then nothing names those objects.
func TestTogether_OnePackKeptUntilItReturns(t *testing.T) {
	s, dir := packStore(t, false)
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	list := func(suffix string) []string {
		ents, _ := os.ReadDir(pdir)
		var out []string
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), suffix) {
				out = append(out, e.Name())
			}
		}
		return out
	}
	var second Hash
	err := s.Together(func() error {
		_, err := s.Transact(t.Context(), "refs/ideate/first", func(tip Hash) (Hash, string, error) {
			b2, err := s.WriteBlob([]byte("the second ref's\n"))
			if err != nil {
				return ZeroHash, "", err
			}
			t2, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "two", Hash: b2}})
			if err != nil {
				return ZeroHash, "", err
			}
			if second, err = s.CommitTree(t2, ZeroHash, "second\n"); err != nil {
				return ZeroHash, "", err
			}
			b1, err := s.WriteBlob([]byte("the first ref's\n"))
			if err != nil {
				return ZeroHash, "", err
			}
			t1, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "one", Hash: b1}})
			return t1, "first\n", err
		})
		if err != nil {
			return err
		}
		if packs, keeps := list(".pack"), list(".keep"); len(packs) != 1 || len(keeps) != 1 {
			t.Errorf("after the first transaction: packs %v, keeps %v; want one pack, still kept", packs, keeps)
		}
		return s.UpdateRef(t.Context(), "refs/ideate/second", second, ZeroHash)
	})
	if err != nil {
		t.Fatal(err)
	}
	if packs, keeps := list(".pack"), list(".keep"); len(packs) != 1 || len(keeps) != 0 {
		t.Errorf("after Together: packs %v, keeps %v; want one pack, no .keep", packs, keeps)
	}
	if got := gt.Git(t, dir, "rev-parse", "refs/ideate/second"); got != second.String() {
		t.Errorf("second ref %s, want %s", got, second)
	}
	if got := gt.Git(t, dir, "cat-file", "-p", "refs/ideate/second:two"); got != "the second ref's" {
		t.Errorf("second ref's file: %q", got)
	}
	gt.Fsck(t, dir)
}
