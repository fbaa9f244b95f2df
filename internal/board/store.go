package board

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// ItemsPrefix is the namespace of item refs: one ref per item, whose
// first-parent commit chain is the item's audit trail.
const ItemsPrefix = "refs/ideate/board/items/"

// FormatVersion is the item tree layout this build writes and the newest it
// reads; it is the blob FormatFile in every item commit's tree.
const (
	FormatVersion = 1
	FormatFile    = "ideate-format"
	itemFile      = "item.json"
	eventFile     = "event.json"
)

var format = gitstore.Format{File: FormatFile, Kind: "ideate-board-item", Version: FormatVersion,
	Code: SchemaVersion, What: "this board item"}

// Observer receives board signals (telemetry).
type Observer interface {
	Claimed(itemID string)
}

// Store is the delegation board of one repository.
type Store struct {
	git *gitstore.Store
	rec *record.Store
	ids *record.IDSource

	// Now is the clock; leases and expiry use it.
	Now func() time.Time
	// Observer, when set, hears of successful claims.
	Observer Observer
	// Authority, when set, is the remote whose acceptance makes a claim,
	// renew, release, complete, cancel or reopen count (see package
	// teamsync): the verb succeeds only once it has accepted the item's
	// new head.
	Authority Authority
	// Session is the session the verbs run in (the host's session for a
	// hook or the MCP server, "cli-<ULID>" for a CLI call): the
	// work-completion record a completion writes carries it as its
	// source.session_id. The holder's agent is who did the work, not a
	// session.
	Session string
	// Warn receives non-fatal problems (a completion record that could
	// not be written); nil discards them.
	Warn func(msg string)
	// AppendIndex has the store add the index lines of the items it
	// writes or reads back to the per-clone index file (appendIndex), for
	// the next process: a CLI call sets it. A long-lived process keeps
	// them in memory instead.
	AppendIndex bool

	idxMu     sync.Mutex
	idxMem    *boardIndex
	idxOver   map[string]*entry // items read since idxMem was built (see children); copied on write
	movedMemo *movedMemo        // see packedMoved
	arch      archiveCache

	afterStep func() // tests: runs between a transition's checks and its swap
}

// Open returns the board over git, writing completion records to rec.
func Open(git *gitstore.Store, rec *record.Store) *Store {
	return &Store{git: git, rec: rec, ids: record.NewIDSource(), Now: time.Now}
}

// Authority accepts or refuses an item's new local head.
type Authority interface {
	// Publish makes the authority accept mine, the head a verb just wrote
	// on item id's local ref. It returns the head the item settled on:
	// mine, or mine's transitions replayed onto the authority's newer
	// head. When the verb's own transition did not survive, it returns the
	// typed error the verb would have given there (NOT_CLAIMABLE naming
	// the holder, INVALID_CLAIM, INVALID_TRANSITION), and the local ref
	// has been moved back to the authority's state.
	Publish(ctx context.Context, id string, mine gitstore.Hash) (gitstore.Hash, error)
	// Refresh brings the local refs of items ids to the authority's state
	// (local transitions it has not seen are replayed onto it, as Publish
	// does); an item the authority does not have is left as it is. A verb
	// calls it before it refuses, so the refusal is the authority's.
	Refresh(ctx context.Context, ids []string) error
}

// RefName is the ref of one item.
func RefName(id string) string { return ItemsPrefix + id }

// Exists reports whether an item with this id exists (live or archived).
func (s *Store) Exists(id string) (bool, error) {
	if !record.ValidID(id) {
		return false, nil
	}
	return Known(s.git, id)
}

