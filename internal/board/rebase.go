package board

import (
	"context"
	"fmt"
	"reflect"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// Dropped is a local transition that did not survive a rebase onto another
// head of its item: the other side had already moved the item somewhere it
// no longer applies (a claim that lost to another claim, a complete after
// a cancel, a renew with a token the other side had voided).
type Dropped struct {
	Commit gitstore.Hash // the local commit of the transition
	Event  Event
	Err    *apperr.Error // why, as the verb would have said it there
	Holder *Actor        // who holds the item on the other side, if anyone
}

// RebaseResult says how an item's local chain was moved onto another head.
type RebaseResult struct {
	ID       string
	Old, New gitstore.Hash // the local ref before and after
	// FastForward: the local ref only moved forward to onto (or stayed).
	FastForward bool
	Replayed    int
	Dropped     []Dropped
	// Tokens maps a local claim token to the one its replayed claim got
	// (-1: the claim was dropped).
	Tokens map[int64]int64
}

// Rebase moves item id's local chain onto onto (another clone's head of
// the same item, typically the remote's): the local transitions since the
// two chains parted are replayed one by one on top of onto, each checked
// as its verb would check it there; one that no longer applies is dropped
// and reported. Fencing tokens stay monotonic across clones: a replayed
// claim keeps its token if it is above every token onto's side issued,
// else takes the next one, and the local holder's later transitions follow
// it. The local ref moves by compare-and-swap; nothing on the onto side
// changes. When onto already contains the local head, the ref just moves
// forward to it; when the local head contains onto, nothing moves.
func (s *Store) Rebase(ctx context.Context, id string, onto gitstore.Hash) (*RebaseResult, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if onto == gitstore.ZeroHash {
		return nil, apperr.New(apperr.Schema, "rebase of item %s needs a head to rebase onto", id)
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := s.rebaseOnce(ctx, id, onto)
		if err == nil || !apperr.Is(err, apperr.Conflict) || attempt >= 20 {
			return res, err
		}
		// the local ref moved under us: start again from its new head
	}
}

func (s *Store) rebaseOnce(ctx context.Context, id string, onto gitstore.Hash) (*RebaseResult, error) {
	ref := RefName(id)
	local, err := s.git.Ref(ref)
	if err != nil {
		return nil, err
	}
	res := &RebaseResult{ID: id, Old: local, New: local}
	if local == onto {
		res.FastForward = true
		return res, nil
	}
	if local == gitstore.ZeroHash {
		res.New, res.FastForward = onto, true
		return res, s.git.UpdateRef(ctx, ref, onto, gitstore.ZeroHash)
	}
	// The chain of onto, for finding where the local chain left it.
	ontoSet := map[gitstore.Hash]bool{}
	var ontoRoot gitstore.Hash
	for h := onto; h != gitstore.ZeroHash; {
		ontoSet[h] = true
		ontoRoot = h
		c, err := s.git.ReadCommit(h)
		if err != nil {
			return nil, err
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	if ontoSet[local] {
		res.New, res.FastForward = onto, true
		return res, s.git.UpdateRef(ctx, ref, onto, local)
	}
	var mine []gitstore.Hash // local commits after the fork point, newest first
	fork := local
	for fork != gitstore.ZeroHash && !ontoSet[fork] {
		mine = append(mine, fork)
		c, err := s.git.ReadCommit(fork)
		if err != nil {
			return nil, err
		}
		fork = gitstore.ZeroHash
		if len(c.Parents) > 0 {
			fork = c.Parents[0]
		}
	}
	if fork == onto {
		res.FastForward = true // the local chain already contains onto
		return res, nil
	}
	head, cur := onto, (*Item)(nil)
	if cur, err = s.load(onto); err != nil {
		return nil, err
	}
	res.Tokens = map[int64]int64{}
	for i := len(mine) - 1; i >= 0; i-- {
		h := mine[i]
		before, after, ev, err := s.transitionAt(h)
		if err != nil {
			return nil, err
		}
		if ev.Transition == TCreate && before == nil {
			if root, err := s.load(ontoRoot); err == nil && sameCreation(root, after) {
				// One item under an id both sides derived (plan import):
				// the other side's creation stands, nothing is lost.
				continue
			}
		}
		next, d := replay(cur, before, after, ev, res.Tokens)
		if d != nil {
			d.Commit, d.Event = h, ev
			res.Dropped = append(res.Dropped, *d)
			continue
		}
		if next == nil {
			continue // nothing left to do on this side (a recovery already made)
		}
		next.Version = cur.Version + 1
		if ev.ClaimToken != nil {
			if t, ok := res.Tokens[*ev.ClaimToken]; ok {
				ev.ClaimToken = tokenPtr(t)
			}
		}
		t := transition{item: next, event: ev}
		tree, err := s.writeTree(t)
		if err != nil {
			return nil, err
		}
		if head, err = s.git.CommitTree(tree, head, commitMessage(t)); err != nil {
			return nil, err
		}
		cur = next
		res.Replayed++
	}
	res.New = head
	if err := s.git.UpdateRef(ctx, ref, head, local); err != nil {
		return nil, err
	}
	return res, nil
}

// transitionAt reads the snapshot before commit h (nil for a create), the
// snapshot h wrote and h's event.
func (s *Store) transitionAt(h gitstore.Hash) (before, after *Item, ev Event, err error) {
	c, err := s.git.ReadCommit(h)
	if err != nil {
		return nil, nil, ev, err
	}
	if after, err = s.load(h); err != nil {
		return nil, nil, ev, err
	}
	if len(c.Parents) > 0 {
		if before, err = s.load(c.Parents[0]); err != nil {
			return nil, nil, ev, err
		}
	}
	e, ok, err := s.eventOf(c)
	if err == nil && !ok {
		err = apperr.New(apperr.Internal, "commit %s of item %s holds no readable %s", h, after.ID, eventFile)
	}
	return before, after, e, err
}

func holderOf(it *Item) *Actor {
	if it.Status == StatusInProgress && it.Claim != nil {
		a := it.Claim.Holder
		return &a
	}
	return nil
}

func describe(it *Item) string {
	if h := holderOf(it); h != nil {
		return fmt.Sprintf("in_progress, held by %s with token %d", h, it.Claim.ClaimToken)
	}
	return it.Status
}

// replay applies one local transition (before → after, event ev) to cur,
// the other side's current state. It returns the next state, nil and no
// drop when the transition has become a no-op, or why it no longer applies.
func replay(cur, before, after *Item, ev Event, tokens map[int64]int64) (*Item, *Dropped) {
	drop := func(code apperr.Code, format string, a ...any) (*Item, *Dropped) {
		return nil, &Dropped{Err: apperr.New(code, format, a...), Holder: holderOf(cur)}
	}
	held := func(tok *int64) bool {
		if tok == nil || cur.Status != StatusInProgress || cur.Claim == nil {
			return false
		}
		t := *tok
		if m, ok := tokens[t]; ok {
			if m < 0 {
				return false
			}
			t = m
		}
		return cur.Claim.ClaimToken == t
	}
	next := *cur
	next.UpdatedAt = after.UpdatedAt
	switch ev.Transition {
	case TClaim:
		if cur.Status != StatusOpen {
			if after.Claim != nil {
				tokens[after.Claim.ClaimToken] = -1 // its holder's later steps fail too
			}
			return drop(NotClaimable, "item %s was claimed elsewhere first: at the remote it is %s", cur.ID, describe(cur))
		}
		tok := after.Claim.ClaimToken
		if tok <= cur.TokenCounter {
			tok = cur.TokenCounter + 1
		}
		tokens[after.Claim.ClaimToken] = tok
		c := *after.Claim
		c.ClaimToken = tok
		next.Status, next.Claim, next.TokenCounter = StatusInProgress, &c, tok
	case TRenew:
		if !held(ev.ClaimToken) {
			return drop(InvalidClaim, "the renewal of item %s used a claim the remote no longer has: it is %s", cur.ID, describe(cur))
		}
		c := *cur.Claim
		c.LeaseExpires = after.Claim.LeaseExpires
		next.Claim = &c
	case TRelease, TComplete:
		if !held(ev.ClaimToken) {
			return drop(InvalidClaim, "the %s of item %s used a claim the remote no longer has: it is %s", ev.Transition, cur.ID, describe(cur))
		}
		next.Status, next.Claim = after.Status, nil
	case TCancel:
		if cur.Status != StatusOpen && cur.Status != StatusInProgress {
			return drop(InvalidTransition, "item %s was already %s at the remote; the cancel did not apply", cur.ID, cur.Status)
		}
		next.Status, next.Claim = StatusCancelled, nil
	case TReopen:
		if cur.Status != StatusDone {
			return drop(InvalidTransition, "item %s is %s at the remote; the reopen did not apply", cur.ID, describe(cur))
		}
		next.Status = StatusOpen
	case TOrphanRecovery:
		if cur.Status != StatusInProgress || cur.Claim == nil || parseTime(cur.Claim.LeaseExpires).After(parseTime(ev.At)) {
			return nil, nil // the remote renewed, released or recovered it: nothing to recover
		}
		next.Status, next.Claim = StatusOpen, nil
	case TUpdateMeta:
		if before == nil {
			return nil, nil
		}
		changed := false
		set := func(dst, b, a any) {
			if !reflect.DeepEqual(b, a) {
				reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(a))
				changed = true
			}
		}
		set(&next.Title, before.Title, after.Title)
		set(&next.Spec, before.Spec, after.Spec)
		set(&next.SpecFormat, before.SpecFormat, after.SpecFormat)
		set(&next.TenantID, before.TenantID, after.TenantID)
		set(&next.DependsOn, before.DependsOn, after.DependsOn)
		set(&next.ParentID, before.ParentID, after.ParentID)
		set(&next.References, before.References, after.References)
		if !changed {
			return nil, nil
		}
	case TCreate:
		return drop(apperr.Conflict, "item %s was created on both sides", cur.ID)
	default:
		return drop(apperr.Schema, "item %s: unknown transition %q cannot be replayed", cur.ID, ev.Transition)
	}
	return &next, nil
}

// sameCreation reports whether two creations of one id made the same
// item, by everything but who made it and when.
func sameCreation(x, y *Item) bool {
	a, b := *x, *y
	for _, it := range []*Item{&a, &b} {
		it.CreatedBy, it.CreatedAt, it.UpdatedAt = Actor{}, "", ""
	}
	return reflect.DeepEqual(a, b)
}
