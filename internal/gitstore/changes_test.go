package gitstore_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// wtFixture is a repository with a base commit and a linked worktree
// checked out at it.
type wtFixture struct {
	t    *testing.T
	main string
	wt   string
	base string
	g    *gitstore.Store
}

func newWTFixture(t *testing.T, files map[string]string) *wtFixture {
	t.Helper()
	dir := gt.NewRepo(t)
	for p, body := range files {
		writeFile(t, dir, p, body)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	base := gt.Git(t, dir, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	gt.Git(t, dir, "worktree", "add", "-q", "-b", "task", wt, base)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return &wtFixture{t: t, main: dir, wt: wt, base: base, g: g}
}

func writeFile(t testing.TB, dir, p, body string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *wtFixture) changes() *gitstore.Changes {
	f.t.Helper()
	h, err := gitstore.ParseHash(f.base)
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := f.g.WorktreeChanges(context.Background(), h, f.wt)
	if err != nil {
		f.t.Fatalf("WorktreeChanges: %v", err)
	}
	return c
}

// netLines renders the net changes (renames split into D and A) as
// "STATUS MODE PATH" lines, the shape both git oracles are brought to.
func netLines(c *gitstore.Changes) []string {
	var out []string
	for _, ch := range c.List {
		if ch.Undone {
			continue
		}
		if ch.Status == gitstore.Renamed {
			out = append(out, "D - "+ch.From, "A "+ch.NewMode+" "+ch.Path)
			continue
		}
		mode := ch.NewMode
		if ch.Status == gitstore.Deleted {
			mode = "-"
		}
		out = append(out, ch.Status+" "+mode+" "+ch.Path)
	}
	sort.Strings(out)
	return out
}

// stagedOracle is what `git add -A` would stage, compared with base: the
// index is copied, `git add -A` runs on the copy, and `git diff-index
// --cached --raw` names every change with its new mode. (git add writes
// blobs for new files; the test repository does not mind.)
func (f *wtFixture) stagedOracle() []string {
	f.t.Helper()
	out := gt.StagedAgainst(f.t, f.wt, f.base, "--raw")
	var lines []string
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		fl := strings.Fields(strings.TrimPrefix(recs[i], ":"))
		mode := fl[1]
		if fl[4] == "D" {
			mode = "-"
		}
		lines = append(lines, fl[4]+" "+mode+" "+recs[i+1])
	}
	sort.Strings(lines)
	return lines
}

// nameStatusOracle is `git diff --name-status base` (tracked paths, working
// tree against base) plus `git ls-files --others --exclude-standard` as
// added: the comparison the issue names.
func (f *wtFixture) nameStatusOracle() []string {
	f.t.Helper()
	var lines []string
	out := gt.Git(f.t, f.wt, "diff", "--name-status", "--no-renames", "-z", f.base)
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		lines = append(lines, recs[i]+" "+recs[i+1])
	}
	for _, p := range strings.Split(gt.Git(f.t, f.wt, "ls-files", "--others", "--exclude-standard", "-z"), "\x00") {
		if p != "" {
			lines = append(lines, "A "+strings.TrimSuffix(p, "/"))
		}
	}
	sort.Strings(lines)
	return lines
}

func statusLines(c *gitstore.Changes) []string {
	var out []string
	for _, l := range netLines(c) {
		f := strings.SplitN(l, " ", 3)
		out = append(out, f[0]+" "+f[2])
	}
	sort.Strings(out)
	return out
}

func (f *wtFixture) check(what string) *gitstore.Changes {
	f.t.Helper()
	c := f.changes()
	if got, want := netLines(c), f.stagedOracle(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		f.t.Errorf("%s: changes differ from what `git add -A` would stage\n got: %q\nwant: %q", what, got, want)
	}
	return c
}

func (f *wtFixture) write(p, body string) { writeFile(f.t, f.wt, p, body) }
func (f *wtFixture) rm(p string) {
	if err := os.RemoveAll(filepath.Join(f.wt, p)); err != nil {
		f.t.Fatal(err)
	}
}
func (f *wtFixture) git(args ...string) string { return gt.Git(f.t, f.wt, args...) }

