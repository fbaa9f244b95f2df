package gitstore_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// DiffTrees names exactly the paths `git diff-tree -r` names, across
// adds, edits, deletions, a file turned into a directory and back, and a
// stop after the first path.
func TestDiffTrees_MatchesGit(t *testing.T) {
	dir := gt.NewRepo(t)
	write := func(p, body string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit := func() string {
		gt.Git(t, dir, "add", "-A")
		gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
		return gt.Git(t, dir, "rev-parse", "HEAD^{tree}")
	}
	var trees []string
	write("a.txt", "a")
	write("d/x.txt", "x")
	write("d/e/y.txt", "y")
	write("keep/z.txt", "z")
	trees = append(trees, commit())
	write("a.txt", "a2")
	write("d/e/new.txt", "n")
	os.Remove(filepath.Join(dir, "d/x.txt"))
	write("f", "file")
	trees = append(trees, commit())
	os.Remove(filepath.Join(dir, "f"))
	write("f/inside.txt", "now a directory")
	os.RemoveAll(filepath.Join(dir, "d"))
	trees = append(trees, commit())
	os.RemoveAll(filepath.Join(dir, "f"))
	write("f", "a file again")
	trees = append(trees, commit())

	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	hash := func(s string) gitstore.Hash {
		h, err := gitstore.ParseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	pairs := [][2]string{{trees[0], trees[1]}, {trees[1], trees[2]}, {trees[2], trees[3]}, {trees[3], trees[0]}}
	for _, p := range pairs {
		want := strings.Fields(gt.Git(t, dir, "diff-tree", "-r", "--no-renames", "--name-only", p[0], p[1]))
		sort.Strings(want)
		var got []string
		if err := g.DiffTrees(hash(p[0]), hash(p[1]), func(path string, old, new gitstore.TreeEntry) error {
			if old == new {
				t.Errorf("%s reported with equal sides", path)
			}
			got = append(got, path)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("DiffTrees %s..%s = %v, git diff-tree = %v", p[0][:7], p[1][:7], got, want)
		}
	}
	// From nothing: every file of the tree.
	n := 0
	g.DiffTrees(gitstore.ZeroHash, hash(trees[0]), func(string, gitstore.TreeEntry, gitstore.TreeEntry) error { n++; return nil })
	if n != 4 {
		t.Fatalf("diff from the empty tree named %d files, want 4", n)
	}
	// ErrStopDiff ends the walk without an error.
	calls := 0
	err = g.DiffTrees(hash(trees[0]), hash(trees[1]), func(string, gitstore.TreeEntry, gitstore.TreeEntry) error {
		calls++
		return gitstore.ErrStopDiff
	})
	if err != nil || calls != 1 {
		t.Fatalf("stopped diff: %d calls, err %v", calls, err)
	}
}

// ChangedPaths between commits names what `git diff-tree -r --name-only`
// names, sorted; from ZeroHash it names every file; max stops it.
func TestStore_ChangedPaths(t *testing.T) {
	dir := gt.NewRepo(t)
	commit := func(files map[string]string, remove ...string) string {
		for p, body := range files {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range remove {
			os.RemoveAll(filepath.Join(dir, p))
		}
		gt.Git(t, dir, "add", "-A")
		gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
		return gt.Git(t, dir, "rev-parse", "HEAD")
	}
	c1 := commit(map[string]string{"z.txt": "z", "a/b/c.txt": "c", "a/d.txt": "d", "m.txt": "m"})
	c2 := commit(map[string]string{"a/b/c.txt": "c2", "new/x.txt": "x"}, "m.txt")
	c3 := commit(nil)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	hash := func(s string) gitstore.Hash {
		h, err := gitstore.ParseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for _, tc := range []struct {
		from, to gitstore.Hash
		max      int
		want     string
		more     bool
	}{
		{hash(c1), hash(c2), 0, strings.Join(strings.Fields(gt.Git(t, dir, "diff-tree", "-r", "--name-only", c1, c2)), " "), false},
		{gitstore.ZeroHash, hash(c1), 0, "a/b/c.txt a/d.txt m.txt z.txt", false},
		{gitstore.ZeroHash, hash(c1), 2, "a/b/c.txt a/d.txt", true},
		{hash(c2), hash(c3), 0, "", false},
		{hash(c2), hash(c1), 3, "a/b/c.txt m.txt new/x.txt", false},
	} {
		got, more, err := g.ChangedPaths(tc.from, tc.to, tc.max)
		if err != nil || strings.Join(got, " ") != tc.want || more != tc.more {
			t.Errorf("ChangedPaths(%s, %s, %d) = %q, %v, %v; want %q, %v", tc.from, tc.to, tc.max, got, more, err, tc.want, tc.more)
		}
	}
	if _, _, err := g.ChangedPaths(hash(c1), hash(gt.Git(t, dir, "rev-parse", "HEAD^{tree}")), 0); err == nil {
		t.Fatal("a tree given as a commit was read")
	}
}
