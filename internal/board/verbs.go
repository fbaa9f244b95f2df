package board

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// CreateInput is a new item.
type CreateInput struct {
	// ID, when set, is the item's id (a ULID) instead of a new one: a
	// caller whose items have an identity of their own (plan import) names
	// them the same on every clone, so the same item created on two clones
	// is one item after a sync. An id already on the board is CONFLICT.
	ID                      string
	Title, Spec, SpecFormat string
	CreatedBy               Actor
	DependsOn               []string
	ParentID                string
	Supersedes              string
	References              []Reference
	TenantID                string
}

// Outcome is an item after a write, with the ids its prose cites that
// resolve to nothing (id-lint, warn only).
type Outcome struct {
	Item       *Item
	Unresolved []record.Unresolved
}

func cleanActor(a Actor) (Actor, error) {
	a.Human, a.Agent = strings.TrimSpace(a.Human), strings.TrimSpace(a.Agent)
	if a.Human == "" {
		return a, apperr.New(apperr.Schema, "an actor needs a human")
	}
	if err := labels("actor human", a.Human, "actor agent", a.Agent); err != nil {
		return a, err
	}
	secretgate.Fields(&a.Human, &a.Agent)
	return a, nil
}

func (s *Store) checkIDs(what string, ids []string, code apperr.Code) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if !record.ValidID(id) {
			return nil, apperr.New(apperr.Schema, "%s %q is not a ULID", what, shown(id))
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ok, err := s.Exists(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apperr.New(code, "%s %s names no item", what, id)
		}
		out = append(out, id)
	}
	return out, nil
}