func TestWorktreeChanges_EveryKindAgainstGit(t *testing.T) {
	f := newWTFixture(t, map[string]string{
		"a.txt": "a", "b.txt": "b", "run.sh": "echo", "d/x.txt": "x", "d/e/y.txt": "y",
		"keep/z.txt": "z", "f": "file", "g/inside.txt": "dir", "mv/old.txt": "moved content",
		"link-target.txt": "t", ".gitignore": "*.log\n/build/\n!keep.log\n",
	})
	if c := f.check("fresh worktree"); len(c.List) != 0 {
		t.Fatalf("a fresh worktree has changes: %+v", c.List)
	}
	f.write("a.txt", "a edited")                   // M (working tree)
	f.rm("b.txt")                                  // D
	os.Chmod(filepath.Join(f.wt, "run.sh"), 0o755) // M (mode)
	f.write("d/e/new.txt", "new")                  // A untracked in a tracked dir
	f.write("brand/new/deep.txt", "deep")          // A untracked dir
	f.rm("f")                                      // file → directory
	f.write("f/now.txt", "inside")                 //
	f.rm("g")                                      // directory → file
	f.write("g", "a file now")                     //
	f.rm("mv/old.txt")                             // exact rename
	f.write("mv/new.txt", "moved content")         //
	f.write("trace.log", "ignored")                // ignored
	f.write("keep.log", "re-included")             // A via negation
	f.write("build/out.bin", "ignored dir")        // ignored directory
	f.rm("link-target.txt")                        // file → symlink (T)
	if err := os.Symlink("a.txt", filepath.Join(f.wt, "link-target.txt")); err != nil {
		t.Fatal(err)
	}
	f.write("staged.txt", "staged only")
	f.git("add", "staged.txt") // A in the index
	c := f.check("mixed changes")
	if got, want := statusLines(c), f.nameStatusOracle(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes differ from git diff --name-status + untracked\n got: %q\nwant: %q", got, want)
	}
	var ren *gitstore.Change
	for i := range c.List {
		if c.List[i].Status == gitstore.Renamed {
			ren = &c.List[i]
		}
	}
	if ren == nil || ren.From != "mv/old.txt" || ren.Path != "mv/new.txt" {
		t.Errorf("no exact rename mv/old.txt → mv/new.txt in %+v", c.List)
	}
	for _, ch := range c.List {
		if ch.Committed || !ch.Uncommitted {
			t.Errorf("%s: nothing is committed yet, got committed=%v uncommitted=%v", ch.Path, ch.Committed, ch.Uncommitted)
		}
	}

	// Commit it all, then undo one committed change in the working tree
	// and make one more uncommitted edit.
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "work")
	if c := f.check("committed"); len(c.List) == 0 || !c.List[0].Committed || c.List[0].Uncommitted {
		t.Errorf("after commit: %+v", c.List)
	}
	f.write("a.txt", "a") // back to base's content, uncommitted
	f.write("keep/z.txt", "z edited")
	c = f.check("committed then undone")
	byPath := map[string]gitstore.Change{}
	for _, ch := range c.List {
		byPath[ch.Path] = ch
	}
	if a := byPath["a.txt"]; !a.Undone || !a.Committed || !a.Uncommitted {
		t.Errorf("a.txt was changed in a commit and undone in the working tree: %+v", a)
	}
	if z := byPath["keep/z.txt"]; z.Status != gitstore.Modified || z.Committed || !z.Uncommitted {
		t.Errorf("keep/z.txt: %+v", z)
	}
	if n := byPath["d/e/new.txt"]; n.Status != gitstore.Added || !n.Committed || n.Uncommitted {
		t.Errorf("d/e/new.txt: %+v", n)
	}
}

// A file rewritten with the same size right after `git add` is seen: only
// its stat data (times, inode) tell it apart.
func TestWorktreeChanges_SameSizeRewriteIsSeen(t *testing.T) {
	f := newWTFixture(t, map[string]string{"r.txt": "aaaa"})
	for i := 0; i < 5; i++ {
		f.write("r.txt", fmt.Sprintf("%04d", i))
		f.git("add", "r.txt")
		f.write("r.txt", fmt.Sprintf("x%03d", i)) // same size, same second
		c := f.check("racy")
		if len(c.List) != 1 || c.List[0].Status != gitstore.Modified {
			t.Fatalf("round %d: the rewrite went unseen: %+v", i, c.List)
		}
	}
}