// load reads the item snapshot at commit tip.
func (s *Store) load(tip gitstore.Hash) (*Item, error) {
	c, err := s.git.ReadCommit(tip)
	if err != nil {
		return nil, err
	}
	entries, err := s.git.ReadTree(c.Tree)
	if err != nil {
		return nil, err
	}
	var itemH gitstore.Hash
	for _, e := range entries {
		switch e.Name {
		case FormatFile:
			if err := s.git.CheckFormat(e, format); err != nil {
				return nil, err
			}
		case itemFile:
			itemH = e.Hash
		}
	}
	if itemH == gitstore.ZeroHash {
		return nil, apperr.New(apperr.Internal, "commit %s holds no %s", tip, itemFile)
	}
	data, err := s.git.ReadBlob(itemH)
	if err != nil {
		return nil, err
	}
	it, err := unmarshalStored(data)
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "item snapshot at %s does not parse", tip)
	}
	return it, nil
}

// checkID is SCHEMA unless id is a ULID.
func checkID(id string) error {
	if !record.ValidID(id) {
		return apperr.New(apperr.Schema, "id %q is not a ULID", shown(id))
	}
	return nil
}

// tip returns the tip of id's ref, ZeroHash when absent.
func (s *Store) tip(id string) (gitstore.Hash, error) {
	if err := checkID(id); err != nil {
		return gitstore.ZeroHash, err
	}
	return s.git.Ref(RefName(id))
}

// current returns the tip of id's ref and the item: the ref's, else the
// archive's (the tip is then ZeroHash: there is no ref); the item is nil
// when there is no such item.
func (s *Store) current(id string) (gitstore.Hash, *Item, error) {
	tip, err := s.tip(id)
	if err != nil {
		return tip, nil, err
	}
	at := tip
	if tip == gitstore.ZeroHash {
		if at, err = s.archivedTip(id); err != nil || at == gitstore.ZeroHash {
			return tip, nil, err
		}
	}
	it, err := s.load(at)
	return tip, it, err
}

// transition is what one commit records; guards are other items' refs
// the decision was taken on (a claim's dependencies), which must not move
// before the commit lands.
type transition struct {
	item   *Item
	event  Event
	guards []gitstore.Guard
}

// writeTree stores the snapshot and the event of one transition.
func (s *Store) writeTree(t transition) (gitstore.Hash, error) {
	fb, err := s.git.WriteBlob(format.Blob())
	if err != nil {
		return gitstore.ZeroHash, err
	}
	ib, err := s.git.WriteBlob(t.item.marshalStored())
	if err != nil {
		return gitstore.ZeroHash, err
	}
	ev, _ := json.MarshalIndent(t.event, "", "  ")
	eb, err := s.git.WriteBlob(append(ev, '\n'))
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return s.git.WriteTree([]gitstore.TreeEntry{
		{Mode: gitstore.ModeFile, Name: FormatFile, Hash: fb},
		{Mode: gitstore.ModeFile, Name: itemFile, Hash: ib},
		{Mode: gitstore.ModeFile, Name: eventFile, Hash: eb},
	})
}

func commitMessage(t transition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", t.event.Transition, textfmt.Head(gitstore.MessageLine(t.item.Title), 72))
	fmt.Fprintf(&b, "Ideate-Item: %s\nIdeate-Transition: %s\nIdeate-Status: %s\n", t.item.ID, t.event.Transition, t.item.Status)
	fmt.Fprintf(&b, "Ideate-Actor: %s\n", gitstore.MessageLine(t.event.Actor.String()))
	if t.event.ClaimToken != nil {
		fmt.Fprintf(&b, "Ideate-Token: %d\n", *t.event.ClaimToken)
	}
	return b.String()
}

// step computes the transition to apply to the item at tip (it is nil
// when the item does not exist).
type step func(tip gitstore.Hash, it *Item) (transition, error)

// apply runs f against the current head of id and commits its transition
// with one compare-and-swap of the item ref from that head. When another
// writer moved the ref first, f runs again on the new head, so every guard
// is checked against the state the commit lands on. It returns the
// snapshot written.
func (s *Store) apply(ctx context.Context, id string, f step) (*Item, error) {
	it, _, err := s.applyAt(ctx, id, f)
	return it, err
}

