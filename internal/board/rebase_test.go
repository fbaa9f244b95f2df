package board_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// fork runs theirs on item id, remembers the head it reaches, puts the
// item's ref back where it was, runs ours, and rebases ours onto theirs:
// two clones' histories of one item, in one repository.
func fork(t *testing.T, b *board.Store, dir, id string, theirs, ours func()) *board.RebaseResult {
	t.Helper()
	ref := board.RefName(id)
	base := gt.Git(t, dir, "rev-parse", ref)
	theirs()
	other := gt.Git(t, dir, "rev-parse", ref)
	gt.Git(t, dir, "update-ref", ref, base)
	ours()
	onto, err := gitstore.ParseHash(other)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Rebase(t.Context(), id, onto)
	if err != nil {
		t.Fatalf("rebase: %v", err)
	}
	if got := gt.Git(t, dir, "rev-parse", ref); got != res.New.String() {
		t.Fatalf("ref at %s, result says %s", got, res.New)
	}
	if res.New != onto {
		if ok := gt.Git(t, dir, "merge-base", "--is-ancestor", other, ref); ok != "" {
			t.Fatal(ok)
		}
	}
	gt.Fsck(t, dir)
	return res
}

func TestRebase_ReplaysWhatStillApplies(t *testing.T) {
	b, _, dir, c := newBoard(t)
	it := create(t, b, "x")
	res := fork(t, b, dir, it.ID,
		func() { // theirs: a metadata change to the spec
			if _, err := b.UpdateMeta(t.Context(), it.ID, board.UpdateInput{ExpectedVersion: 1, Spec: ptr("their spec"), Actor: actor("bea")}); err != nil {
				t.Fatal(err)
			}
		},
		func() { // ours: a title change, a claim, a renew and a completion
			if _, err := b.UpdateMeta(t.Context(), it.ID, board.UpdateInput{ExpectedVersion: 1, Title: ptr("our title"), Actor: actor("al")}); err != nil {
				t.Fatal(err)
			}
			cl, err := b.Claim(t.Context(), it.ID, actor("al"), nil)
			if err != nil {
				t.Fatal(err)
			}
			c.advance(time.Minute)
			if _, err := b.Renew(t.Context(), it.ID, cl.Claim.ClaimToken, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Complete(t.Context(), it.ID, cl.Claim.ClaimToken, "done"); err != nil {
				t.Fatal(err)
			}
		})
	if res.Replayed != 4 || len(res.Dropped) != 0 {
		t.Fatalf("replayed %d, dropped %+v", res.Replayed, res.Dropped)
	}
	v, err := b.Get(t.Context(), it.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Title != "our title" || v.Spec != "their spec" || v.Status != board.StatusDone {
		t.Fatalf("after rebase: title %q spec %q status %s", v.Title, v.Spec, v.Status)
	}
	if got := transitions(t, b, it.ID); got != "create,update-meta,update-meta,claim,renew,complete" {
		t.Fatalf("history %s", got)
	}
}

func TestRebase_DropsWhatNoLongerApplies(t *testing.T) {
	b, _, dir, _ := newBoard(t)
	cases := []struct {
		name          string
		theirs, ours  func(id string)
		code          apperr.Code
		holder        string
		status, trail string
	}{
		{"claim lost to their claim",
			func(id string) { mustClaim(t, b, id, "bea") },
			func(id string) { mustClaim(t, b, id, "al") },
			board.NotClaimable, "bea", board.StatusInProgress, "create,claim"},
		{"cancel after their completion",
			func(id string) { tok := mustClaim(t, b, id, "bea"); b.Complete(t.Context(), id, tok, "") },
			func(id string) { b.Cancel(t.Context(), id, actor("al")) },
			board.InvalidTransition, "", board.StatusDone, "create,claim,complete"},
		{"complete after their cancel",
			func(id string) { b.Cancel(t.Context(), id, actor("bea")) },
			func(id string) { tok := mustClaim(t, b, id, "al"); b.Complete(t.Context(), id, tok, "") },
			board.NotClaimable, "", board.StatusCancelled, "create,cancel"},
		{"reopen of what they reopened",
			func(id string) {
				tok := mustClaim(t, b, id, "x")
				b.Complete(t.Context(), id, tok, "")
				b.Reopen(t.Context(), id, actor("bea"))
			},
			func(id string) {},
			"", "", board.StatusOpen, "create,claim,complete,reopen"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := create(t, b, tc.name)
			res := fork(t, b, dir, it.ID, func() { tc.theirs(it.ID) }, func() { tc.ours(it.ID) })
			if tc.code != "" {
				if len(res.Dropped) == 0 || res.Dropped[0].Err.Code != tc.code {
					t.Fatalf("dropped %+v, want first %s", res.Dropped, tc.code)
				}
				if tc.holder != "" && (res.Dropped[0].Holder == nil || res.Dropped[0].Holder.Human != tc.holder ||
					!strings.Contains(res.Dropped[0].Err.Msg, tc.holder)) {
					t.Fatalf("drop does not name holder %s: %+v", tc.holder, res.Dropped[0])
				}
			}
			v, err := b.Get(t.Context(), it.ID)
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != tc.status {
				t.Fatalf("status %s, want %s", v.Status, tc.status)
			}
			if got := transitions(t, b, it.ID); got != tc.trail {
				t.Fatalf("history %s, want %s", got, tc.trail)
			}
		})
	}
}

func TestRebase_LostClaimVoidsItsToken(t *testing.T) {
	b, _, dir, _ := newBoard(t)
	it := create(t, b, "x")
	var theirs, ours int64
	res := fork(t, b, dir, it.ID,
		func() { theirs = mustClaim(t, b, it.ID, "bea") },
		func() {
			ours = mustClaim(t, b, it.ID, "al") // the same number: both counters were 0
			if _, err := b.Renew(t.Context(), it.ID, ours, nil); err != nil {
				t.Fatal(err)
			}
		})
	if theirs != ours {
		t.Fatalf("test premise: tokens %d and %d", theirs, ours)
	}
	if len(res.Dropped) != 2 || res.Dropped[1].Event.Transition != board.TRenew {
		t.Fatalf("dropped %+v, want the claim and its renew", res.Dropped)
	}
}

func TestRebase_FastForwardsAndNoOps(t *testing.T) {
	b, _, dir, _ := newBoard(t)
	it := create(t, b, "x")
	ref := board.RefName(it.ID)
	base, _ := gitstore.ParseHash(gt.Git(t, dir, "rev-parse", ref))
	mustClaim(t, b, it.ID, "al")
	ahead, _ := gitstore.ParseHash(gt.Git(t, dir, "rev-parse", ref))
	// Local ahead of onto: nothing moves.
	if res, err := b.Rebase(t.Context(), it.ID, base); err != nil || res.New != ahead || !res.FastForward {
		t.Fatalf("rebase onto an ancestor: %+v %v", res, err)
	}
	// Local behind onto: fast-forward.
	gt.Git(t, dir, "update-ref", ref, base.String())
	if res, err := b.Rebase(t.Context(), it.ID, ahead); err != nil || res.New != ahead || !res.FastForward {
		t.Fatalf("rebase from behind: %+v %v", res, err)
	}
	// No local ref: created at onto.
	gt.Git(t, dir, "update-ref", "-d", ref)
	if res, err := b.Rebase(t.Context(), it.ID, ahead); err != nil || res.New != ahead {
		t.Fatalf("rebase with no local ref: %+v %v", res, err)
	}
}

func mustClaim(t *testing.T, b *board.Store, id, who string) int64 {
	t.Helper()
	it, err := b.Claim(t.Context(), id, actor(who), nil)
	if err != nil {
		t.Fatalf("claim by %s: %v", who, err)
	}
	return it.Claim.ClaimToken
}