// Content filters: with `* text=auto eol=crlf` the working tree holds CRLF
// while the blobs hold LF; hashing the raw bytes would call every touched
// file modified.
func TestWorktreeChanges_ContentFiltersGoThroughGit(t *testing.T) {
	f := newWTFixture(t, map[string]string{".gitattributes": "*.txt text eol=crlf\n", "a.txt": "one\ntwo\n", "b.txt": "b\n"})
	f.write("a.txt", "one\r\ntwo\r\n") // what checkout would write: no change
	f.write("b.txt", "b changed\r\n")
	f.check("filters")
	c := f.changes()
	if got := statusLines(c); strings.Join(got, ",") != "M b.txt" {
		t.Errorf("with eol=crlf, got %q, want only b.txt modified", got)
	}
}

// Every index format git writes reads alike: versions 2 to 4 and a split
// index.
func TestWorktreeChanges_IndexFormats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup []string
	}{
		{"v2", []string{"update-index", "--index-version", "2"}},
		{"v3", []string{"update-index", "--index-version", "3"}},
		{"v4", []string{"update-index", "--index-version", "4"}},
		{"split", []string{"update-index", "--split-index"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newWTFixture(t, map[string]string{"a/b/c.txt": "c", "a/b/d.txt": "d", "a/e.txt": "e", "z.txt": "z"})
			f.git(tc.setup...)
			f.write("a/b/d.txt", "d2")
			f.rm("a/e.txt")
			f.write("a/b/new.txt", "n")
			f.git("add", "a/b/new.txt")
			f.write("u.txt", "untracked")
			c := f.check(tc.name)
			if len(c.List) != 4 {
				t.Errorf("want 4 changes, got %+v", c.List)
			}
		})
	}
}

// Random edits over many rounds, each checked against what `git add -A`
// would stage.
func TestWorktreeChanges_RandomEditsAgainstGit(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("d%d/s%d/f%d.txt", i%4, i%3, i)] = fmt.Sprintf("body %d", i)
	}
	files[".gitignore"] = "*.tmp\n"
	f := newWTFixture(t, files)
	rng := rand.New(rand.NewPCG(1, 2))
	paths := func() []string {
		var ps []string
		filepath.Walk(f.wt, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && !strings.Contains(p, "/.git") {
				rel, _ := filepath.Rel(f.wt, p)
				ps = append(ps, filepath.ToSlash(rel))
			}
			return nil
		})
		sort.Strings(ps)
		return ps
	}
	for round := 0; round < 25; round++ {
		for op := 0; op < 1+rng.IntN(6); op++ {
			ps := paths()
			p := ps[rng.IntN(len(ps))]
			switch rng.IntN(9) {
			case 0:
				f.write(p, fmt.Sprintf("edit %d", rng.IntN(1000)))
			case 1:
				f.rm(p)
			case 2:
				f.write(fmt.Sprintf("d%d/n%d.txt", rng.IntN(5), rng.IntN(50)), "new")
			case 3:
				os.Chmod(filepath.Join(f.wt, p), os.FileMode(0o644|0o111*rng.IntN(2)))
			case 4:
				b, _ := os.ReadFile(filepath.Join(f.wt, p))
				f.rm(p)
				f.write("moved/"+filepath.Base(p), string(b))
			case 5:
				f.git("add", "-A")
			case 6:
				f.git("add", "-A")
				f.git("commit", "-q", "--allow-empty", "-m", "r")
			case 7:
				f.write(fmt.Sprintf("x%d.tmp", rng.IntN(9)), "ignored")
			case 8:
				f.git("checkout", "-q", f.base, "--", ".")
			}
		}
		f.check(fmt.Sprintf("round %d", round))
	}
}

func TestWorktreeChanges_RefusesAnotherRepository(t *testing.T) {
	f := newWTFixture(t, map[string]string{"a": "a"})
	other := gt.NewRepo(t)
	h, _ := gitstore.ParseHash(f.base)
	if _, err := f.g.WorktreeChanges(context.Background(), h, other); err == nil {
		t.Fatal("a worktree of another repository was accepted")
	}
}