// applyPublished is apply for the transitions a remote authority must
// accept (claim, renew, release, complete, cancel, reopen): with
// s.Authority set, the new head is pushed before the call returns, and the
// item returned is the one the remote settled on. expire runs the lazy
// lease expiry first (every verb but reopen).
//
// With an authority, a refusal is never decided on this clone's copy
// alone: that copy may be behind the remote (a claim released there, a
// dependency completed there, an item created there). When the step
// refuses (NOT_FOUND, NOT_CLAIMABLE, INVALID_CLAIM, INVALID_TRANSITION),
// the item, its dependencies and its children are fetched from the
// authority and brought up to its state (Authority.Refresh), and the verb
// is decided once more on that state. Only the refusing path pays the
// fetch. When the authority cannot be reached, the verb fails with its
// error (REMOTE): the refusal could not be checked.
func (s *Store) applyPublished(ctx context.Context, id string, expire bool, f step) (*Item, error) {
	it, err := s.publishOnce(ctx, id, expire, f)
	if s.Authority == nil || !refusal(err) {
		return it, err
	}
	if rerr := s.Authority.Refresh(ctx, s.related(id)); rerr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, apperr.Wrap(apperr.CodeOf(rerr), rerr, "%s here; the remote that decides could not be asked: %s", apperr.Message(err), apperr.Message(rerr))
	}
	return s.publishOnce(ctx, id, expire, f)
}

func (s *Store) publishOnce(ctx context.Context, id string, expire bool, f step) (*Item, error) {
	if expire {
		if _, err := s.Expire(ctx, id); err != nil {
			return nil, err
		}
	}
	it, head, err := s.applyAt(ctx, id, f)
	if err != nil || s.Authority == nil {
		return it, err
	}
	settled, err := s.Authority.Publish(ctx, id, head)
	if err != nil {
		return nil, err
	}
	if settled == head {
		return it, nil
	}
	return s.load(settled)
}

// refusal reports whether err is a verb's refusal decided on the item's
// state (as opposed to bad input or a failure).
func refusal(err error) bool {
	switch apperr.CodeOf(err) {
	case apperr.NotFound, NotClaimable, InvalidClaim, InvalidTransition:
		return true
	}
	return false
}

// related is id with the items a decision on id reads: its dependencies
// and its children, as this clone knows them.
func (s *Store) related(id string) []string {
	ids := []string{id}
	if _, it, err := s.current(id); err == nil && it != nil {
		ids = append(ids, it.DependsOn...)
	}
	if kids, err := s.children(id); err == nil {
		for _, k := range kids {
			ids = append(ids, k.id)
		}
	}
	return ids
}

func (s *Store) applyAt(ctx context.Context, id string, f step) (*Item, gitstore.Hash, error) {
	if err := checkID(id); err != nil {
		return nil, gitstore.ZeroHash, err
	}
	if err := s.restore(ctx, id); err != nil {
		return nil, gitstore.ZeroHash, err
	}
	var last *Item
	head, err := s.git.TransactGuarded(ctx, RefName(id), func(tip gitstore.Hash) (gitstore.Hash, string, []gitstore.Guard, error) {
		var it *Item
		if tip != gitstore.ZeroHash {
			var err error
			if it, err = s.load(tip); err != nil {
				return gitstore.ZeroHash, "", nil, err
			}
		}
		t, err := f(tip, it)
		if err != nil {
			return gitstore.ZeroHash, "", nil, err
		}
		tree, err := s.writeTree(t)
		if err != nil {
			return gitstore.ZeroHash, "", nil, err
		}
		if s.afterStep != nil {
			s.afterStep()
		}
		last = t.item
		return tree, commitMessage(t), t.guards, nil
	})
	if err == nil {
		e := entryOf(head, last)
		s.keep(nil, e)
		if s.AppendIndex {
			appendIndex(s.indexPath(), []*entry{e}, nil)
		}
		// Every transition leaves the item's ref loose; keep the namespace
		// packed so listing thousands of items reads one file.
		s.git.PackRefsIfLoose(ctx, ItemsPrefix, 16)
	}
	return last, head, err
}

