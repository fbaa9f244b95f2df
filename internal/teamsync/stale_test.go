package teamsync_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// staleRemotes runs body over a bare remote reached as a path and through
// `git daemon` on 127.0.0.1: clone b's copy of the board is behind the
// remote, and every verb b makes through the authority must be decided on
// the remote's state, not refused from b's copy.
func staleRemotes(t *testing.T, body func(t *testing.T, bare, url string)) {
	t.Run("file", func(t *testing.T) {
		bare := newRemote(t)
		body(t, bare, bare)
	})
	t.Run("git-daemon", func(t *testing.T) {
		bare := newRemote(t)
		body(t, bare, startDaemon(t, filepath.Dir(bare))+filepath.Base(bare))
	})
}

func TestAuthority_ClaimReleasedAtTheRemoteIsNotRefusedFromAStaleCopy(t *testing.T) {
	staleRemotes(t, func(t *testing.T, bare, url string) {
		a, b := cloneOf(t, url), cloneOf(t, url)
		id := a.create(t, "x")
		a.sync(t)
		a.authoritative()
		ia, err := a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.sync(t) // b's copy: held by alice
		if _, err := a.b.Release(t.Context(), id, ia.Claim.ClaimToken, "not mine after all"); err != nil {
			t.Fatal(err)
		}
		b.authoritative()
		ib, err := b.b.Claim(t.Context(), id, board.Actor{Human: "bob"}, nil)
		if err != nil {
			t.Fatalf("bob's claim of an item open on the remote: %v", err)
		}
		if ib.Claim.Holder.Human != "bob" || ib.Claim.ClaimToken <= ia.Claim.ClaimToken {
			t.Fatalf("bob's claim: %+v (alice had token %d)", ib.Claim, ia.Claim.ClaimToken)
		}
		if remoteRef(t, bare, board.RefName(id)) != mustRef(t, b, board.RefName(id)).String() {
			t.Fatal("bob's claim is not what the remote holds")
		}
		// A refusal that holds on the remote is still given, naming the holder.
		_, err = a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
		if !apperr.Is(err, board.NotClaimable) || !strings.Contains(apperr.Message(err), "bob") {
			t.Fatalf("alice's second claim: %v, want NOT_CLAIMABLE naming bob", err)
		}
	})
}

func TestAuthority_DependencyDoneAtTheRemoteIsNotRefusedFromAStaleCopy(t *testing.T) {
	staleRemotes(t, func(t *testing.T, bare, url string) {
		a, b := cloneOf(t, url), cloneOf(t, url)
		dep := a.create(t, "dep")
		o, err := a.b.Create(t.Context(), board.CreateInput{Title: "after dep", Spec: "s", SpecFormat: "plan",
			DependsOn: []string{dep}, CreatedBy: board.Actor{Human: "creator"}})
		if err != nil {
			t.Fatal(err)
		}
		a.sync(t)
		b.sync(t) // b's copy: dep open
		a.authoritative()
		id, err := a.b.Claim(t.Context(), dep, board.Actor{Human: "alice"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.b.Complete(t.Context(), dep, id.Claim.ClaimToken, "done"); err != nil {
			t.Fatal(err)
		}
		b.authoritative()
		if _, err := b.b.Claim(t.Context(), o.Item.ID, board.Actor{Human: "bob"}, nil); err != nil {
			t.Fatalf("claim of an item whose dependency is done on the remote: %v", err)
		}
	})
}

func TestAuthority_ItemOnlyTheRemoteHasCanBeClaimed(t *testing.T) {
	staleRemotes(t, func(t *testing.T, bare, url string) {
		a, b := cloneOf(t, url), cloneOf(t, url)
		a.note(t, "first")
		a.sync(t)
		b.sync(t)
		id := a.create(t, "new on the remote")
		a.sync(t) // b has not seen it
		b.authoritative()
		it, err := b.b.Claim(t.Context(), id, board.Actor{Human: "bob"}, nil)
		if err != nil {
			t.Fatalf("claim of an item the remote has: %v", err)
		}
		if remoteRef(t, bare, board.RefName(id)) != mustRef(t, b, board.RefName(id)).String() || it.Claim == nil {
			t.Fatal("the claim is not what the remote holds")
		}
	})
}

// With the remote out of reach, a refusal from the local copy cannot be
// checked: the verb says so (REMOTE) instead of refusing as if it knew.
func TestAuthority_UncheckableRefusalIsARemoteError(t *testing.T) {
	bare := newRemote(t)
	a, b := cloneOf(t, bare), cloneOf(t, bare)
	id := a.create(t, "x")
	a.sync(t)
	a.authoritative()
	if _, err := a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil); err != nil {
		t.Fatal(err)
	}
	b.sync(t)
	tip := mustRef(t, b, board.RefName(id))
	if err := os.Rename(bare, bare+".gone"); err != nil {
		t.Fatal(err)
	}
	b.authoritative()
	_, err := b.b.Claim(t.Context(), id, board.Actor{Human: "bob"}, nil)
	if !apperr.Is(err, gitstore.RemoteFailed) || !strings.Contains(apperr.Message(err), "alice") {
		t.Fatalf("claim with the remote gone: %v, want REMOTE that says what the local copy shows", err)
	}
	if mustRef(t, b, board.RefName(id)) != tip {
		t.Fatal("the local item moved")
	}
}
