package board_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/record"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }
func ptr[T any](v T) *T                  { return &v }
func actor(h string) board.Actor         { return board.Actor{Human: h} }

func newBoard(t *testing.T) (*board.Store, *record.Store, string, *clock) {
	t.Helper()
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	rec := record.Open(g)
	b := board.Open(g, rec)
	c := newClock()
	b.Now = c.now
	return b, rec, dir, c
}

func create(t *testing.T, b *board.Store, title string, mod ...func(*board.CreateInput)) *board.Item {
	t.Helper()
	in := board.CreateInput{Title: title, Spec: "spec of " + title, SpecFormat: "plan/outline", CreatedBy: actor("dan")}
	for _, m := range mod {
		m(&in)
	}
	out, err := b.Create(t.Context(), in)
	if err != nil {
		t.Fatalf("create %s: %v", title, err)
	}
	return out.Item
}

func transitions(t *testing.T, b *board.Store, id string) string {
	t.Helper()
	evs, err := b.Events(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var ts []string
	for _, e := range evs {
		ts = append(ts, e.Transition)
	}
	return strings.Join(ts, ",")
}

func code(err error) apperr.Code { return apperr.CodeOf(err) }

func TestBoard_Lifecycle(t *testing.T) {
	b, rec, dir, _ := newBoard(t)
	it := create(t, b, "Add retry backoff")
	if it.Status != board.StatusOpen || it.Version != 1 || it.TenantID != "local" {
		t.Fatalf("created: %+v", it)
	}
	cl, err := b.Claim(t.Context(), it.ID, board.Actor{Human: "dan", Agent: "worker/1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != board.StatusInProgress || cl.Claim.ClaimToken != 1 || cl.Claim.Holder.Agent != "worker/1" {
		t.Fatalf("claimed: %+v", cl.Claim)
	}
	if got := cl.Claim.LeaseExpires; got != "2026-11-29T16:00:00.000Z" {
		t.Fatalf("default lease ends %s, want 4h later", got)
	}
	done, err := b.Complete(t.Context(), it.ID, 1, "backoff with jitter")
	if err != nil {
		t.Fatal(err)
	}
	if done.Item.Status != board.StatusDone || done.Item.Claim != nil || done.Item.UpdatedAt != it.UpdatedAt {
		t.Fatalf("completed: %+v", done.Item)
	}
	if got := transitions(t, b, it.ID); got != "create,claim,complete" {
		t.Fatalf("events = %s", got)
	}
	// complete wrote a work-completion record.
	p, err := rec.ReadPage(record.PageRequest{Filter: record.Filter{Scope: it.ID}, IncludeContent: true})
	if err != nil || len(p.Rows) != 1 {
		t.Fatalf("completion records: %v %v", p, err)
	}
	r := p.Rows[0]
	if r.Kind != "work-completion" || r.Claim != "Add retry backoff — backoff with jitter" ||
		r.VerificationAnchor != "board:"+it.ID+"#complete@2026-11-29T12:00:00.000Z" || r.Scope != "local/"+it.ID || r.Source.TaskID != it.ID {
		t.Fatalf("completion record: %+v", r)
	}
	// git log of the item ref reads as its history.
	if got := gt.Git(t, dir, "log", "--format=%s", board.RefName(it.ID)); got != "complete: Add retry backoff\nclaim: Add retry backoff\ncreate: Add retry backoff" {
		t.Fatalf("git log = %q", got)
	}
	if _, err := b.Reopen(t.Context(), it.ID, actor("dan")); err != nil {
		t.Fatal(err)
	}
	cl2, err := b.Claim(t.Context(), it.ID, actor("eve"), nil)
	if err != nil || cl2.Claim.ClaimToken != 2 {
		t.Fatalf("re-claim token: %+v %v", cl2, err)
	}
	if _, err := b.Cancel(t.Context(), it.ID, actor("dan")); err != nil {
		t.Fatal(err)
	}
	if got := transitions(t, b, it.ID); got != "create,claim,complete,reopen,claim,cancel" {
		t.Fatalf("events = %s", got)
	}
	evs, _ := b.Events(t.Context(), it.ID)
	if evs[5].ClaimToken == nil || *evs[5].ClaimToken != 2 {
		t.Fatalf("cancel must carry the voided token: %+v", evs[5])
	}
	gt.Fsck(t, dir)
}

func TestBoard_Guards(t *testing.T) {
	b, _, dir, _ := newBoard(t)
	a := create(t, b, "A")
	bb := create(t, b, "B", func(in *board.CreateInput) { in.DependsOn = []string{a.ID} })
	ghost := "01JDQ3Z5E8X9K2M4N6P8R0T1VW"
	cases := []struct {
		name string
		err  error
		want apperr.Code
	}{
		{"no title", func() error {
			_, err := b.Create(t.Context(), board.CreateInput{Spec: "s", SpecFormat: "f", CreatedBy: actor("d")})
			return err
		}(), apperr.Schema},
		{"no spec", func() error {
			_, err := b.Create(t.Context(), board.CreateInput{Title: "t", SpecFormat: "f", CreatedBy: actor("d")})
			return err
		}(), apperr.Schema},
		{"no human", func() error {
			_, err := b.Create(t.Context(), board.CreateInput{Title: "t", Spec: "s", SpecFormat: "f"})
			return err
		}(), apperr.Schema},
		{"dangling dependency", func() error {
			_, err := b.Create(t.Context(), board.CreateInput{Title: "t", Spec: "s", SpecFormat: "f", CreatedBy: actor("d"), DependsOn: []string{ghost}})
			return err
		}(), board.DanglingDependency},
		{"bad dependency id", func() error {
			_, err := b.Create(t.Context(), board.CreateInput{Title: "t", Spec: "s", SpecFormat: "f", CreatedBy: actor("d"), DependsOn: []string{"nope"}})
			return err
		}(), apperr.Schema},
		{"dangling parent", func() error {
			_, err := b.Create(t.Context(), board.CreateInput{Title: "t", Spec: "s", SpecFormat: "f", CreatedBy: actor("d"), ParentID: ghost})
			return err
		}(), board.DanglingParent},
		{"dangling supersedes", func() error {
			_, err := b.Create(t.Context(), board.CreateInput{Title: "t", Spec: "s", SpecFormat: "f", CreatedBy: actor("d"), Supersedes: ghost})
			return err
		}(), apperr.DanglingSupersedes},
		{"cycle", func() error {
			_, err := b.UpdateMeta(t.Context(), a.ID, board.UpdateInput{ExpectedVersion: 1, DependsOn: &[]string{bb.ID}})
			return err
		}(), board.Cycle},
		{"self parent", func() error {
			_, err := b.UpdateMeta(t.Context(), a.ID, board.UpdateInput{ExpectedVersion: 1, ParentID: ptr(a.ID)})
			return err
		}(), board.ParentCycle},
		{"stale version", func() error {
			_, err := b.UpdateMeta(t.Context(), a.ID, board.UpdateInput{ExpectedVersion: 7, Title: ptr("x")})
			return err
		}(), board.VersionConflict},
		{"lease zero", func() error { _, err := b.Claim(t.Context(), a.ID, actor("w"), ptr(int64(0))); return err }(), board.InvalidLease},
		{"lease too long", func() error {
			_, err := b.Claim(t.Context(), a.ID, actor("w"), ptr(int64(31*24*3600*1000)))
			return err
		}(), board.InvalidLease},
		{"claim missing", func() error { _, err := b.Claim(t.Context(), ghost, actor("w"), nil); return err }(), apperr.NotFound},
		{"claim blocked by dependency", func() error { _, err := b.Claim(t.Context(), bb.ID, actor("w"), nil); return err }(), board.NotClaimable},
		{"complete unclaimed", func() error { _, err := b.Complete(t.Context(), a.ID, 1, ""); return err }(), board.InvalidClaim},
		{"reopen open", func() error { _, err := b.Reopen(t.Context(), a.ID, actor("w")); return err }(), board.InvalidTransition},
		{"bad status filter", func() error {
			_, err := b.List(t.Context(), board.ListRequest{Filter: board.ListFilter{Status: "blocked"}})
			return err
		}(), apperr.Schema},
	}
	before := gt.Git(t, dir, "for-each-ref", "refs/ideate/")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := code(tc.err); got != tc.want {
				t.Fatalf("got %q (%v), want %q", got, tc.err, tc.want)
			}
		})
	}
	if after := gt.Git(t, dir, "for-each-ref", "refs/ideate/"); after != before {
		t.Fatal("a refused operation changed a ref")
	}
	// A parent cycle through a chain.
	c := create(t, b, "C", func(in *board.CreateInput) { in.ParentID = a.ID })
	if _, err := b.UpdateMeta(t.Context(), a.ID, board.UpdateInput{ExpectedVersion: 1, ParentID: ptr(c.ID)}); code(err) != board.ParentCycle {
		t.Fatalf("ancestor cycle: %v", err)
	}
	// Cancel of a cancelled item.
	b.Cancel(t.Context(), c.ID, actor("d"))
	if _, err := b.Cancel(t.Context(), c.ID, actor("d")); code(err) != board.InvalidTransition {
		t.Fatalf("cancel twice: %v", err)
	}
	if v, err := b.Get(t.Context(), ghost); v != nil || err != nil {
		t.Fatalf("get of a missing item: %v %v", v, err)
	}
	if evs, err := b.Events(t.Context(), ghost); len(evs) != 0 || err != nil {
		t.Fatalf("events of a missing item: %v %v", evs, err)
	}
}

