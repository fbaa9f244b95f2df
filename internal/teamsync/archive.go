package teamsync

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/config"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/worktree"
)

// DefaultArchiveAfter is how long an item stays live after it was done or
// cancelled (and a task ref after its task was closed) before a sync folds
// it into the archive (board.ArchiveRef); `git config ideate.archiveAfter`
// sets another age (a Go duration such as 36h, or a number of days such
// as 3d; 0 archives at the next sync; off never archives).
const DefaultArchiveAfter = 7 * 24 * time.Hour

// archiveAfter reads ideate.archiveAfter; ok is false when archiving is off.
func (y *Syncer) archiveAfter() (time.Duration, bool, error) {
	v, set := y.Git.Config().Get("ideate", "archiveAfter")
	v = strings.TrimSpace(strings.ToLower(v))
	switch {
	case !set || v == "":
		return DefaultArchiveAfter, true, nil
	case v == "off" || v == "never" || v == "false":
		return 0, false, nil
	case strings.HasSuffix(v, "d"):
		if n, err := strconv.ParseFloat(strings.TrimSuffix(v, "d"), 64); err == nil && n >= 0 {
			return time.Duration(n * float64(24*time.Hour)), true, nil
		}
	default:
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			return d, true, nil
		}
		if n, err := strconv.Atoi(v); err == nil && n == 0 {
			return 0, true, nil
		}
	}
	return 0, false, apperr.New(config.CodeInvalid, "ideate.archiveAfter is %q: give a duration (36h), a number of days (3d), 0 or off", v)
}

// archiveRound folds the finished items and task refs older than the
// configured age into the archive: those level with the remote, and those
// this round pushes whose remote value they contain. One commit on the
// (already merged) local archive is queued to the push with the deletion
// of each such ref the remote has, leased on its value there, instead of
// the ref's own update, so the remote takes all of it or none. The local
// refs change only once the push is accepted (archived).
func (y *Syncer) archiveRound(ctx context.Context, r *roundResult) error {
	age, on, err := y.archiveAfter()
	if err != nil || !on {
		return err
	}
	before := y.Board.Now().Add(-age)
	items, ids, err := y.Board.Archivable(before, -1)
	if err != nil {
		return err
	}
	queued := map[string]int{}
	for i, u := range r.updates {
		queued[u.Ref] = i
	}
	drop := map[int]bool{}
	var add []board.Archived
	var refs, dels []gitstore.PushUpdate
	take := func(ref string, a board.Archived) error {
		theirs, err := y.Git.Ref(gitstore.TrackingRef(y.Remote, ref))
		if err != nil {
			return err
		}
		if theirs != a.Tip {
			// Ahead of the remote (this round pushes it): archived in
			// the same push instead, when what the remote has is part of it.
			i, ok := queued[ref]
			if !ok || r.updates[i].New != a.Tip {
				return nil
			}
			if theirs != gitstore.ZeroHash {
				if ok, err := y.Git.IsAncestor(theirs, a.Tip); err != nil || !ok {
					return err
				}
			}
			drop[i] = true
		}
		add = append(add, a)
		refs = append(refs, gitstore.PushUpdate{Ref: ref, Old: a.Tip})
		if theirs != gitstore.ZeroHash {
			dels = append(dels, gitstore.PushUpdate{Ref: ref, Old: theirs})
		}
		return nil
	}
	for i, a := range items {
		if err := take(board.RefName(ids[i]), a); err != nil {
			return err
		}
	}
	tasks, err := y.Git.Refs(worktree.RefPrefix)
	if err != nil {
		return err
	}
	finished := map[string]bool{}
	for _, t := range tasks {
		done, err := y.taskFinished(t.Hash, before)
		if err != nil {
			return err
		}
		if !done {
			continue
		}
		name := strings.TrimPrefix(t.Name, worktree.RefPrefix)
		finished[name] = true
		if err := take(t.Name, board.Archived{Path: []string{"tasks", name}, Tip: t.Hash}); err != nil {
			return err
		}
	}
	// A finished task's branch mirror goes with its task ref (or after
	// it, when the ref went before the branches were archived): gate final
	// finds the branch in the archive (worktree.BranchArchivePath).
	mirrors, err := y.Git.Refs(BranchesPrefix)
	if err != nil {
		return err
	}
	arch, err := y.Git.Ref(board.ArchiveRef)
	if err != nil {
		return err
	}
	for _, m := range mirrors {
		name := strings.TrimPrefix(m.Name, BranchesPrefix)
		if !finished[name] {
			if live, err := y.Git.Ref(worktree.RefPrefix + name); err != nil || live != gitstore.ZeroHash {
				continue
			}
			if at, err := board.ArchivedIn(y.Git, arch, []string{"tasks", name}); err != nil || at == gitstore.ZeroHash {
				continue
			}
		}
		if err := take(m.Name, board.Archived{Path: []string{"branches", name}, Tip: m.Hash}); err != nil {
			return err
		}
	}
	if len(add) == 0 {
		return nil
	}
	base, err := y.Git.Ref(board.ArchiveRef)
	if err != nil {
		return err
	}
	next, err := y.Board.ArchiveCommit(base, add)
	if err != nil {
		return err
	}
	theirs, err := y.Git.Ref(gitstore.TrackingRef(y.Remote, board.ArchiveRef))
	if err != nil {
		return err
	}
	if i, ok := queued[board.ArchiveRef]; ok {
		r.updates[i].New = next
	} else {
		r.updates = append(r.updates, gitstore.PushUpdate{Ref: board.ArchiveRef, New: next, Old: theirs})
	}
	kept := r.updates[:0]
	for i, u := range r.updates {
		if !drop[i] {
			kept = append(kept, u)
		}
	}
	r.updates = append(kept, dels...)
	r.archiveFrom, r.archiveTo, r.archivedRefs = base, next, refs
	return nil
}