func (s *Store) nowTS() (time.Time, string) {
	now := s.Now()
	return now, textfmt.Timestamp(now)
}

func tokenPtr(n int64) *int64 { return &n }

// expired reports whether it holds a claim whose lease has run out at now.
func expired(it *Item, now time.Time) bool {
	return it != nil && it.Status == StatusInProgress && it.Claim != nil && !parseTime(it.Claim.LeaseExpires).After(now)
}

// mayHaveExpired is false when the item e was taken from certainly holds no
// expired claim at now (expired would say false): it is not in progress,
// or its claim's lease (set only from a claim) ends after now.
func (e *entry) mayHaveExpired(now time.Time) bool {
	return e.status == StatusInProgress && (e.lease == "" || !parseTime(e.lease).After(now))
}

// cachedEntry is the index entry of item id at tip held by this process
// (in the index it built or read, or beside it), or nil. It does not read
// the index file.
func (s *Store) cachedEntry(id string, tip gitstore.Hash) *entry {
	s.idxMu.Lock()
	base, over := s.idxMem, s.idxOver
	s.idxMu.Unlock()
	if base != nil {
		if e, ok := base.get(id); ok && e.tip == tip {
			return e
		}
	}
	if e, ok := over[id]; ok && e.tip == tip {
		return e
	}
	return nil
}

// keep adds es to the entries kept beside the index (idxOver, copied on
// write): items this process has just written (applyAt), so that neither
// the next claim's child check nor the next verb's expiry check reads them
// back, and items a child check read. It keeps nothing when the index is
// no longer base (nil: any index), when there is none in memory (a CLI
// call that read none), or when 2×maxOver entries are kept already (only
// writes since the last rebuild: the next child check rebuilds it).
func (s *Store) keep(base *boardIndex, es ...*entry) {
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if s.idxMem == nil || base != nil && s.idxMem != base || len(s.idxOver) >= 2*maxOver {
		return
	}
	next := make(map[string]*entry, len(s.idxOver)+len(es))
	for k, v := range s.idxOver {
		next[k] = v
	}
	for _, e := range es {
		if b, ok := s.idxMem.get(e.id); !ok || b.tip != e.tip {
			next[e.id] = e
		}
	}
	s.idxOver = next
}

// recovery is the orphan-recovery transition of an expired claim.
func recovery(it *Item, now time.Time) transition {
	next := *it
	c := it.Claim
	next.Status, next.Claim = StatusOpen, nil
	return transition{item: &next, event: Event{ItemID: it.ID, Actor: c.Holder, Transition: TOrphanRecovery,
		ClaimToken: tokenPtr(c.ClaimToken), At: textfmt.Timestamp(now),
		Note: fmt.Sprintf("lease expired at %s; item reopened by the expiry check", c.LeaseExpires)}}
}

// Expire turns an expired claim on id back to open with an
// orphan-recovery event. It reports whether it did.
func (s *Store) Expire(ctx context.Context, id string) (bool, error) {
	now := s.Now()
	tip, err := s.tip(id)
	if err != nil || tip == gitstore.ZeroHash {
		return false, err
	}
	if e := s.cachedEntry(id, tip); e != nil && !e.mayHaveExpired(now) {
		return false, nil // decided from the index entry of this very tip
	}
	it, err := s.load(tip)
	if err != nil {
		return false, err
	}
	if !expired(it, now) {
		return false, nil
	}
	_, err = s.apply(ctx, id, func(_ gitstore.Hash, it *Item) (transition, error) {
		if !expired(it, now) {
			return transition{}, errNothing
		}
		return recovery(it, now), nil
	})
	if err == errNothing {
		return false, nil // someone else recovered or renewed it first
	}
	return err == nil, err
}

var errNothing = errors.New("nothing to do")
