package teamsync

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/worktree"
)

// BranchesPrefix holds, per task, the tip of the task's branch
// (refs/heads/ideate/task/<task>) as a ref under refs/ideate/, so the
// branches the gates judged travel with the rest of the ideate state: a
// sync publishes this clone's task branches there and makes the other
// clones' task branches local branches. The team's remote keeps them out
// of its branch list.
const BranchesPrefix = "refs/ideate/branches/"

// tasks levels the execution side a sync carries besides the execution
// log: every task's ref (contract, attempts, runs) and the task branches.
//
// A task ref is a union like the record; when both sides changed one
// task's contract, the newer contract stands (both are kept in the
// history). A task is executed by the one clone that holds its claim, so
// that happens only when a task moved between clones (released on one,
// started on the other).
//
// A task branch only ever moves forward: its mirror under BranchesPrefix
// follows the local branch when that is ahead, the remote's when that is
// ahead; two branches of one task that diverged (two clones committed to
// it) are left as they are on each side and neither is pushed.
func (y *Syncer) tasks(ctx context.Context, r *roundResult) error {
	if err := y.mirrorBranches(ctx); err != nil {
		return err
	}
	names, err := y.refNames(worktree.RefPrefix)
	if err != nil {
		return err
	}
	for _, ref := range names {
		if gone, err := y.archivedRef(ctx, ref, []string{"tasks", strings.TrimPrefix(ref, worktree.RefPrefix)}, r); err != nil {
			return err
		} else if gone {
			continue
		}
		did, err := y.union(ctx, ref, y.newerContract, r)
		if err != nil {
			return err
		}
		r.count(did, &r.tasks)
	}
	names, err = y.refNames(BranchesPrefix)
	if err != nil {
		return err
	}
	for _, ref := range names {
		if gone, err := y.archivedRef(ctx, ref, []string{"branches", strings.TrimPrefix(ref, BranchesPrefix)}, r); err != nil {
			return err
		} else if gone {
			continue
		}
		did, err := y.forward(ctx, ref, r)
		if err != nil {
			return err
		}
		r.count(did, &r.branches)
	}
	return y.branchesFromMirrors(ctx)
}

// refNames lists the refs under prefix here or at the remote (as
// tracked), each once.
func (y *Syncer) refNames(prefix string) ([]string, error) {
	locals, err := y.Git.Refs(prefix)
	if err != nil {
		return nil, err
	}
	tp := gitstore.TrackingRef(y.Remote, prefix)
	remotes, err := y.Git.Refs(tp)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, l := range locals {
		if !seen[l.Name] {
			seen[l.Name] = true
			out = append(out, l.Name)
		}
	}
	for _, t := range remotes {
		name := prefix + strings.TrimPrefix(t.Name, tp)
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, nil
}

// newerContract resolves a task's contract changed on both sides: the
// one updated last stands (then the higher claim token, then the bytes,
// so both clones choose the same); other files of a task (attempts,
// runs) are written once and keep ours.
func (y *Syncer) newerContract(path string, ours, theirs gitstore.TreeEntry) (gitstore.TreeEntry, error) {
	if !strings.HasSuffix(path, "contract.json") {
		return ours, nil
	}
	read := func(e gitstore.TreeEntry) (*worktree.Contract, string, error) {
		b, err := y.Git.ReadBlob(e.Hash)
		if err != nil {
			return nil, "", err
		}
		var c worktree.Contract
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, "", apperr.Wrap(apperr.Internal, err, "a task contract (%s) does not parse", e.Hash)
		}
		return &c, string(b), nil
	}
	a, ab, err := read(ours)
	if err != nil {
		return ours, err
	}
	b, bb, err := read(theirs)
	if err != nil {
		return ours, err
	}
	switch {
	case a.UpdatedAt != b.UpdatedAt:
		if a.UpdatedAt > b.UpdatedAt {
			return ours, nil
		}
		return theirs, nil
	case a.Token != b.Token:
		if a.Token > b.Token {
			return ours, nil
		}
		return theirs, nil
	case ab >= bb:
		return ours, nil
	}
	return theirs, nil
}

