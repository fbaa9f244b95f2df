package worktree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/worktree"
)

// BackToRed returns the branch and worktree to the RED commit, keeps the
// work after it on a branch, and makes the next attempt a red-worker's;
// uncommitted changes and a RED commit the branch does not hold are
// refused and change nothing; asked again at RED, only the attempt moves.
func TestManager_BackToRed(t *testing.T) {
	dir, m := newRepo(t, map[string]string{"pkg/a.go": "package pkg\n"})
	task := start(t, m, worktree.StartInput{Task: "S1-01/T1", Role: "green-worker", Scope: []string{"pkg/**"}})
	commitFile := func(p, body, msg string) gitstore.Hash {
		t.Helper()
		if err := os.WriteFile(filepath.Join(task.Path, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		gt.Git(t, task.Path, "add", "-A")
		gt.Git(t, task.Path, "commit", "-q", "-m", msg)
		h, err := gitstore.ParseHash(gt.Git(t, task.Path, "rev-parse", "HEAD"))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	red := commitFile("pkg/a_test.go", "package pkg\n", "red")
	green := commitFile("pkg/a.go", "package pkg\n\nfunc A() int { return 1 }\n", "green")

	// Refused: a commit the branch does not hold.
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "elsewhere")
	other, _ := gitstore.ParseHash(gt.Git(t, dir, "rev-parse", "HEAD"))
	if _, _, err := m.BackToRed(ctx, "S1-01/T1", other); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("a RED commit off the branch: %v", err)
	}
	// Refused: uncommitted work.
	os.WriteFile(filepath.Join(task.Path, "pkg", "a.go"), []byte("package pkg\n// wip\n"), 0o644)
	if _, _, err := m.BackToRed(ctx, "S1-01/T1", red); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("uncommitted work: %v", err)
	}
	if c, _ := m.Contract("S1-01/T1"); c.Attempt != 1 || c.Role != "green-worker" || gt.Git(t, task.Path, "rev-parse", "HEAD") != green.String() {
		t.Fatalf("a refusal changed the task: %+v", c)
	}
	gt.Git(t, task.Path, "checkout", "--", "pkg/a.go")

	c, kept, err := m.BackToRed(ctx, "S1-01/T1", red)
	if err != nil || kept != "ideate/task/S1-01+T1-green-1" || c.Attempt != 2 || c.Role != worktree.RoleRed {
		t.Fatalf("BackToRed: %+v %q %v", c, kept, err)
	}
	if h := gt.Git(t, task.Path, "rev-parse", "HEAD"); h != red.String() {
		t.Errorf("worktree at %s, want RED %s", h, red)
	}
	if st := gt.Git(t, task.Path, "status", "--porcelain"); st != "" {
		t.Errorf("worktree dirty:\n%s", st)
	}
	if h := gt.Git(t, dir, "rev-parse", "refs/heads/"+kept); h != green.String() {
		t.Errorf("kept branch at %s, want GREEN %s", h, green)
	}
	c, kept, err = m.BackToRed(ctx, "S1-01/T1", red)
	if err != nil || kept != "" || c.Attempt != 3 {
		t.Fatalf("BackToRed at RED: %+v %q %v", c, kept, err)
	}
	gt.Fsck(t, dir)
}
