package teamsync_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/record"
)

// TestSync_LostCompletionsAreVoidedInTheSamePush: two clones complete the
// same ten items offline; a syncs first. b's sync drops b's ten
// completions, and each of its ten sync-conflict records references
// ("voids") the work-completion record its completion wrote — and those
// records are at the remote as soon as b's sync returns, not one sync
// later.
func TestSync_LostCompletionsAreVoidedInTheSamePush(t *testing.T) {
	bare := newRemote(t)
	a := cloneOf(t, bare)
	var ids []string
	for i := 0; i < 10; i++ {
		ids = append(ids, a.create(t, fmt.Sprintf("item %d", i)))
	}
	a.sync(t)
	b := cloneOf(t, bare)
	b.sync(t)
	for _, c := range []*clone{a, b} {
		who := board.Actor{Human: c.dir}
		for _, id := range ids {
			it, err := c.b.Claim(t.Context(), id, who, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.b.Complete(t.Context(), id, it.Claim.ClaimToken, "done in "+c.dir); err != nil {
				t.Fatal(err)
			}
		}
	}
	a.sync(t)
	sum := b.sync(t)
	var lostCompletes int
	for _, l := range sum.Lost {
		if l.Transition == board.TComplete {
			lostCompletes++
		}
	}
	if lostCompletes != 10 {
		t.Fatalf("b lost %d completions, want 10: %+v", lostCompletes, sum.Lost)
	}
	// Read what the remote holds now, through a fresh clone.
	c := cloneOf(t, bare)
	c.sync(t)
	sn, err := c.rec.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	completions := map[string]*record.Record{}
	var conflicts []*record.Record
	if err := sn.Walk("", func(r *record.Record) (bool, error) {
		switch r.Kind {
		case "work-completion":
			completions[r.ID] = r
		case "sync-conflict":
			conflicts = append(conflicts, r)
		}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(completions) != 20 {
		t.Fatalf("%d work-completion records at the remote, want 20", len(completions))
	}
	if len(conflicts) < 10 {
		t.Fatalf("%d sync-conflict records at the remote right after b's sync, want at least 10", len(conflicts))
	}
	voided := map[string]bool{}
	for _, r := range conflicts {
		for _, ref := range r.References {
			if ref.Rel != "voids" {
				continue
			}
			w := completions[ref.ID]
			if w == nil {
				t.Fatalf("sync-conflict %s voids %s, which is no work-completion record", r.ID, ref.ID)
			}
			if !strings.Contains(w.Content, b.dir) {
				t.Fatalf("sync-conflict %s voids %s's completion %q; b's lost", r.ID, ref.ID, w.Content)
			}
			voided[ref.ID] = true
		}
	}
	// Exactly b's ten completions are voided; a's ten stand.
	if len(voided) != 10 {
		t.Fatalf("%d completions voided, want b's 10", len(voided))
	}
	for id, w := range completions {
		if strings.Contains(w.Content, a.dir) && voided[id] {
			t.Fatalf("a's standing completion %s is voided", id)
		}
	}
}