func TestBoard_Claimability(t *testing.T) {
	b, _, _, _ := newBoard(t)
	dep := create(t, b, "dep")
	parent := create(t, b, "parent")
	child := create(t, b, "child", func(in *board.CreateInput) { in.ParentID = parent.ID; in.DependsOn = []string{dep.ID} })
	claimable := func() map[string]bool {
		p, err := b.List(t.Context(), board.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, r := range p.Items {
			m[r.Title] = r.Claimable
		}
		return m
	}
	if d := cmp.Diff(map[string]bool{"dep": true, "parent": false, "child": false}, claimable()); d != "" {
		t.Fatalf("initial:\n%s", d)
	}
	if _, err := b.Claim(t.Context(), parent.ID, actor("w"), nil); code(err) != board.NotClaimable || !strings.Contains(err.Error(), "child") {
		t.Fatalf("parent with an open child: %v", err)
	}
	// A cancelled dependency still blocks.
	b.Cancel(t.Context(), dep.ID, actor("d"))
	if claimable()["child"] {
		t.Fatal("a cancelled dependency must still block")
	}
	if _, err := b.Claim(t.Context(), child.ID, actor("w"), nil); code(err) != board.NotClaimable {
		t.Fatalf("claim with cancelled dependency: %v", err)
	}
	// Point the child at a done dependency; then a cancelled child does not block the parent.
	d2 := create(t, b, "dep2")
	cl, _ := b.Claim(t.Context(), d2.ID, actor("w"), nil)
	b.Complete(t.Context(), d2.ID, cl.Claim.ClaimToken, "")
	if _, err := b.UpdateMeta(t.Context(), child.ID, board.UpdateInput{ExpectedVersion: 1, DependsOn: &[]string{d2.ID}}); err != nil {
		t.Fatal(err)
	}
	if !claimable()["child"] {
		t.Fatal("child with a done dependency should be claimable")
	}
	b.Cancel(t.Context(), child.ID, actor("d"))
	if !claimable()["parent"] {
		t.Fatal("a cancelled child must not block its parent")
	}
	if got := transitions(t, b, child.ID); got != "create,update-meta,cancel" {
		t.Fatalf("update-meta must write an event: %s", got)
	}
	// With no actor given, the event names the git user who changed the
	// item, not the item's creator.
	if evs, _ := b.Events(t.Context(), child.ID); evs[1].Actor != (board.Actor{Human: "Test User"}) || evs[0].Actor == evs[1].Actor {
		t.Fatalf("update-meta actor = %+v (creator %+v), want the git user", evs[1].Actor, evs[0].Actor)
	}
	ready, _ := b.Ready(t.Context(), "")
	if len(ready) != 1 || ready[0].Title != "parent" {
		t.Fatalf("ready = %+v", ready)
	}
}

func TestBoard_LeaseExpiryAndFencing(t *testing.T) {
	b, _, _, clk := newBoard(t)
	it := create(t, b, "leased")
	a, err := b.Claim(t.Context(), it.ID, actor("alice"), ptr(int64(60_000)))
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(30 * time.Second)
	if _, err := b.Renew(t.Context(), it.ID, a.Claim.ClaimToken, ptr(int64(60_000))); err != nil {
		t.Fatalf("renew inside the lease: %v", err)
	}
	clk.advance(61 * time.Second)
	// Lazy expiry on get.
	v, err := b.Get(t.Context(), it.ID)
	if err != nil || v.Status != board.StatusOpen || v.Claim != nil {
		t.Fatalf("after expiry get = %+v %v", v, err)
	}
	if _, err := b.Renew(t.Context(), it.ID, a.Claim.ClaimToken, nil); code(err) != board.InvalidClaim {
		t.Fatalf("renew after expiry: %v", err)
	}
	bob, err := b.Claim(t.Context(), it.ID, actor("bob"), nil)
	if err != nil || bob.Claim.ClaimToken <= a.Claim.ClaimToken {
		t.Fatalf("re-claim: %+v %v", bob, err)
	}
	for name, f := range map[string]func() error{
		"renew":    func() error { _, err := b.Renew(t.Context(), it.ID, a.Claim.ClaimToken, nil); return err },
		"complete": func() error { _, err := b.Complete(t.Context(), it.ID, a.Claim.ClaimToken, ""); return err },
		"release":  func() error { _, err := b.Release(t.Context(), it.ID, a.Claim.ClaimToken, ""); return err },
	} {
		if err := f(); code(err) != board.InvalidClaim {
			t.Errorf("stale %s: %v", name, err)
		}
	}
	if _, err := b.Complete(t.Context(), it.ID, bob.Claim.ClaimToken, "done"); err != nil {
		t.Fatal(err)
	}
	if got := transitions(t, b, it.ID); got != "create,claim,renew,orphan-recovery,claim,complete" {
		t.Fatalf("events = %s", got)
	}
	evs, _ := b.Events(t.Context(), it.ID)
	if evs[3].Actor.Human != "alice" || *evs[3].ClaimToken != a.Claim.ClaimToken {
		t.Fatalf("orphan-recovery must name the dead holder and its token: %+v", evs[3])
	}
	// Sweep on list and by itself.
	x := create(t, b, "x")
	b.Claim(t.Context(), x.ID, actor("w"), ptr(int64(1000)))
	clk.advance(2 * time.Second)
	p, err := b.List(t.Context(), board.ListRequest{})
	if err != nil || p.Swept != 1 {
		t.Fatalf("list sweep: %+v %v", p, err)
	}
	y := create(t, b, "y")
	b.Claim(t.Context(), y.ID, actor("w"), ptr(int64(1000)))
	clk.advance(2 * time.Second)
	if n, err := b.Sweep(t.Context(), ""); n != 1 || err != nil {
		t.Fatalf("sweep = %d %v", n, err)
	}
}

func TestBoard_ListPagingAndBacklinks(t *testing.T) {
	b, _, _, clk := newBoard(t)
	var ids []string
	for i := 0; i < 23; i++ {
		clk.advance(time.Second)
		ids = append(ids, create(t, b, fmt.Sprintf("item %02d", i), func(in *board.CreateInput) {
			if i%2 == 0 {
				in.TenantID = "even"
			}
		}).ID)
	}
	sup := create(t, b, "replacement", func(in *board.CreateInput) { in.Supersedes = ids[0] })
	lim := 5
	seen := 0
	cursor := ""
	for {
		p, err := b.List(t.Context(), board.ListRequest{Limit: &lim, Cursor: cursor, Filter: board.ListFilter{TenantID: "even"}, Measure: paging.CompactLen})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Items {
			if r.TenantID != "even" || r.Spec != nil || r.SpecLength == 0 {
				t.Fatalf("row %+v", r)
			}
			if r.ID == ids[0] && (len(r.ReferencedBy) != 1 || r.ReferencedBy[0].ID != sup.ID) {
				t.Fatalf("backlink missing on page row: %+v", r.ReferencedBy)
			}
			seen++
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
		// The cursor is bound to its filter.
		if _, err := b.List(t.Context(), board.ListRequest{Cursor: cursor}); code(err) != apperr.CursorMismatch {
			t.Fatalf("cursor under another filter: %v", err)
		}
	}
	if seen != 12 {
		t.Fatalf("walked %d even items, want 12", seen)
	}
	v, err := b.Get(t.Context(), ids[0])
	if err != nil || len(v.ReferencedBy) != 1 || v.ReferencedBy[0].Rel != "supersedes" {
		t.Fatalf("get backlinks: %+v %v", v, err)
	}
}

// TestBoard_ChildrenSeenFromAnotherProcess: a long-lived store (the MCP
// server's) decides a claim on children that another process created,
// cancelled or moved since it last built its index, both through the
// entries it reads beside the index and once they are too many for that.
func TestBoard_ChildrenSeenFromAnotherProcess(t *testing.T) {
	a, _, dir, c := newBoard(t)
	g2, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g2.Close() })
	b := board.Open(g2, record.Open(g2))
	b.Now = c.now
	var p [5]*board.Item
	for i := range p {
		p[i] = create(t, a, fmt.Sprintf("parent %d", i))
	}
	list := func() { // rebuilds a's index
		t.Helper()
		if _, err := a.List(t.Context(), board.ListRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(it *board.Item, want apperr.Code, child string) {
		t.Helper()
		_, err := a.Claim(t.Context(), it.ID, actor("a"), nil)
		if code(err) != want || want != "" && !strings.Contains(err.Error(), child) {
			t.Fatalf("claim %s: %v, want %q naming %s", it.Title, err, want, child)
		}
	}
	list()

	// A child the index has never seen blocks; cancelled, it does not.
	c0 := create(t, b, "child 0", func(in *board.CreateInput) { in.ParentID = p[0].ID })
	claim(p[0], board.NotClaimable, c0.ID)
	b.Cancel(t.Context(), c0.ID, actor("b"))
	claim(p[0], "", "")

	// A child the index holds as open, packed, cancelled elsewhere since
	// (a loose ref over the packed one).
	c1 := create(t, a, "child 1", func(in *board.CreateInput) { in.ParentID = p[1].ID })
	list()
	gt.Git(t, dir, "pack-refs", "--all")
	claim(p[1], board.NotClaimable, c1.ID)
	b.Cancel(t.Context(), c1.ID, actor("b"))
	claim(p[1], "", "")

	// A child the index holds as open, moved elsewhere to the top level,
	// then packed: only packed-refs tells.
	c2 := create(t, a, "child 2", func(in *board.CreateInput) { in.ParentID = p[2].ID })
	list()
	claim(p[2], board.NotClaimable, c2.ID)
	if _, err := b.UpdateMeta(t.Context(), c2.ID, board.UpdateInput{ExpectedVersion: 1, ParentID: ptr("")}); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "pack-refs", "--all")
	claim(p[2], "", "")

	// An item moved under a parent elsewhere blocks it, loose or packed.
	c3 := create(t, a, "child 3")
	list()
	if _, err := b.UpdateMeta(t.Context(), c3.ID, board.UpdateInput{ExpectedVersion: 1, ParentID: ptr(p[3].ID)}); err != nil {
		t.Fatal(err)
	}
	claim(p[3], board.NotClaimable, c3.ID)
	gt.Git(t, dir, "pack-refs", "--all")
	claim(p[3], board.NotClaimable, c3.ID)

	// More moved items than are read beside the index: it is rebuilt.
	for i := 0; i < 40; i++ {
		create(t, b, fmt.Sprintf("filler %d", i))
	}
	c4 := create(t, b, "child 4", func(in *board.CreateInput) { in.ParentID = p[4].ID })
	claim(p[4], board.NotClaimable, c4.ID)
	b.Cancel(t.Context(), c4.ID, actor("b"))
	claim(p[4], "", "")
	b.Cancel(t.Context(), c3.ID, actor("b"))
	claim(p[3], "", "")
}

// TestBoard_ChildrenConcurrentInOneProcess: claims, creates and index
// rebuilds from several goroutines of one store (the MCP server's) share
// the cached index and the items read beside it; every claim still sees
// the children that exist (run with -race in CI). The store watches the
// item refs, as the server's does.
func TestBoard_ChildrenConcurrentInOneProcess(t *testing.T) {
	dir := gt.NewRepo(t)
	a := watchedBoard(t, dir)
	mk := func(title, parent string) (*board.Item, error) {
		out, err := a.Create(t.Context(), board.CreateInput{Title: title, Spec: "s", SpecFormat: "plan/outline", CreatedBy: actor("dan"), ParentID: parent})
		if err != nil {
			return nil, err
		}
		return out.Item, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 12; i++ {
				p, err := mk(fmt.Sprintf("p %d/%d", w, i), "")
				if err != nil {
					errs <- err
					return
				}
				kid, err := mk(fmt.Sprintf("kid %d/%d", w, i), p.ID)
				if err != nil {
					errs <- err
					return
				}
				if _, err := a.Claim(t.Context(), p.ID, actor("w"), nil); code(err) != board.NotClaimable {
					errs <- fmt.Errorf("parent %d/%d with an open child: %v", w, i, err)
					return
				}
				if _, err := a.Cancel(t.Context(), kid.ID, actor("w")); err != nil {
					errs <- err
					return
				}
				if _, err := a.Claim(t.Context(), p.ID, actor("w"), nil); err != nil {
					errs <- fmt.Errorf("parent %d/%d, child cancelled: %v", w, i, err)
					return
				}
				if i%4 == 3 {
					if _, err := a.List(t.Context(), board.ListRequest{}); err != nil {
						errs <- err
						return
					}
					gt.GitErr(dir, "pack-refs", "--all") // beside the writes; a ref it could not lock stays loose
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestBoard_ExpiryWithTheIndexCached: a long-lived store that holds an
// item's index entry (its own write, or an index it built) still recovers
// its expired claim, and still leaves a live one alone.
func TestBoard_ExpiryWithTheIndexCached(t *testing.T) {
	b, _, _, clk := newBoard(t)
	it := create(t, b, "leased")
	other := create(t, b, "other")
	if _, err := b.List(t.Context(), board.ListRequest{}); err != nil { // an index in memory
		t.Fatal(err)
	}
	if _, err := b.Claim(t.Context(), it.ID, actor("alice"), ptr(int64(1000))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(t.Context(), other.ID, actor("alice"), ptr(int64(60_000))); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Second)
	if _, err := b.Claim(t.Context(), other.ID, actor("bob"), nil); code(err) != board.NotClaimable {
		t.Fatalf("claim of an item with a live lease: %v", err)
	}
	got, err := b.Claim(t.Context(), it.ID, actor("bob"), nil)
	if err != nil || got.Claim.Holder.Human != "bob" {
		t.Fatalf("claim after the lease ran out: %+v %v", got, err)
	}
	if tr := transitions(t, b, it.ID); tr != "create,claim,orphan-recovery,claim" {
		t.Fatalf("events = %s", tr)
	}
}

// TestBoard_WatchedStoreSeesChildrenMadeElsewhere: a long-lived store (the
// MCP server's) sees a child another store makes, or cancels, at its next
// claim of the parent, also across pack-refs --prune removing the loose
// refs and their directory.
func TestBoard_WatchedStoreSeesChildrenMadeElsewhere(t *testing.T) {
	dir := gt.NewRepo(t)
	server := watchedBoard(t, dir)
	other := openBoard(t, dir)
	for i := range 24 {
		p := create(t, server, fmt.Sprintf("parent %d", i))
		kid := create(t, other, fmt.Sprintf("kid %d", i), func(in *board.CreateInput) { in.ParentID = p.ID })
		if _, err := server.Claim(t.Context(), p.ID, actor("w"), nil); code(err) != board.NotClaimable {
			t.Fatalf("round %d: claim of a parent whose child another store made: %v", i, err)
		}
		if _, err := other.Cancel(t.Context(), kid.ID, actor("w")); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Claim(t.Context(), p.ID, actor("w"), nil); err != nil {
			t.Fatalf("round %d: claim after another store cancelled the child: %v", i, err)
		}
		if i%6 == 5 {
			gt.Git(t, dir, "pack-refs", "--all", "--prune")
		}
	}
}

// watchedBoard opens the board of dir as the MCP server does.
func watchedBoard(t *testing.T, dir string) *board.Store {
	t.Helper()
	r, err := gitstore.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := gitstore.OpenRepo(r, gitstore.DefaultOptions())
	t.Cleanup(func() { g.Close() })
	return board.Open(g, record.Open(g))
}
