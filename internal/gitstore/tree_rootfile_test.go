package gitstore_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// InsertWithRootFile writes the root once: the format file and the leaf
// land together, and no intermediate tree is left dangling.
func TestInsertWithRootFile_NoDanglingTree(t *testing.T) {
	dir := gt.NewRepo(t)
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := s.WriteBlob([]byte("leaf\n"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := s.InsertWithRootFile(gitstore.ZeroHash, []string{"a", "b"}, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: "x", Hash: blob}, false, "fmt", []byte("v 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Point a ref at it so only leftovers are dangling.
	gt.Git(t, dir, "update-ref", "refs/test/root", strings.TrimSpace(gt.Git(t, dir, "commit-tree", root.String(), "-m", "t")))
	ls := gt.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/test/root")
	if ls != "a/b/x\nfmt" {
		t.Fatalf("tree: %q", ls)
	}
	cmd := exec.Command("git", "fsck", "--no-reflogs", "--no-progress")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "dangling") {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	// A second insert keeps the existing file and adds no second one.
	root2, err := s.InsertWithRootFile(root, nil, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: "y", Hash: blob}, false, "fmt", []byte("other\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := s.Lookup(root2, []string{"fmt"})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	data, _ := s.ReadBlob(e.Hash)
	if string(data) != "v 1\n" {
		t.Fatalf("the existing file was replaced: %q", data)
	}
}
