package hooks_test

import (
	"os"
	"path/filepath"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
)

// TestFingerprint: what changes a linked worktree's fingerprint for the
// cost gate's same-tree rule (a commit, a staged change, an edit or a
// new file in the scope, HEAD read through packed-refs) and what does not
// (a file outside the scope, a cache directory, reading again).
func TestFingerprint(t *testing.T) {
	dir := gt.NewRepo(t)
	for p, c := range map[string]string{"strutil/reverse.go": "package strutil\n", "other/x.go": "package other\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	wt := filepath.Join(t.TempDir(), "wt")
	gt.Git(t, dir, "worktree", "add", "-q", "-b", "task", wt)
	scope := []string{"strutil/**", "!strutil/gen.go"}

	fp := func(what string) string {
		t.Helper()
		f, head, err := hooks.Fingerprint(wt, scope)
		if err != nil || f == "" || len(head) != 40 {
			t.Fatalf("%s: %q %q %v", what, f, head, err)
		}
		return f
	}
	same := func(what, a, b string) {
		t.Helper()
		if a != b {
			t.Errorf("%s changed the fingerprint", what)
		}
	}
	differ := func(what, a, b string) {
		t.Helper()
		if a == b {
			t.Errorf("%s left the fingerprint as it was", what)
		}
	}
	a := fp("start")
	same("reading again", a, fp("again"))
	os.WriteFile(filepath.Join(wt, "other", "x.go"), []byte("package other // edited\n"), 0o644)
	b := fp("outside")
	same("an unstaged edit outside the scope", a, b)
	os.MkdirAll(filepath.Join(wt, "strutil", "__pycache__"), 0o755)
	os.WriteFile(filepath.Join(wt, "strutil", "__pycache__", "x.pyc"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(wt, "strutil", ".pytest_cache"), 0o755)
	c := fp("caches")
	same("a cache directory", b, c)
	os.WriteFile(filepath.Join(wt, "strutil", "reverse.go"), []byte("package strutil // edited\n"), 0o644)
	d := fp("edit")
	differ("an edit in the scope", c, d)
	os.WriteFile(filepath.Join(wt, "strutil", "new.go"), []byte("package strutil\n"), 0o644)
	e := fp("new file")
	differ("a new file in the scope", d, e)
	gt.Git(t, wt, "add", "other/x.go")
	f := fp("staged")
	differ("staging (the index)", e, f)
	gt.Git(t, wt, "commit", "-q", "-m", "x")
	g := fp("commit")
	differ("a commit", f, g)
	// HEAD read from packed-refs once the loose ref is packed.
	gt.Git(t, dir, "pack-refs", "--all")
	same("packing the refs", g, fp("packed"))
	if _, _, err := hooks.Fingerprint(filepath.Join(t.TempDir(), "none"), scope); err == nil {
		t.Error("a missing worktree has a fingerprint")
	}
}