// Ignore rules as git applies them: nested .gitignore files, negation,
// directory-only and anchored patterns, "**", info/exclude and
// core.excludesFile, and a file git would list that a parent rule cannot
// re-include.
func TestWorktreeChanges_IgnoreRulesAsGit(t *testing.T) {
	f := newWTFixture(t, map[string]string{
		".gitignore":      "*.o\n/top-only.txt\nlogs/\n!important.o\ndocs/**/draft-*\n\\#hash\n",
		"src/.gitignore":  "!keep.o\ngen/\n*.tmp\n!/local.tmp\n",
		"src/main.c":      "int main;",
		"docs/index.md":   "# docs",
		"vendor/lib/a.go": "package lib",
	})
	excl := filepath.Join(t.TempDir(), "global-ignore")
	if err := os.WriteFile(excl, []byte("*.swp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, f.main, "config", "core.excludesFile", excl)
	if err := os.WriteFile(filepath.Join(f.main, ".git", "info", "exclude"), []byte("secret*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Reopen: the configuration is read at Open.
	g, err := gitstore.Open(f.main)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	f.g = g
	for _, p := range []string{
		"a.o", "important.o", "src/keep.o", "src/x.o", "top-only.txt", "src/top-only.txt",
		"logs/today.txt", "src/logs/x.txt", "src/gen/g.go", "src/a.tmp", "src/local.tmp", "src/sub/local.tmp",
		"docs/a/b/draft-1.md", "docs/draft-2.md", "docs/final.md", "#hash", "x.swp", "secret.env", "vendor/lib/b.go",
		"logs2/kept.txt", "deep/er/still/shown.txt", "src/other/gen", "misc/logs",
	} {
		f.write(p, p)
	}
	c := f.check("ignore rules")
	if got, want := statusLines(c), f.nameStatusOracle(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes differ from git ls-files --others --exclude-standard\n got: %q\nwant: %q", got, want)
	}
}

// A git hook's environment (GIT_DIR and GIT_INDEX_FILE naming the main
// checkout and a temporary index) does not point the reads of a task's
// worktree elsewhere: git finds the worktree's own repository and index.
func TestWorktreeChanges_IgnoresAHooksGitEnvironment(t *testing.T) {
	f := newWTFixture(t, map[string]string{"a.txt": "a", "b.txt": "b"})
	f.write("a.txt", "a edited")
	f.rm("b.txt")
	f.write("c.txt", "new")
	want := statusLines(f.check("plain"))
	t.Setenv("GIT_DIR", filepath.Join(f.main, ".git"))
	t.Setenv("GIT_WORK_TREE", f.main)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(t.TempDir(), "no-index"))
	h, _ := gitstore.ParseHash(f.base)
	c, err := f.g.WorktreeChanges(context.Background(), h, f.wt)
	if err != nil {
		t.Fatal(err)
	}
	if got := statusLines(c); strings.Join(got, ",") != strings.Join(want, ",") || len(got) != 3 {
		t.Fatalf("under a hook's environment %q, want %q", got, want)
	}
}

// Another repository inside the worktree is added as a submodule at its
// HEAD, as `git add -A` adds it; one with no commit yet, which git
// refuses to add, is left out rather than failing the whole reading.
func TestWorktreeChanges_NestedRepositories(t *testing.T) {
	f := newWTFixture(t, map[string]string{"a.txt": "a"})
	sub := filepath.Join(f.wt, "sub")
	gt.Git(t, f.wt, "init", "-q", sub)
	writeFile(t, sub, "x.txt", "x")
	gt.Git(t, sub, "add", "x.txt")
	gt.Git(t, sub, "commit", "-q", "-m", "x")
	c := f.check("a nested repository with a commit")
	if len(c.List) != 1 || c.List[0].Path != "sub" || c.List[0].NewMode != "160000" || c.List[0].NewHash.String() != gt.Git(t, sub, "rev-parse", "HEAD") {
		t.Fatalf("nested repository: %+v", c.List)
	}
	gt.Git(t, f.wt, "init", "-q", filepath.Join(f.wt, "empty"))
	c = f.changes()
	if len(c.List) != 1 || c.List[0].Path != "sub" {
		t.Fatalf("with an empty nested repository too: %+v", c.List)
	}
}

// Reading the changes writes neither the worktree's index nor an object:
// the content of a new file is named, not stored.
func TestWorktreeChanges_WritesNoObjectAndNoIndex(t *testing.T) {
	f := newWTFixture(t, map[string]string{"a.txt": "a"})
	f.write("a.txt", "a edited, unique to this test")
	f.write("new.txt", "new, unique to this test")
	index := filepath.Join(f.main, ".git", "worktrees", "wt", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	c := f.changes()
	if len(c.List) != 2 {
		t.Fatalf("changes: %+v", c.List)
	}
	for _, ch := range c.List {
		if _, err := gt.GitErr(f.main, "cat-file", "-e", ch.NewHash.String()); err == nil {
			t.Errorf("%s: its content %s was written to the object database", ch.Path, ch.NewHash)
		}
	}
	if after, err := os.ReadFile(index); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the worktree's index changed (%v)", err)
	}
}
