package teamsync_test

import (
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/teamsync"
	"github.com/ideate/git-ideate/internal/worktree"
)

const taskBranch = "refs/heads/ideate/task/S1-01+T1"

// commitOn makes a commit on ref (from its tip, else HEAD) in c.
func commitOn(t *testing.T, c *clone, ref, msg string) string {
	t.Helper()
	parent := "HEAD"
	if _, err := gt.GitErr(c.dir, "rev-parse", "-q", "--verify", ref); err == nil {
		parent = ref
	}
	h := gt.Git(t, c.dir, "commit-tree", gt.Git(t, c.dir, "rev-parse", parent+"^{tree}"), "-p", gt.Git(t, c.dir, "rev-parse", parent), "-m", msg)
	gt.Git(t, c.dir, "update-ref", ref, h)
	return h
}

// TestSync_TaskBranchesTravelForwardOnly: a task branch made in one clone
// reaches the other as a branch of the same name; a later commit moves it
// forward there; two branches of one task that diverged are each left as
// they are, and neither is pushed over the other.
func TestSync_TaskBranchesTravelForwardOnly(t *testing.T) {
	bare := newRemote(t)
	a, b := cloneOf(t, bare), cloneOf(t, bare)
	first := commitOn(t, a, taskBranch, "red")
	a.sync(t)
	sum := b.sync(t)
	if got := gt.Git(t, b.dir, "rev-parse", taskBranch); got != first || sum.Branches.Pulled != 1 {
		t.Fatalf("b's task branch is %q after the sync (%+v), want a's %s", got, sum.Branches, first)
	}
	second := commitOn(t, a, taskBranch, "green")
	a.sync(t)
	b.sync(t)
	if got := gt.Git(t, b.dir, "rev-parse", taskBranch); got != second {
		t.Fatalf("b's task branch did not move forward to %s: %s", second, got)
	}
	mine := commitOn(t, b, taskBranch, "b's own")
	theirs := commitOn(t, a, taskBranch, "a's own")
	a.sync(t)
	sum = b.sync(t)
	if got := gt.Git(t, b.dir, "rev-parse", taskBranch); got != mine {
		t.Fatalf("b's diverged branch was moved to %s", got)
	}
	if got := remoteRef(t, bare, teamsync.BranchesPrefix+"S1-01+T1"); got != theirs || sum.Branches.Pushed != 0 {
		t.Fatalf("the remote's copy of the branch is %s (b pushed %d), want a's %s", got, sum.Branches.Pushed, theirs)
	}
	gt.Fsck(t, bare)
}

// TestSync_TaskContractsMeet: a task's contract reaches the other clone;
// when both clones changed it (released on one, taken over on the other),
// both end with the contract updated last, and every commit of both is
// kept in the task ref's history.
func TestSync_TaskContractsMeet(t *testing.T) {
	bare := newRemote(t)
	a, b := cloneOf(t, bare), cloneOf(t, bare)
	ma, mb := worktree.Open(a.g), worktree.Open(b.g)
	if _, err := ma.Start(t.Context(), worktree.StartInput{Task: "S1-01/T1", Item: "i", Holder: "alice", Token: 1, Scope: []string{"x/**"}}); err != nil {
		t.Fatal(err)
	}
	a.sync(t)
	if sum := b.sync(t); sum.Tasks.Pulled != 1 {
		t.Fatalf("b pulled %+v task refs, want 1", sum.Tasks)
	}
	if ct, err := mb.Contract("S1-01/T1"); err != nil || ct.Holder != "alice" {
		t.Fatalf("b's copy of the contract: %+v, %v", ct, err)
	}
	if _, err := ma.Close(t.Context(), worktree.CloseInput{Task: "S1-01/T1", Status: worktree.StatusReleased, Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Start(t.Context(), worktree.StartInput{Task: "S1-01/T1", Item: "i", Holder: "bob", Token: 2, Scope: []string{"x/**"}}); err != nil {
		t.Fatal(err)
	}
	a.sync(t)
	if sum := b.sync(t); sum.Tasks.Merged != 1 {
		t.Fatalf("b merged %+v task refs, want 1", sum.Tasks)
	}
	a.sync(t)
	for _, m := range []*worktree.Manager{ma, mb} {
		ct, err := m.Contract("S1-01/T1")
		if err != nil || ct.Holder != "bob" || ct.Status != worktree.StatusOpen || ct.Token != 2 {
			t.Fatalf("after the syncs the contract is %+v (%v), want bob's open one", ct, err)
		}
	}
	if gt.Git(t, a.dir, "rev-parse", worktree.RefPrefix+"S1-01+T1") != gt.Git(t, b.dir, "rev-parse", worktree.RefPrefix+"S1-01+T1") {
		t.Fatal("the task refs differ after the syncs")
	}
	gt.Fsck(t, bare)
}