// taskFinished reports whether the task ref at tip holds a closed contract
// written before before.
func (y *Syncer) taskFinished(tip gitstore.Hash, before time.Time) (bool, error) {
	c, err := y.Git.ReadCommit(tip)
	if err != nil {
		return false, err
	}
	if !c.Committer.When.Before(before) {
		return false, nil
	}
	e, ok, err := y.Git.Lookup(c.Tree, []string{"contract.json"})
	if err != nil || !ok {
		return false, err
	}
	b, err := y.Git.ReadBlob(e.Hash)
	if err != nil {
		return false, err
	}
	var ct worktree.Contract
	if json.Unmarshal(b, &ct) != nil {
		return false, nil
	}
	return ct.Status != "" && ct.Status != worktree.StatusOpen, nil
}

// archived applies an accepted push's archive to this clone: the local
// archive moves to the pushed commit and the refs it holds are deleted,
// each only from the tip archived (a ref a local writer moved meanwhile
// stays: it is live again, and the next sync pushes it).
func (y *Syncer) archived(ctx context.Context, r *roundResult) int {
	if r.archiveTo == gitstore.ZeroHash {
		return 0
	}
	ctx = context.WithoutCancel(ctx)
	if err := y.Git.UpdateRef(ctx, board.ArchiveRef, r.archiveTo, r.archiveFrom); err != nil {
		return 0 // a local writer moved the archive: the next sync merges the remote's
	}
	n := 0
	for _, u := range r.archivedRefs {
		if y.Git.UpdateRef(ctx, u.Ref, gitstore.ZeroHash, u.Old) == nil {
			n++
		}
		// git's push removed the tracking copy of a ref it deleted; one
		// left behind would read as the remote still holding it.
		tr := gitstore.TrackingRef(y.Remote, u.Ref)
		if h, _ := y.Git.Ref(tr); h == u.Old {
			_ = y.Git.UpdateRef(ctx, tr, gitstore.ZeroHash, u.Old)
		}
	}
	return n
}

// inArchive reports whether ref's value h is held by the archive at path:
// h is the archived tip or one of its ancestors, so the ref adds nothing
// the archive lacks. a is the archived tip (ZeroHash: not archived).
func (y *Syncer) inArchive(h gitstore.Hash, path []string) (a gitstore.Hash, held bool, err error) {
	arch, err := y.Git.Ref(board.ArchiveRef)
	if err != nil || arch == gitstore.ZeroHash {
		return gitstore.ZeroHash, false, err
	}
	if a, err = board.ArchivedIn(y.Git, arch, path); err != nil || a == gitstore.ZeroHash {
		return a, false, err
	}
	if h == a {
		return a, true, nil
	}
	held, err = y.Git.IsAncestor(h, a)
	return a, held, err
}

// newerArchived resolves one path archived differently on two sides: the
// tip that contains the other stands (a ref archived, reopened and
// archived again); two that diverged keep ours.
func (y *Syncer) newerArchived(path string, ours, theirs gitstore.TreeEntry) (gitstore.TreeEntry, error) {
	if strings.HasPrefix(path, "references/") {
		return ours, nil // an item's references, the same on both sides but for a reopen between
	}
	read := func(e gitstore.TreeEntry) gitstore.Hash {
		b, err := y.Git.ReadBlob(e.Hash)
		if err != nil {
			return gitstore.ZeroHash
		}
		h, _ := gitstore.ParseHash(strings.TrimSpace(string(b)))
		return h
	}
	a, b := read(ours), read(theirs)
	if ok, err := y.Git.IsAncestor(a, b); err == nil && ok {
		return theirs, nil
	}
	return ours, nil
}
