package gates_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// The check after the fact excuses a change only when a logged write
// accounts for it and the file still holds what that write left: the
// main session's anywhere, another task's own agent's in its worktree.
// Every other change of another working tree is the stopping worker's;
// its own worktree and planning artifacts are not compared.
func TestEscape_AttributesByTheLedger(t *testing.T) {
	ctx := context.Background()
	top := gt.NewRepo(t)
	write := func(p, data string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(filepath.Join(top, "a.go"), "package a\n")
	gt.Git(t, top, "add", "-A")
	gt.Git(t, top, "commit", "-qm", "base")
	own, other := filepath.Join(t.TempDir(), "own"), filepath.Join(t.TempDir(), "other")
	gt.Git(t, top, "worktree", "add", "-q", "--detach", own)
	gt.Git(t, top, "worktree", "add", "-q", "--detach", other)
	before, err := gates.TakeSnapshot(ctx, top)
	if err != nil || len(before) != 3 {
		t.Fatalf("snapshot %v %v", before, err)
	}
	ledger := map[string][2]string{}
	logged := func(actor, p string) { ledger[gates.EntryPath(p)] = [2]string{actor, gates.ContentHash(p)} }

	byMain := write(filepath.Join(top, "notes.txt"), "the main session's\n")
	logged(gates.MainActor, byMain)
	changedAfter := write(filepath.Join(top, "b.go"), "package a // main\n")
	logged(gates.MainActor, changedAfter)
	write(changedAfter, "package a // someone else\n")
	unlogged := write(filepath.Join(top, "c.go"), "package a\n")
	byOwner := write(filepath.Join(other, "d.go"), "package a\n")
	logged("aother", byOwner)
	byStranger := write(filepath.Join(other, "e.go"), "package a\n")
	logged("astranger", byStranger)
	deleted := filepath.Join(other, "a.go")
	os.Remove(deleted)
	logged("aother", deleted)
	// The owner's symlink is its own change; the file it leads to,
	// changed by someone else, is not excused by it.
	linkedTo := write(filepath.Join(other, "f.go"), "package a // a stranger's\n")
	link := filepath.Join(other, "link.go")
	os.Symlink("f.go", link)
	logged("aother", link)
	write(filepath.Join(own, "mine.go"), "package a\n")
	write(filepath.Join(top, "docs", "agents", "sprint1", "plan.md"), "edited\n")

	f := &gates.EscapeFacts{Before: before, Worktree: own,
		Owners: map[string][]string{gates.Resolve("", other): {"aother"}},
		Written: func(abs string) (string, string, bool) {
			w, ok := ledger[abs]
			return w[0], w[1], ok
		}}
	v, err := gates.Escape.Run(ctx, gates.Input{Point: gates.AgentStop, Role: gates.RoleRed, Escape: f})
	if err != nil || v.Result != gates.FAIL {
		t.Fatalf("%s %v", v, err)
	}
	var paths []string
	for _, r := range v.Reasons {
		if r.Class == "escaped_write" {
			paths = append(paths, r.Paths...)
		}
	}
	got := strings.Join(paths, " ")
	for _, p := range []string{changedAfter, unlogged, byStranger, linkedTo} {
		if !strings.Contains(got, filepath.Base(p)) {
			t.Errorf("%s is not blamed: %s", p, got)
		}
	}
	for _, p := range []string{byMain, byOwner, deleted, link, "mine.go", "plan.md"} {
		if strings.Contains(got, filepath.Base(p)+" ") || strings.HasSuffix(got, filepath.Base(p)) {
			t.Errorf("%s is blamed: %s", p, got)
		}
	}
	// Without a ledger every change counts.
	f.Written = nil
	if v, _ := gates.Escape.Run(ctx, gates.Input{Point: gates.AgentStop, Role: gates.RoleRed, Escape: f}); !strings.Contains(v.String(), "notes.txt") {
		t.Errorf("without a ledger: %s", v)
	}
}

// What changed in a working tree since a time the file system stamped:
// written, created, chmod'ed, removed (tracked, untracked, or through git
// rm, which leaves no trace in the index: the tree before names it), and
// in a directory now gone; not what changed before the mark, nor an
// ignored file.
func TestChangedSince_ListsWhatTheFileSystemStampedSince(t *testing.T) {
	ctx := context.Background()
	top := gt.NewRepo(t)
	put := func(rel, data string) {
		t.Helper()
		p := filepath.Join(top, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"kept.go", "edited.go", "mode.sh", "removed.go", "rmed.go", "gone/deep.go", ".gitignore"} {
		put(f, "x\n")
	}
	put(".gitignore", "*.log\n")
	gt.Git(t, top, "add", "-A")
	gt.Git(t, top, "commit", "-qm", "base")
	put("untracked.txt", "u\n")
	put("scratch.txt", "s\n")
	put("early.txt", "before the mark\n")
	snap, err := gates.TakeSnapshot(ctx, top)
	if err != nil {
		t.Fatal(err)
	}
	// Past the file system's clock tick (4 ms at most on Linux).
	time.Sleep(20 * time.Millisecond)
	mark := filepath.Join(t.TempDir(), "mark")
	os.WriteFile(mark, nil, 0o644)
	t0, ok := gates.ChangeTime(mark)
	if !ok {
		t.Fatal("no change time")
	}
	put("edited.go", "y\n")
	put("new.go", "n\n")
	put("build.log", "ignored\n")
	os.Chmod(filepath.Join(top, "mode.sh"), 0o755)
	os.Remove(filepath.Join(top, "removed.go"))
	os.Remove(filepath.Join(top, "scratch.txt"))
	gt.Git(t, top, "rm", "-q", "rmed.go")
	os.RemoveAll(filepath.Join(top, "gone"))
	got, err := gates.ChangedSince(ctx, top, t0, []string{snap[top]})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"edited.go", "gone/deep.go", "mode.sh", "new.go", "removed.go", "rmed.go", "scratch.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("changed since the mark: %v, want %v", got, want)
	}
	// Without the tree before, what git no longer lists is not seen.
	got, _ = gates.ChangedSince(ctx, top, t0, nil)
	if slices.Contains(got, "rmed.go") || slices.Contains(got, "scratch.txt") || !slices.Contains(got, "removed.go") {
		t.Errorf("without the tree before: %v", got)
	}
}

// A worker's worktree index is what its commands left: a link to a
// device that never ends is no index, and the snapshot of the working
// trees (taken in the hooks) answers at once instead of reading it.
func TestTakeSnapshot_AnIndexLinkedToADeviceDoesNotHang(t *testing.T) {
	top := gt.NewRepo(t)
	os.WriteFile(filepath.Join(top, "a.go"), []byte("package a\n"), 0o644)
	gt.Git(t, top, "add", "-A")
	gt.Git(t, top, "commit", "-qm", "base")
	wt := filepath.Join(t.TempDir(), "wt")
	gt.Git(t, top, "worktree", "add", "-q", "--detach", wt)
	idx := strings.TrimSpace(gt.Git(t, wt, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	os.Remove(idx)
	if err := os.Symlink("/dev/zero", idx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := gates.TakeSnapshot(context.Background(), top)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the snapshot still reads /dev/zero as an index after 10 s")
	}
}
