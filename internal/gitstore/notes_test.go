package gitstore_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

const notesRef = "refs/notes/ideate"

func headOf(t *testing.T, dir string) gitstore.Hash {
	t.Helper()
	h, err := gitstore.ParseHash(gt.Git(t, dir, "rev-parse", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func appendNote(t *testing.T, s *gitstore.Store, obj gitstore.Hash, text string) {
	t.Helper()
	if _, err := s.AppendNote(t.Context(), notesRef, obj, text); err != nil {
		t.Fatal(err)
	}
}

func TestStore_AppendNote_GitReadsIt(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	head := headOf(t, dir)

	if _, ok, err := s.ReadNote(notesRef, head); err != nil || ok {
		t.Fatalf("ReadNote before any note = %v, %v", ok, err)
	}
	appendNote(t, s, head, "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary")
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", "HEAD"); got != "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary" {
		t.Fatalf("git notes show = %q", got)
	}
	log := gt.Git(t, dir, "log", "--notes=ideate", "-1")
	if !strings.Contains(log, "Notes (ideate):") || !strings.Contains(log, "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary") {
		t.Fatalf("git log --notes=ideate does not show the note:\n%s", log)
	}

	appendNote(t, s, head, "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VX commit-boundary\n")
	want := "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary\nideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VX commit-boundary"
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", "HEAD"); got != want {
		t.Fatalf("after a second append git notes show = %q, want %q", got, want)
	}
	note, ok, err := s.ReadNote(notesRef, head)
	if err != nil || !ok || string(note) != want+"\n" {
		t.Fatalf("ReadNote = %q, %v, %v", note, ok, err)
	}
	if n := gt.Git(t, dir, "rev-list", "--count", notesRef); n != "2" {
		t.Fatalf("notes ref has %s commits, want 2 (one per append)", n)
	}
	gt.Fsck(t, dir)
}

func TestStore_AppendNote_KeepsNotesWrittenByGit(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
	s := open(t, dir)
	head := headOf(t, dir)
	gt.Git(t, dir, "notes", "--ref=ideate", "add", "-m", "reviewed by a person", "HEAD")
	gt.Git(t, dir, "notes", "--ref=ideate", "add", "-m", "the first commit", "HEAD~1")

	appendNote(t, s, head, "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary")
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", "HEAD"); got != "reviewed by a person\nideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary" {
		t.Fatalf("git notes show HEAD = %q", got)
	}
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", "HEAD~1"); got != "the first commit" {
		t.Fatalf("the other note changed: %q", got)
	}
	// git can keep writing after us and keeps what we wrote.
	gt.Git(t, dir, "notes", "--ref=ideate", "append", "-m", "appended by git", "HEAD")
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", "HEAD"); !strings.HasPrefix(got, "reviewed by a person\nideate-record: ") || !strings.HasSuffix(got, "appended by git") {
		t.Fatalf("after git notes append: %q", got)
	}
	gt.Fsck(t, dir)
}

// bulkCommits makes n commits on refs/heads/bulk with one fast-import run
// and returns their names, oldest first.
func bulkCommits(t *testing.T, dir string, n int) []string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "commit refs/heads/bulk\ncommitter T <t@example.com> %d +0000\ndata %d\nc%04d\n\n", 1700000000+i, len("c0000\n"), i)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	list := strings.Fields(gt.Git(t, dir, "rev-list", "--reverse", "refs/heads/bulk"))
	if len(list) != n {
		t.Fatalf("made %d commits, want %d", len(list), n)
	}
	return list
}

