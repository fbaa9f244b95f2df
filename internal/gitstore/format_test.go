package gitstore_test

import (
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

var testFormat = gitstore.Format{File: "ideate-format", Kind: "ideate-test", Version: 2,
	Code: apperr.FormatVersion, What: "the test store"}

// commitTree commits root (no parent) and returns the commit.
func commitTree(t *testing.T, s *gitstore.Store, root gitstore.Hash) gitstore.Hash {
	t.Helper()
	h, err := s.WriteCommit(&gitstore.Commit{Tree: root, Author: s.Identity(), Committer: s.Identity(), Message: "t\n"})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// withFormatBlob is the one-file tree of commit(…, "x") plus a format
// entry holding data.
func withFormatBlob(t *testing.T, s *gitstore.Store, data string) gitstore.Hash {
	t.Helper()
	c, err := s.ReadCommit(commit(t, s, "x", gitstore.ZeroHash))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.WriteBlob([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	root, err := s.Insert(c.Tree, nil, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: testFormat.File, Hash: b}, true)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestStore_RootTree_EmptyAndUnversioned(t *testing.T) {
	s := open(t, gt.NewRepo(t))
	if root, err := s.RootTree(gitstore.ZeroHash, testFormat); err != nil || root != gitstore.ZeroHash {
		t.Fatalf("RootTree(zero) = %v, %v; want zero, nil", root, err)
	}
	tip := commit(t, s, "x", gitstore.ZeroHash)
	c, err := s.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	if root, err := s.RootTree(tip, testFormat); err != nil || root != c.Tree {
		t.Fatalf("RootTree(no format entry) = %v, %v; want %v, nil", root, err, c.Tree)
	}
}

func TestStore_EnsureFormat_AddsOnce(t *testing.T) {
	s := open(t, gt.NewRepo(t))
	fresh, err := s.EnsureFormat(gitstore.ZeroHash, testFormat)
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := s.Lookup(fresh, []string{testFormat.File})
	if err != nil || !ok {
		t.Fatalf("no format entry in a fresh root: %v", err)
	}
	if data, err := s.ReadBlob(e.Hash); err != nil || string(data) != "ideate-test 2\n" {
		t.Fatalf("format blob = %q, %v", data, err)
	}
	again, err := s.EnsureFormat(fresh, testFormat)
	if err != nil || again != fresh {
		t.Fatalf("EnsureFormat on a versioned root = %v, %v; want it unchanged (%v)", again, err, fresh)
	}
	// An older entry is kept as it is: EnsureFormat adds, never rewrites.
	old := withFormatBlob(t, s, "ideate-test 1\n")
	if got, err := s.EnsureFormat(old, testFormat); err != nil || got != old {
		t.Fatalf("EnsureFormat on an older root = %v, %v; want it unchanged", got, err)
	}
	if got, err := s.RootTree(commitTree(t, s, fresh), testFormat); err != nil || got != fresh {
		t.Fatalf("RootTree(own version) = %v, %v", got, err)
	}
	if _, err := s.RootTree(commitTree(t, s, old), testFormat); err != nil {
		t.Fatalf("RootTree(older version) = %v; want it read", err)
	}
}

func TestStore_RootTree_NewerOrUnreadableFormat(t *testing.T) {
	s := open(t, gt.NewRepo(t))
	for _, data := range []string{"ideate-test 3\n", "something else\n", "ideate-test two\n"} {
		tip := commitTree(t, s, withFormatBlob(t, s, data))
		_, err := s.RootTree(tip, testFormat)
		if !apperr.Is(err, apperr.FormatVersion) || !strings.Contains(apperr.Message(err), "the test store") {
			t.Errorf("RootTree(format %q) = %v; want FORMAT_VERSION naming the test store", data, err)
		}
	}
}