func (s *Store) checkRefs(supersedes string, refs []Reference) ([]Reference, error) {
	all := refs
	if sup := strings.TrimSpace(supersedes); sup != "" {
		all = append([]Reference{{Rel: "supersedes", ID: sup}}, refs...)
	}
	out := []Reference{}
	seen := map[Reference]bool{}
	for _, r := range all {
		r.Rel, r.ID = strings.TrimSpace(r.Rel), strings.TrimSpace(r.ID)
		if r.Rel == "" {
			return nil, apperr.New(apperr.Schema, "a reference needs a rel")
		}
		if err := labels("a reference's rel", r.Rel); err != nil {
			return nil, err
		}
		secretgate.Fields(&r.Rel)
		if _, err := s.checkIDs("reference", []string{r.ID}, apperr.DanglingSupersedes); err != nil {
			return nil, err
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Store) lint(texts ...string) []record.Unresolved {
	var out []record.Unresolved
	seen := map[string]bool{}
	for _, t := range texts {
		for _, id := range record.FindIDs(t) {
			if seen[id] {
				continue
			}
			seen[id] = true
			ok, err := s.Exists(id)
			if err == nil && !ok && s.rec != nil {
				ok, err = s.rec.HasRecord(id)
			}
			switch {
			case err != nil:
				out = append(out, record.Unresolved{ID: id, Resolution: "unknown"})
			case !ok:
				out = append(out, record.Unresolved{ID: id, Resolution: "unresolved"})
			}
		}
	}
	return out
}

// Create adds an open item.
func (s *Store) Create(ctx context.Context, in CreateInput) (*Outcome, error) {
	title := strings.TrimSpace(in.Title)
	if title == "" {
		return nil, apperr.New(apperr.Schema, "title is required")
	}
	if strings.TrimSpace(in.Spec) == "" {
		return nil, apperr.New(apperr.Schema, "spec is required")
	}
	if strings.TrimSpace(in.SpecFormat) == "" {
		return nil, apperr.New(apperr.Schema, "spec_format is required")
	}
	actor, err := cleanActor(in.CreatedBy)
	if err != nil {
		return nil, err
	}
	tenant := strings.TrimSpace(in.TenantID)
	if tenant == "" {
		tenant = "local"
	}
	spec, specFormat := in.Spec, strings.TrimSpace(in.SpecFormat)
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	if err := labels("spec_format", specFormat, "tenant_id", tenant); err != nil {
		return nil, err
	}
	secretgate.Fields(&title, &spec, &specFormat, &tenant)
	deps, err := s.checkIDs("dependency", in.DependsOn, DanglingDependency)
	if err != nil {
		return nil, err
	}
	var parent *string
	if p := strings.TrimSpace(in.ParentID); p != "" {
		if _, err := s.checkIDs("parent", []string{p}, DanglingParent); err != nil {
			return nil, err
		}
		parent = &p
	}
	refs, err := s.checkRefs(in.Supersedes, in.References)
	if err != nil {
		return nil, err
	}
	now, ts := s.nowTS()
	id := s.ids.New(now)
	if in.ID != "" {
		if err := checkID(in.ID); err != nil {
			return nil, err
		}
		id = in.ID
	}
	it := &Item{ID: id, TenantID: tenant, Title: title, SpecFormat: specFormat,
		Status: StatusOpen, DependsOn: deps, ParentID: parent, References: refs, CreatedBy: actor,
		CreatedAt: ts, UpdatedAt: ts, Version: 1, Spec: spec}
	t := transition{item: it, event: Event{ItemID: it.ID, Actor: actor, Transition: TCreate, At: ts}}
	_, err = s.apply(ctx, it.ID, func(tip gitstore.Hash, cur *Item) (transition, error) {
		if cur != nil {
			return transition{}, apperr.New(apperr.Conflict, "item %s already exists", it.ID)
		}
		if parent != nil {
			g, err := s.parentGuard(*parent)
			if err != nil {
				return transition{}, err
			}
			t.guards = []gitstore.Guard{g}
		}
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	return &Outcome{Item: it, Unresolved: s.lint(it.Title)}, nil
}

// MaxSpec is the largest spec (in bytes) an item may carry, the same bound
// as a record's body.
const MaxSpec = record.MaxContent

func checkSpec(spec string) error {
	if len(spec) > MaxSpec {
		return apperr.New(apperr.Schema, "spec is %d bytes; a spec may be at most %d; nothing was written", len(spec), MaxSpec)
	}
	return nil
}

// labels checks name/value pairs with gitstore.CheckLabel: names are shown
// in commit messages and must hold no control character.
func labels(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := gitstore.CheckLabel(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// shown is a refused value as an error message may echo it: through the
// secret gate, then cut to 40 characters.
func shown(v string) string {
	v, _ = secretgate.Scan(textfmt.Head(v, 400))
	return textfmt.Head(v, 40)
}

// parentGuard holds a parent's lock while a child appears under it, so a
// claim of the parent (which checks for open children under that lock)
// cannot miss the child.
func (s *Store) parentGuard(parent string) (gitstore.Guard, error) {
	tip, err := s.git.Ref(RefName(parent))
	if err != nil {
		return gitstore.Guard{}, err
	}
	if tip == gitstore.ZeroHash {
		// An archived parent is finished; the guard holds it there (its
		// ref absent) so a reopen, which restores the ref, waits.
		if a, err := s.archivedTip(parent); err != nil || a == gitstore.ZeroHash {
			if err != nil {
				return gitstore.Guard{}, err
			}
			return gitstore.Guard{}, apperr.New(DanglingParent, "parent %s names no item", parent)
		}
	}
	return gitstore.Guard{Ref: RefName(parent), Want: tip}, nil
}

// UpdateInput changes an item's metadata; nil fields are left alone.
// ParentID: nil = unchanged, pointer to "" = make root, else move.
type UpdateInput struct {
	ExpectedVersion int64
	Title           *string
	Spec            *string
	SpecFormat      *string
	DependsOn       *[]string
	ParentID        *string
	Supersedes      *string
	References      *[]Reference
	Actor           Actor
}

// UpdateMeta applies in if the item is still at in.ExpectedVersion, and
// records an update-meta event.
func (s *Store) UpdateMeta(ctx context.Context, id string, in UpdateInput) (*Outcome, error) {
	if _, err := s.Expire(ctx, id); err != nil && !apperr.Is(err, apperr.Schema) {
		return nil, err
	}
	// The event names the caller: the actor given, else this repository's
	// git identity (never the item's creator, who may not be the one
	// changing it).
	actor := in.Actor
	if strings.TrimSpace(actor.Human) == "" {
		actor.Human = s.git.Identity().Name
	}
	actor, err := cleanActor(actor)
	if err != nil {
		return nil, err
	}
	var title string
	if in.Title != nil {
		if title = strings.TrimSpace(*in.Title); title == "" {
			return nil, apperr.New(apperr.Schema, "title must not be empty")
		}
		secretgate.Fields(&title)
	}
	var spec, specFormat string
	if in.Spec != nil {
		if spec = *in.Spec; strings.TrimSpace(spec) == "" {
			return nil, apperr.New(apperr.Schema, "spec must not be empty")
		}
		if err := checkSpec(spec); err != nil {
			return nil, err
		}
		secretgate.Fields(&spec)
	}
	if in.SpecFormat != nil {
		if specFormat = strings.TrimSpace(*in.SpecFormat); specFormat == "" {
			return nil, apperr.New(apperr.Schema, "spec_format must not be empty")
		}
		if err := labels("spec_format", specFormat); err != nil {
			return nil, err
		}
		secretgate.Fields(&specFormat)
	}
	var deps []string
	if in.DependsOn != nil {
		var err error
		if deps, err = s.checkIDs("dependency", *in.DependsOn, DanglingDependency); err != nil {
			return nil, err
		}
		if err := s.checkCycle(id, deps); err != nil {
			return nil, err
		}
	}
	if in.ParentID != nil && *in.ParentID != "" {
		if _, err := s.checkIDs("parent", []string{*in.ParentID}, DanglingParent); err != nil {
			return nil, err
		}
		if err := s.checkParentCycle(id, *in.ParentID); err != nil {
			return nil, err
		}
	}
	var refs []Reference
	if in.References != nil || in.Supersedes != nil {
		var given []Reference
		if in.References != nil {
			given = *in.References
		}
		sup := ""
		if in.Supersedes != nil {
			sup = *in.Supersedes
		}
		var err error
		if refs, err = s.checkRefs(sup, given); err != nil {
			return nil, err
		}
	}
	it, err := s.apply(ctx, id, func(_ gitstore.Hash, cur *Item) (transition, error) {
		if cur == nil {
			return transition{}, apperr.New(apperr.NotFound, "no item %s", id)
		}
		if cur.Version != in.ExpectedVersion {
			return transition{}, apperr.New(VersionConflict, "item %s is at version %d, not %d", id, cur.Version, in.ExpectedVersion)
		}
		next := *cur
		if in.Title != nil {
			next.Title = title
		}
		if in.Spec != nil {
			next.Spec = spec
		}
		if in.SpecFormat != nil {
			next.SpecFormat = specFormat
		}
		if in.DependsOn != nil {
			next.DependsOn = deps
		}
		if in.ParentID != nil {
			if *in.ParentID == "" {
				next.ParentID = nil
			} else {
				p := *in.ParentID
				next.ParentID = &p
			}
		}
		if refs != nil {
			next.References = refs
		}
		_, ts := s.nowTS()
		next.Version++
		next.UpdatedAt = ts
		t := transition{item: &next, event: Event{ItemID: id, Actor: actor, Transition: TUpdateMeta, At: ts,
			Note: fmt.Sprintf("version %d → %d", cur.Version, next.Version)}}
		if next.ParentID != nil && (cur.ParentID == nil || *cur.ParentID != *next.ParentID) {
			g, err := s.parentGuard(*next.ParentID) // the item appears under a new parent
			if err != nil {
				return transition{}, err
			}
			t.guards = []gitstore.Guard{g}
		}
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	return &Outcome{Item: it, Unresolved: s.lint(it.Title)}, nil
}

// checkCycle refuses deps for id when one of them (transitively) depends
// on id.
func (s *Store) checkCycle(id string, deps []string) error {
	type frame struct {
		id   string
		path []string
	}
	seen := map[string]bool{}
	stack := []frame{}
	for _, d := range deps {
		stack = append(stack, frame{d, []string{id, d}})
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.id == id {
			return apperr.New(Cycle, "dependency cycle: %s", strings.Join(f.path, " → "))
		}
		if seen[f.id] {
			continue
		}
		seen[f.id] = true
		_, it, err := s.current(f.id)
		if err != nil {
			return err
		}
		if it == nil {
			continue
		}
		for _, d := range it.DependsOn {
			stack = append(stack, frame{d, append(append([]string{}, f.path...), d)})
		}
	}
	return nil
}

// checkParentCycle refuses parent for id when id is parent or one of its
// ancestors.
func (s *Store) checkParentCycle(id, parent string) error {
	seen := map[string]bool{}
	for p := parent; p != ""; {
		if p == id {
			return apperr.New(ParentCycle, "item %s would become its own ancestor through %s", id, parent)
		}
		if seen[p] {
			return nil
		}
		seen[p] = true
		_, it, err := s.current(p)
		if err != nil || it == nil || it.ParentID == nil {
			return err
		}
		p = *it.ParentID
	}
	return nil
}

// LeaseDuration validates a requested lease (nil = the 4 h default).
func LeaseDuration(ms *int64) (time.Duration, error) {
	if ms == nil {
		return DefaultLease, nil
	}
	d := time.Duration(*ms) * time.Millisecond
	if *ms <= 0 || d > MaxLease {
		return 0, apperr.New(InvalidLease, "lease_ms must be a positive number of milliseconds, at most %d (30 days)", MaxLease.Milliseconds())
	}
	return d, nil
}

// Claim takes a lease on an open, claimable item and issues the next
// fencing token. It is won by exactly one contender: the ref moves by one
// compare-and-swap from the head the guard was checked on.
func (s *Store) Claim(ctx context.Context, id string, who Actor, leaseMs *int64) (*Item, error) {
	lease, err := LeaseDuration(leaseMs)
	if err != nil {
		return nil, err
	}
	if who, err = cleanActor(who); err != nil {
		return nil, err
	}
	it, err := s.applyPublished(ctx, id, true, func(_ gitstore.Hash, cur *Item) (transition, error) {
		if cur == nil {
			return transition{}, apperr.New(apperr.NotFound, "no item %s", id)
		}
		guards, err := s.claimable(cur)
		if err != nil {
			return transition{}, err
		}
		now, ts := s.nowTS()
		next := *cur
		next.TokenCounter += s.tokenStride()
		next.Status = StatusInProgress
		next.Claim = &Claim{Holder: who, ClaimToken: next.TokenCounter, AcquiredAt: ts, LeaseExpires: textfmt.Timestamp(now.Add(lease))}
		// Children are checked under the item's own lock, just before the
		// swap: creating a child holds that lock too (as a guard), so none
		// can appear between the check and the swap. Checking here only
		// would cost a second board-index refresh on every claim.
		guards = append(guards, gitstore.Guard{Ref: RefName(id), Check: func() error { return s.noOpenChild(id) }})
		return transition{item: &next, event: Event{ItemID: id, Actor: who, Transition: TClaim,
			ClaimToken: tokenPtr(next.TokenCounter), At: ts}, guards: guards}, nil
	})
	if err == nil && s.Observer != nil {
		s.Observer.Claimed(id)
	}
	return it, err
}

// tokenStride is how far a claim moves the item's fencing counter. A
// board that only this clone writes, or whose claims a remote authority
// serializes, counts 1, 2, 3…. A clone with a remote that claims without
// the authority (offline) may be claiming the same item as another clone
// from the same counter; a random stride in [1, 2^20] makes the two
// tokens differ (but for a one-in-a-million chance), so when the
// other claim wins at sync, this clone's token is rejected instead of
// matching the winner's. Tokens stay increasing either way.
func (s *Store) tokenStride() int64 {
	if s.Authority != nil || len(s.git.Remotes()) == 0 {
		return 1
	}
	return 1 + rand.Int64N(1<<20)
}

// claimable explains why cur cannot be claimed, or returns the guards of
// the claim: the dependencies' refs at the heads that were found done, so
// the claim lands only if none of them was reopened meanwhile.
func (s *Store) claimable(cur *Item) ([]gitstore.Guard, error) {
	if cur.Status != StatusOpen {
		if cur.Status == StatusInProgress && cur.Claim != nil {
			return nil, apperr.New(NotClaimable, "item %s is in_progress, held by %s until %s", cur.ID, cur.Claim.Holder, cur.Claim.LeaseExpires)
		}
		return nil, apperr.New(NotClaimable, "item %s is %s", cur.ID, cur.Status)
	}
	var guards []gitstore.Guard
	for _, d := range cur.DependsOn {
		dtip, dep, err := s.current(d)
		if err != nil {
			return nil, err
		}
		if dep == nil || dep.Status != StatusDone {
			st := "missing"
			if dep != nil {
				st = dep.Status
			}
			return nil, apperr.New(NotClaimable, "item %s depends on %s, which is %s", cur.ID, d, st)
		}
		guards = append(guards, gitstore.Guard{Ref: RefName(d), Want: dtip})
	}
	// Children are checked once, under the item's own lock (see Claim).
	return guards, nil
}

// noOpenChild is NOT_CLAIMABLE when id has a direct child open or in
// progress.
func (s *Store) noOpenChild(id string) error {
	kids, err := s.children(id)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if k.status == StatusOpen || k.status == StatusInProgress {
			return apperr.New(NotClaimable, "item %s has a child %s that is %s", id, k.id, k.status)
		}
	}
	return nil
}

// fenced applies a token-checked transition of the holder.
func (s *Store) fenced(ctx context.Context, id string, token int64, f func(cur *Item, now time.Time, ts string) (transition, error)) (*Item, error) {
	return s.applyPublished(ctx, id, true, func(_ gitstore.Hash, cur *Item) (transition, error) {
		if cur == nil {
			return transition{}, apperr.New(apperr.NotFound, "no item %s", id)
		}
		if cur.Status != StatusInProgress || cur.Claim == nil {
			return transition{}, apperr.New(InvalidClaim, "item %s holds no claim (it is %s); the claim is gone, re-claim it", id, cur.Status)
		}
		if cur.Claim.ClaimToken != token {
			return transition{}, apperr.New(InvalidClaim, "token %d is stale: item %s is held with token %d", token, id, cur.Claim.ClaimToken)
		}
		now, ts := s.nowTS()
		if !parseTime(cur.Claim.LeaseExpires).After(now) {
			return transition{}, apperr.New(InvalidClaim, "the lease on item %s expired at %s; re-claim it", id, cur.Claim.LeaseExpires)
		}
		return f(cur, now, ts)
	})
}

// Renew extends the lease held with token.
func (s *Store) Renew(ctx context.Context, id string, token int64, leaseMs *int64) (*Item, error) {
	lease, err := LeaseDuration(leaseMs)
	if err != nil {
		return nil, err
	}
	return s.fenced(ctx, id, token, func(cur *Item, now time.Time, ts string) (transition, error) {
		next := *cur
		c := *cur.Claim
		c.LeaseExpires = textfmt.Timestamp(now.Add(lease))
		next.Claim = &c
		return transition{item: &next, event: Event{ItemID: id, Actor: c.Holder, Transition: TRenew, ClaimToken: tokenPtr(token), At: ts}}, nil
	})
}

// Release hands the claim back; the item is open again.
func (s *Store) Release(ctx context.Context, id string, token int64, note string) (*Outcome, error) {
	secretgate.Fields(&note)
	it, err := s.fenced(ctx, id, token, func(cur *Item, now time.Time, ts string) (transition, error) {
		next := *cur
		next.Status, next.Claim = StatusOpen, nil
		return transition{item: &next, event: Event{ItemID: id, Actor: cur.Claim.Holder, Transition: TRelease, ClaimToken: tokenPtr(token), Note: note, At: ts}}, nil
	})
	if err != nil {
		return nil, err
	}
	return &Outcome{Item: it, Unresolved: s.lint(note)}, nil
}

// Complete finishes the claimed item and appends a work-completion record
// to the process record (a failure there never undoes the completion).
func (s *Store) Complete(ctx context.Context, id string, token int64, note string) (*Outcome, error) {
	secretgate.Fields(&note)
	var it *Item
	// The work-completion record is built inside the item's transaction
	// (Stage), so its objects and the item's go to disk as one pack, and
	// published once the item's ref has moved: four new files, not six.
	var staged *record.Staged
	var rin record.AppendInput
	err := s.git.Together(func() error {
		var err error
		it, err = s.fenced(ctx, id, token, func(cur *Item, now time.Time, ts string) (transition, error) {
			next := *cur
			holder := cur.Claim.Holder
			next.Status, next.Claim = StatusDone, nil
			ev := Event{ItemID: id, Actor: holder, Transition: TComplete, ClaimToken: tokenPtr(token), Note: note, At: ts}
			if s.rec != nil {
				rin = completionRecord(&next, id, holder, ev.At, note, s.Session)
				// A record that cannot be staged is appended afresh below;
				// the completion does not wait on it.
				staged, _ = s.rec.Stage(rin)
			}
			return transition{item: &next, event: ev}, nil
		})
		if err != nil || s.rec == nil {
			return err
		}
		var rerr error
		if staged != nil {
			_, rerr = s.rec.Publish(ctx, staged)
		} else {
			_, rerr = s.rec.Append(ctx, rin)
		}
		if rerr != nil && s.Warn != nil {
			s.Warn("the work-completion record was not written: " + apperr.Message(rerr))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Outcome{Item: it, Unresolved: s.lint(note)}, nil
}

// completionRecord is the work-completion record of item id, completed by
// holder at at with note.
func completionRecord(it *Item, id string, holder Actor, at, note, session string) record.AppendInput {
	claim := it.Title + " — " + note
	content := note
	if strings.TrimSpace(note) == "" {
		claim = fmt.Sprintf("%s — completed by %s at %s", it.Title, holder.Human, at)
		content = claim
	}
	return record.AppendInput{Kind: "work-completion", Claim: claim,
		VerificationAnchor: "board:" + id + "#complete@" + at, Scope: it.TenantID + "/" + id,
		Source:  record.Source{CapturePoint: "work-completion", SessionID: session, TaskID: id},
		Content: content}
}

// Cancel ends an open or in-progress item (voiding any claim).
func (s *Store) Cancel(ctx context.Context, id string, who Actor) (*Item, error) {
	who, err := cleanActor(who)
	if err != nil {
		return nil, err
	}
	return s.applyPublished(ctx, id, true, func(_ gitstore.Hash, cur *Item) (transition, error) {
		if cur == nil {
			return transition{}, apperr.New(apperr.NotFound, "no item %s", id)
		}
		if cur.Status != StatusOpen && cur.Status != StatusInProgress {
			return transition{}, apperr.New(InvalidTransition, "item %s is %s; only open or in_progress items can be cancelled", id, cur.Status)
		}
		_, ts := s.nowTS()
		next := *cur
		ev := Event{ItemID: id, Actor: who, Transition: TCancel, At: ts}
		if cur.Claim != nil {
			ev.ClaimToken = tokenPtr(cur.Claim.ClaimToken)
		}
		next.Status, next.Claim, next.UpdatedAt = StatusCancelled, nil, ts
		return transition{item: &next, event: ev}, nil
	})
}

// Reopen moves a done item back to open.
func (s *Store) Reopen(ctx context.Context, id string, who Actor) (*Item, error) {
	who, err := cleanActor(who)
	if err != nil {
		return nil, err
	}
	return s.applyPublished(ctx, id, false, func(_ gitstore.Hash, cur *Item) (transition, error) {
		if cur == nil {
			return transition{}, apperr.New(apperr.NotFound, "no item %s", id)
		}
		if cur.Status != StatusDone {
			return transition{}, apperr.New(InvalidTransition, "item %s is %s; only done items can be reopened", id, cur.Status)
		}
		_, ts := s.nowTS()
		next := *cur
		next.Status, next.UpdatedAt = StatusOpen, ts
		t := transition{item: &next, event: Event{ItemID: id, Actor: who, Transition: TReopen, At: ts}}
		if cur.ParentID != nil { // an open child appears under the parent
			g, err := s.parentGuard(*cur.ParentID)
			if err != nil {
				return transition{}, err
			}
			t.guards = []gitstore.Guard{g}
		}
		return t, nil
	})
}

// Get returns the item with its backlinks after the lazy expiry check, or
// nil when there is no such item.
func (s *Store) Get(ctx context.Context, id string) (*View, error) {
	if _, err := s.Expire(ctx, id); err != nil {
		return nil, err
	}
	_, it, err := s.current(id)
	if err != nil || it == nil {
		return nil, err
	}
	back, err := s.backlinksOf(id)
	if err != nil {
		return nil, err
	}
	return &View{Item: it, ReferencedBy: back}, nil
}

// eventOf reads the event a transition commit recorded; ok is false when
// the commit holds none that parses.
func (s *Store) eventOf(c *gitstore.Commit) (ev Event, ok bool, err error) {
	e, found, err := s.git.Lookup(c.Tree, []string{eventFile})
	if err != nil || !found {
		return ev, false, err
	}
	data, err := s.git.ReadBlob(e.Hash)
	if err != nil {
		return ev, false, err
	}
	return ev, jsonUnmarshal(data, &ev) == nil, nil
}

// Events returns every event of the item, oldest first ([] when unknown).
func (s *Store) Events(ctx context.Context, id string) ([]Event, error) {
	if _, err := s.Expire(ctx, id); err != nil {
		return nil, err
	}
	tip, err := s.tip(id)
	if err == nil && tip == gitstore.ZeroHash {
		tip, err = s.archivedTip(id)
	}
	if err != nil {
		return nil, err
	}
	var evs []Event
	for h := tip; h != gitstore.ZeroHash; {
		c, err := s.git.ReadCommit(h)
		if err != nil {
			return nil, err
		}
		ev, ok, err := s.eventOf(c)
		if err != nil {
			return nil, err
		}
		if ok {
			evs = append(evs, ev)
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	if evs == nil {
		evs = []Event{}
	}
	return evs, nil
}
