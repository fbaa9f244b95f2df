package gates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// The index a state tree starts from is the one git names: of a main
// checkout, of a linked worktree (its .git a file naming its git
// directory), of a repository whose git directory lives elsewhere, and,
// through git, of a directory below a top.
func TestIndexOf_AsGitSaysIt(t *testing.T) {
	dir := gt.NewRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	gt.Git(t, dir, "worktree", "add", "-q", "-b", "task", wt)
	sep := filepath.Join(t.TempDir(), "sep")
	gt.Git(t, filepath.Dir(sep), "init", "-q", "--separate-git-dir", filepath.Join(t.TempDir(), "sep.git"), sep)
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, wt, sep, sub} {
		got, err := indexOf(t.Context(), d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		want := strings.TrimSpace(gt.Git(t, d, "rev-parse", "--path-format=absolute", "--git-path", "index"))
		if filepath.Clean(got) != filepath.Clean(want) {
			t.Errorf("%s: index %s, git says %s", d, got, want)
		}
	}
}