func TestStore_AppendNote_FannedOutTree(t *testing.T) {
	dir := gt.NewRepo(t)
	commits := bulkCommits(t, dir, 320)
	for _, c := range commits[:310] {
		gt.Git(t, dir, "notes", "--ref=ideate", "add", "-m", "note on "+c, c)
	}
	top := gt.Git(t, dir, "ls-tree", notesRef)
	if !strings.Contains(top, "\ttree ") && !strings.Contains(top, " tree ") {
		t.Fatalf("git did not fan the notes tree out after 310 notes; the test needs it to:\n%.300s", top)
	}
	before := gt.Git(t, dir, "notes", "--ref=ideate", "list")
	s := open(t, dir)

	// A commit that already has a note, inside a fan-out directory.
	annotated, _ := gitstore.ParseHash(commits[7])
	appendNote(t, s, annotated, "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary")
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", commits[7]); got != "note on "+commits[7]+"\nideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VW commit-boundary" {
		t.Fatalf("git notes show of the appended note = %q", got)
	}
	// A commit without one: the new note goes into the fan-out layout.
	fresh, _ := gitstore.ParseHash(commits[315])
	appendNote(t, s, fresh, "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VX commit-boundary")
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", commits[315]); got != "ideate-record: 01JDQ3Z5E8X9K2M4N6P8R0T1VX commit-boundary" {
		t.Fatalf("git notes show of the new note = %q", got)
	}
	paths := gt.Git(t, dir, "ls-tree", "-r", "--name-only", notesRef)
	if !strings.Contains(paths, commits[315][:2]+"/"+commits[315][2:]) {
		t.Fatalf("the new note is not under its fan-out directory %s/", commits[315][:2])
	}
	for _, p := range strings.Split(paths, "\n") {
		if p == commits[7] || p == commits[315] {
			t.Fatalf("note %s was written beside the fan-out instead of inside it", p)
		}
	}

	// Every other note is untouched; ours are the only changes.
	after := gt.Git(t, dir, "notes", "--ref=ideate", "list")
	old := map[string]string{}
	for _, l := range strings.Split(before, "\n") {
		f := strings.Fields(l)
		old[f[1]] = f[0]
	}
	changed := 0
	for _, l := range strings.Split(after, "\n") {
		f := strings.Fields(l)
		if old[f[1]] != f[0] {
			changed++
			if f[1] != commits[7] && f[1] != commits[315] {
				t.Errorf("note on %s changed", f[1])
			}
		}
	}
	if changed != 2 || len(strings.Split(after, "\n")) != 311 {
		t.Fatalf("%d notes changed and %d listed; want 2 and 311", changed, len(strings.Split(after, "\n")))
	}
	// git keeps writing the ref after us and keeps our notes.
	gt.Git(t, dir, "notes", "--ref=ideate", "add", "-m", "later", commits[319])
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", commits[315]); !strings.HasPrefix(got, "ideate-record: ") {
		t.Fatalf("after git wrote again, our note reads %q", got)
	}
	gt.Fsck(t, dir)
}

func TestStore_ResolveCommit(t *testing.T) {
	dir := gt.NewRepo(t)
	first := gt.Git(t, dir, "rev-parse", "HEAD")
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	s := open(t, dir)
	for _, c := range []struct{ spec, want string }{
		{"", head}, {"HEAD", head}, {head, head}, {head[:7], head}, {strings.ToUpper(head[:10]), head},
		{first[:9], first}, {first, first},
	} {
		got, err := s.ResolveCommit(t.Context(), c.spec)
		if err != nil || got.String() != c.want {
			t.Errorf("ResolveCommit(%q) = %s, %v; want %s", c.spec, got, err, c.want)
		}
	}
	tree := gt.Git(t, dir, "rev-parse", "HEAD^{tree}")
	for _, c := range []struct {
		spec string
		code apperr.Code
	}{
		{"deadbeef", apperr.NotFound}, {strings.Repeat("d", 40), apperr.NotFound}, {tree, apperr.NotFound},
		{"xyz123", apperr.Schema}, {"abc", apperr.Schema}, {"--all", apperr.Schema},
	} {
		if _, err := s.ResolveCommit(t.Context(), c.spec); !apperr.Is(err, c.code) {
			t.Errorf("ResolveCommit(%q) = %v, want %s", c.spec, err, c.code)
		}
	}

	// Detached HEAD and a packed branch resolve too; an unborn branch is NotFound.
	gt.Git(t, dir, "pack-refs", "--all")
	if got, err := open(t, dir).ResolveCommit(t.Context(), "HEAD"); err != nil || got.String() != head {
		t.Errorf("HEAD through a packed branch = %s, %v", got, err)
	}
	gt.Git(t, dir, "checkout", "-q", "--detach", first)
	if got, err := open(t, dir).ResolveCommit(t.Context(), "HEAD"); err != nil || got.String() != first {
		t.Errorf("detached HEAD = %s, %v", got, err)
	}
	empty := t.TempDir()
	gt.Git(t, empty, "init", "-q")
	if _, err := open(t, empty).ResolveCommit(t.Context(), "HEAD"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("unborn HEAD = %v, want NOT_FOUND", err)
	}
}
