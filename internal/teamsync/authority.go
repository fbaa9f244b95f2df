package teamsync

import (
	"context"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// PublishRounds bounds the push-fetch-rebase rounds of one authoritative
// transition.
const PublishRounds = 6

// Authority makes a remote the judge of claims: it implements
// board.Authority, so with it set on a board.Store, claim, renew, release,
// complete, cancel and reopen succeed only once the remote has accepted
// the item's new head (one `git push --force-with-lease` of that item's
// ref from the value last seen there).
//
// When the push is refused, the item is fetched and the local transitions
// are rebased onto the remote's head (board.Rebase): if the verb's own
// transition still applies there (the remote had only moved in a way that
// does not conflict), the rebased head is pushed again; if it does not (a
// claim that lost to another clone's claim), the local ref is left at the
// remote's state plus any other local transitions that still apply, and
// the verb fails with the error it would have had on the remote's state:
// NOT_CLAIMABLE naming the holder, INVALID_CLAIM, INVALID_TRANSITION.
//
// When the remote cannot be reached, the verb's commit is taken back off
// the local ref (it was never accepted by anyone) and the verb fails with
// REMOTE.
type Authority struct {
	Git    *gitstore.Store
	Board  *board.Store
	Remote string
}

// Publish implements board.Authority. ctx bounds the pushes and fetches
// of its rounds; a cancelled Publish takes the verb's commit back, as when
// the remote cannot be reached, and returns ctx.Err().
func (a *Authority) Publish(ctx context.Context, id string, mine gitstore.Hash) (gitstore.Hash, error) {
	ref := board.RefName(id)
	tr := gitstore.TrackingRef(a.Remote, ref)
	head := mine
	last := ""
	lease, err := a.Git.Ref(tr)
	if err != nil {
		return head, err
	}
	for round := 0; round < PublishRounds; round++ {
		res, err := a.push(ctx, ref, lease, head)
		if err != nil {
			a.takeBack(ctx, ref, head)
			if ctx.Err() != nil {
				return gitstore.ZeroHash, ctx.Err()
			}
			return gitstore.ZeroHash, apperr.Wrap(gitstore.RemoteFailed, err, "the push to remote %s failed, so the transition was not made: %s", a.Remote, apperr.Message(err))
		}
		if res[0].OK {
			if was, err := a.Git.Ref(tr); err == nil {
				_ = a.Git.UpdateRef(ctx, tr, head, was)
			}
			return head, nil
		}
		if !res[0].Raced() {
			a.takeBack(ctx, ref, head)
			return gitstore.ZeroHash, apperr.New(gitstore.RemoteFailed, "the remote %s refused item %s (%s), so the transition was not made", a.Remote, id, res[0].Reason)
		}
		last = res[0].Reason
		// Someone else moved the item at the remote, or archived it
		// there: look, and replay.
		if err := a.Git.Fetch(ctx, a.Remote, gitstore.RemoteOptions{}, ref, board.ArchiveRef); err != nil {
			a.takeBack(ctx, ref, head)
			return gitstore.ZeroHash, err
		}
		now, err := a.Git.Ref(tr)
		if err != nil {
			return head, err
		}
		lease = now
		if at, held, err := a.archived(id, now); err != nil {
			return head, err
		} else if held {
			// The remote holds the item in its archive (the fetch of one
			// ref does not prune a tracking copy): our transitions go on
			// top of the archived tip and make the item live again.
			now, lease = at, gitstore.ZeroHash
		}
		if now == gitstore.ZeroHash {
			// The lease named a value the remote no longer has and the item
			// is gone there: nothing we can replay onto.
			a.takeBack(ctx, ref, head)
			return gitstore.ZeroHash, apperr.New(apperr.Conflict, "item %s is no longer on remote %s", id, a.Remote)
		}
		rb, err := a.Board.Rebase(ctx, id, now)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		for _, d := range rb.Dropped {
			if d.Commit == head {
				return gitstore.ZeroHash, d.Err
			}
		}
		if rb.New == now {
			// Our transition became a no-op there (for example, the remote
			// already recovered the same lapsed claim).
			return now, nil
		}
		head = rb.New
	}
	a.takeBack(ctx, ref, head)
	return gitstore.ZeroHash, apperr.New(apperr.Conflict, "the remote %s kept refusing item %s (last: %s); gave up after %d rounds", a.Remote, id, last, PublishRounds)
}

// push moves ref at the remote from old to new: directly over smart HTTP
// when it can (directPush), else by `git push --force-with-lease`.
func (a *Authority) push(ctx context.Context, ref string, old, new gitstore.Hash) ([]gitstore.PushResult, error) {
	if r, ok, err := directPush(ctx, a.Git, a.Remote, ref, old, new); ok || err != nil {
		return []gitstore.PushResult{r}, err
	}
	return a.Git.Push(ctx, a.Remote, []gitstore.PushUpdate{{Ref: ref, New: new, Old: old}}, gitstore.RemoteOptions{})
}

// archived reports whether the remote's archive (as last fetched) holds
// item id at a tip that contains now (ZeroHash: the remote has no ref).
func (a *Authority) archived(id string, now gitstore.Hash) (gitstore.Hash, bool, error) {
	arch, err := a.Git.Ref(gitstore.TrackingRef(a.Remote, board.ArchiveRef))
	if err != nil || arch == gitstore.ZeroHash {
		return gitstore.ZeroHash, false, err
	}
	at, err := a.Board.ArchivedAt(arch, id)
	if err != nil || at == gitstore.ZeroHash {
		return at, false, err
	}
	if now == gitstore.ZeroHash || now == at {
		return at, true, nil
	}
	held, err := a.Git.IsAncestor(now, at)
	return at, held, err
}

// takeBack moves ref from head to head's parent: the transition at head
// was never accepted, so it must not count locally either. If ref moved
// meanwhile it is left alone. It runs even when ctx is cancelled (a
// cancelled push is one the remote may not have taken): only ctx's values
// are kept.
func (a *Authority) takeBack(ctx context.Context, ref string, head gitstore.Hash) {
	ctx = context.WithoutCancel(ctx)
	c, err := a.Git.ReadCommit(head)
	if err != nil || len(c.Parents) == 0 {
		return // a create is never published through an authority
	}
	_ = a.Git.UpdateRef(ctx, ref, c.Parents[0], head)
}

// Refresh implements board.Authority: one fetch of the items' refs from
// the remote, then each local ref is brought to the remote's head
// (board.Rebase: a fast-forward when this clone has nothing the remote
// lacks, else its local transitions replayed on top). An item the remote
// does not have stays as it is; one only the remote has is created
// locally at the remote's head. ctx bounds the fetch.
func (a *Authority) Refresh(ctx context.Context, ids []string) error {
	refs := make([]string, len(ids))
	for i, id := range ids {
		refs[i] = board.RefName(id)
	}
	if err := a.Git.Fetch(ctx, a.Remote, gitstore.RemoteOptions{}, refs...); err != nil {
		return err
	}
	for i, id := range ids {
		theirs, err := a.Git.Ref(gitstore.TrackingRef(a.Remote, refs[i]))
		if err != nil {
			return err
		}
		if theirs == gitstore.ZeroHash {
			continue
		}
		mine, err := a.Git.Ref(refs[i])
		if err != nil {
			return err
		}
		if mine == gitstore.ZeroHash {
			if err := a.Git.UpdateRef(ctx, refs[i], theirs, gitstore.ZeroHash); err != nil && !apperr.Is(err, apperr.Conflict) {
				return err
			}
			continue
		}
		if _, err := a.Board.Rebase(ctx, id, theirs); err != nil {
			return err
		}
	}
	return nil
}
