package board

import (
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
)

// A dependency reopened after a claim checked it, but before the claim's
// swap, makes the claim fail: the dependency's ref is a guard of the swap.
func TestClaim_DependencyReopenedBeforeSwap(t *testing.T) {
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := Open(g, record.Open(g))
	mk := func(title string, deps ...string) *Item {
		o, err := s.Create(t.Context(), CreateInput{Title: title, Spec: "s", SpecFormat: "f", CreatedBy: Actor{Human: "d"}, DependsOn: deps})
		if err != nil {
			t.Fatal(err)
		}
		return o.Item
	}
	dep := mk("dep")
	cl, _ := s.Claim(t.Context(), dep.ID, Actor{Human: "w"}, nil)
	if _, err := s.Complete(t.Context(), dep.ID, cl.Claim.ClaimToken, ""); err != nil {
		t.Fatal(err)
	}
	x := mk("x", dep.ID)

	// Another writer (its own store, as another process would be) reopens
	// the dependency in the window between the claim's checks and its swap.
	g2, _ := gitstore.Open(dir)
	defer g2.Close()
	other := Open(g2, record.Open(g2))
	fired := false
	s.afterStep = func() {
		if !fired {
			fired = true
			if _, err := other.Reopen(t.Context(), dep.ID, Actor{Human: "boss"}); err != nil {
				t.Errorf("reopen: %v", err)
			}
		}
	}
	_, err = s.Claim(t.Context(), x.ID, Actor{Human: "w"}, nil)
	s.afterStep = nil
	if !fired || apperr.CodeOf(err) != NotClaimable {
		t.Fatalf("claim after its dependency was reopened: %v (hook fired %v)", err, fired)
	}
	v, _ := s.Get(t.Context(), x.ID)
	evs, _ := s.Events(t.Context(), x.ID)
	if v.Status != StatusOpen || len(evs) != 1 {
		t.Fatalf("x is %s with %d events; the claim must not have landed", v.Status, len(evs))
	}
	// Without interference the claim goes through.
	cl2, _ := s.Claim(t.Context(), dep.ID, Actor{Human: "w"}, nil)
	s.Complete(t.Context(), dep.ID, cl2.Claim.ClaimToken, "")
	if _, err := s.Claim(t.Context(), x.ID, Actor{Human: "w"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := gt.GitErr(dir, "for-each-ref"); err != nil {
		t.Fatal(err)
	}
	gt.Fsck(t, dir)
}

// A child created under an item after the item's claim checked for open
// children, but before its swap, makes the claim fail: the check runs
// again under the item's lock, which creating a child also takes.
func TestClaim_ChildCreatedBeforeSwap(t *testing.T) {
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := Open(g, record.Open(g))
	o, err := s.Create(t.Context(), CreateInput{Title: "parent", Spec: "s", SpecFormat: "f", CreatedBy: Actor{Human: "d"}})
	if err != nil {
		t.Fatal(err)
	}
	p := o.Item
	g2, _ := gitstore.Open(dir)
	defer g2.Close()
	other := Open(g2, record.Open(g2))
	fired := false
	s.afterStep = func() {
		if !fired {
			fired = true
			if _, err := other.Create(t.Context(), CreateInput{Title: "late child", Spec: "s", SpecFormat: "f", CreatedBy: Actor{Human: "d"}, ParentID: p.ID}); err != nil {
				t.Errorf("create child: %v", err)
			}
		}
	}
	_, err = s.Claim(t.Context(), p.ID, Actor{Human: "w"}, nil)
	s.afterStep = nil
	if !fired || apperr.CodeOf(err) != NotClaimable {
		t.Fatalf("claim after a child appeared: %v (hook fired %v)", err, fired)
	}
	if v, _ := s.Get(t.Context(), p.ID); v.Status != StatusOpen {
		t.Fatalf("parent is %s; the claim must not have landed", v.Status)
	}
	gt.Fsck(t, dir)
}