// forward levels ref with its tracking copy when one contains the other;
// diverged, it leaves both.
func (y *Syncer) forward(ctx context.Context, ref string, r *roundResult) (string, error) {
	tr := gitstore.TrackingRef(y.Remote, ref)
	local, err := y.Git.Ref(ref)
	if err != nil {
		return "", err
	}
	theirs, err := y.Git.Ref(tr)
	if err != nil {
		return "", err
	}
	switch {
	case local == theirs:
		return "up-to-date", nil
	case theirs == gitstore.ZeroHash:
		r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, New: local})
		return "pushed", nil
	case local == gitstore.ZeroHash:
		return "pulled", y.Git.UpdateRef(ctx, ref, theirs, gitstore.ZeroHash)
	}
	if ok, err := y.Git.IsAncestor(theirs, local); err != nil {
		return "", err
	} else if ok {
		r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, New: local, Old: theirs})
		return "pushed", nil
	}
	if ok, err := y.Git.IsAncestor(local, theirs); err != nil {
		return "", err
	} else if ok {
		return "pulled", y.Git.UpdateRef(ctx, ref, theirs, local)
	}
	y.progress("%s has diverged from %s's; neither moves", ref, y.Remote)
	return "diverged", nil
}

func branchOf(mirror string) string {
	return "refs/heads/" + worktree.BranchPrefix + strings.TrimPrefix(mirror, BranchesPrefix)
}

// mirrorBranches moves each task branch's mirror forward to the branch
// (or creates it).
func (y *Syncer) mirrorBranches(ctx context.Context) error {
	branches, err := y.Git.Refs("refs/heads/" + worktree.BranchPrefix)
	if err != nil {
		return err
	}
	for _, b := range branches {
		name := strings.TrimPrefix(b.Name, "refs/heads/"+worktree.BranchPrefix)
		m := BranchesPrefix + name
		cur, err := y.Git.Ref(m)
		if err != nil {
			return err
		}
		if cur == b.Hash {
			continue
		}
		if cur == gitstore.ZeroHash {
			// A finished task's branch the archive holds stays out of
			// the live refs until it moves past the archived tip.
			if _, held, err := y.inArchive(b.Hash, []string{"branches", name}); err != nil {
				return err
			} else if held {
				continue
			}
		}
		if cur != gitstore.ZeroHash {
			if ok, err := y.Git.IsAncestor(cur, b.Hash); err != nil || !ok {
				continue // the mirror is ahead or elsewhere: the branch does not lead
			}
		}
		if err := y.Git.UpdateRef(ctx, m, b.Hash, cur); err != nil && !apperr.Is(err, apperr.Conflict) {
			return err
		}
	}
	return nil
}

// branchesFromMirrors makes each mirror a local task branch: created when
// absent, moved forward when the branch is behind and no worktree of this
// clone has it checked out.
func (y *Syncer) branchesFromMirrors(ctx context.Context) error {
	mirrors, err := y.Git.Refs(BranchesPrefix)
	if err != nil {
		return err
	}
	var out map[string]bool
	for _, m := range mirrors {
		b := branchOf(m.Name)
		cur, err := y.Git.Ref(b)
		if err != nil {
			return err
		}
		if cur == m.Hash {
			continue
		}
		if cur != gitstore.ZeroHash {
			if ok, err := y.Git.IsAncestor(cur, m.Hash); err != nil || !ok {
				continue
			}
			if out == nil {
				if out, err = y.checkedOut(ctx); err != nil {
					return err
				}
			}
			if out[b] {
				continue
			}
		}
		if err := y.Git.UpdateRef(ctx, b, m.Hash, cur); err != nil && !apperr.Is(err, apperr.Conflict) {
			return err
		}
	}
	return nil
}

// checkedOut is the set of branches some worktree of this clone has
// checked out.
func (y *Syncer) checkedOut(ctx context.Context) (map[string]bool, error) {
	wts, err := y.Git.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, w := range wts {
		if w.Branch != "" {
			out[w.Branch] = true
		}
	}
	return out, nil
}

// archivedRef levels a task ref or branch mirror that one side lacks
// because the archive holds it at path: the local copy is dropped, or the
// remote's (put back by a clone that did not know the archive) deleted.
// It reports whether it did either; a ref with more than the archive holds
// (a task started again) is left to the union or forward, which make it
// live again.
func (y *Syncer) archivedRef(ctx context.Context, ref string, path []string, r *roundResult) (bool, error) {
	local, err := y.Git.Ref(ref)
	if err != nil {
		return false, err
	}
	theirs, err := y.Git.Ref(gitstore.TrackingRef(y.Remote, ref))
	if err != nil || (local == gitstore.ZeroHash) == (theirs == gitstore.ZeroHash) {
		return false, err
	}
	one := local
	if one == gitstore.ZeroHash {
		one = theirs
	}
	_, held, err := y.inArchive(one, path)
	if err != nil || !held {
		return false, err
	}
	if local == gitstore.ZeroHash {
		r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, Old: theirs})
		return true, nil
	}
	if err := y.Git.UpdateRef(ctx, ref, gitstore.ZeroHash, local); err != nil && !apperr.Is(err, apperr.Conflict) {
		return false, err
	}
	r.unarchived++
	return true, nil
}
