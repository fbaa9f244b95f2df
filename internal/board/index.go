package board

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/paging"
)

// The board index is a per-clone cache under .git/ideate/ of what list,
// sweep, claimability and backlinks need from every item, keyed by each
// item ref's tip. It is refreshed on use: refs whose tip moved are re-read,
// refs that vanished are dropped, so it is never the only copy of
// anything and a deleted or corrupt index is simply rebuilt. Its file's
// format is in indexfile.go.

type entry struct {
	id        string
	tip       gitstore.Hash
	status    string
	parent    string
	deps      []string
	createdAt string
	lease     string
	tenant    string
	refs      string // JSON array of references ("[]" when none)
	specLen   int
	itemJSON  string // compact JSON of the item without its spec
}

type boardIndex struct {
	// byID is every entry; for an index read from its file (file), nil
	// until all parses them.
	byID    map[string]*entry
	file    *fileIndex
	allOnce sync.Once
	lines   int // the lines of the file it was read from (appendIndex adds some)

	kidsOnce sync.Once
	kidsMap  map[string][]*entry // parent id → direct children; see kids
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// all is every entry, by id (shared: read only).
func (idx *boardIndex) all() map[string]*entry {
	if idx.file == nil {
		return idx.byID
	}
	idx.allOnce.Do(func() { idx.byID = idx.file.all() })
	return idx.byID
}

// get is id's entry.
func (idx *boardIndex) get(id string) (*entry, bool) {
	if idx.file == nil {
		e, ok := idx.byID[id]
		return e, ok
	}
	e := idx.file.get(id)
	return e, e != nil
}

// faulted reports whether reading the index's file faulted: what it
// answered may be incomplete.
func (idx *boardIndex) faulted() bool { return idx.file != nil && idx.file.fault.Load() }

func (s *Store) indexPath() string { return filepath.Join(s.git.Repo().StateDir(), indexFile) }

func entryOf(tip gitstore.Hash, it *Item) *entry {
	e := &entry{id: it.ID, tip: tip, status: it.Status, deps: it.DependsOn, createdAt: it.CreatedAt,
		tenant: it.TenantID, specLen: len([]rune(it.Spec))}
	if it.ParentID != nil {
		e.parent = *it.ParentID
	}
	if it.Claim != nil {
		e.lease = it.Claim.LeaseExpires
	}
	refs, _ := json.Marshal(it.References)
	e.refs = string(refs)
	light := *it
	light.Spec = ""
	b, _ := json.Marshal(&light)
	e.itemJSON = string(b)
	return e
}

// index returns the board index, refreshed against the current refs.
func (s *Store) index() (*boardIndex, error) {
	refs, err := s.git.Refs(ItemsPrefix)
	if err != nil {
		return nil, err
	}
	old, over := s.cachedIndex()
	oldAll := old.all()
	if old.faulted() {
		oldAll = nil
	}
	idx := &boardIndex{byID: make(map[string]*entry, len(refs))}
	stale := 0
	for _, r := range refs {
		id := strings.TrimPrefix(r.Name, ItemsPrefix)
		if e, ok := oldAll[id]; ok && e.tip == r.Hash {
			idx.byID[id] = e
			continue
		}
		if e, ok := over[id]; ok && e.tip == r.Hash {
			idx.byID[id] = e
			stale++
			continue
		}
		it, err := s.load(r.Hash)
		if err != nil {
			if apperr.Is(err, SchemaVersion) {
				continue // an item from a newer git ideate is skipped by listings
			}
			return nil, err
		}
		idx.byID[id] = entryOf(r.Hash, it)
		stale++
	}
	// Rewriting the whole index costs more than re-reading a few moved
	// items (a claim moves one), so it is written only when it has
	// fallen noticeably behind, or lists items that are gone.
	if stale >= 16 || len(oldAll) == 0 && len(refs) > 0 || len(oldAll)+stale > len(idx.byID)+16 {
		s.writeIndex(idx)
	}
	s.idxMu.Lock()
	s.idxMem = idx // a long-lived process (the MCP server) starts from here next time
	s.idxOver = nil
	s.idxMu.Unlock()
	return idx, nil
}

// cachedIndex is the newest index this process built (or the one on disk)
// with the entries read since then that it does not hold yet (see
// children). Neither may be modified: both are shared.
func (s *Store) cachedIndex() (*boardIndex, map[string]*entry) {
	s.idxMu.Lock()
	mem, over := s.idxMem, s.idxOver
	s.idxMu.Unlock()
	if mem != nil {
		return mem, over
	}
	mem = readIndex(s.indexPath())
	if f := mem.file; f != nil && f.tailLines > max(maxAppended, f.n/4) {
		s.writeIndex(mem) // the lines appended, merged
	}
	s.idxMu.Lock()
	if s.idxMem == nil {
		s.idxMem = mem
	}
	mem, over = s.idxMem, s.idxOver
	s.idxMu.Unlock()
	return mem, over
}

// writeIndex writes idx to the index file, with what packed-refs holds
// of the items now.
func (s *Store) writeIndex(idx *boardIndex) {
	packed, version, err := s.git.PackedRefsVersion(ItemsPrefix)
	if err != nil {
		packed, version = nil, ""
	}
	writeIndex(s.indexPath(), idx, packed, version)
}

// appendEntry appends e's line of the index file to line.
func appendEntry(line []byte, e *entry) []byte {
	line = append(line, e.id...)
	line = append(line, '\t')
	line = hex.AppendEncode(line, e.tip[:])
	for _, f := range []string{e.status, e.parent} {
		line = append(append(line, '\t'), f...)
	}
	line = append(line, '\t')
	for i, d := range e.deps {
		if i > 0 {
			line = append(line, ',')
		}
		line = append(line, d...)
	}
	for _, f := range []string{e.createdAt, e.lease} {
		line = append(append(line, '\t'), f...)
	}
	line = appendJSONString(append(line, '\t'), e.tenant)
	line = append(append(line, '\t'), e.refs...)
	line = strconv.AppendInt(append(line, '\t'), int64(e.specLen), 10)
	line = append(append(line, '\t'), e.itemJSON...)
	return append(line, '\n')
}

// appendIndex adds the lines of es to the end of the index file at path,
// when there is one, in one write (O_APPEND: lines of processes appending
// at once do not interleave). A later line of an item stands over an
// earlier one (readIndex), and every entry is keyed by its tip, so a line
// for a tip the ref has left is only passed over. A CLI call so leaves
// what it read or wrote for the next call, instead of every call reading
// back every item moved since the file was last rewritten.
func appendIndex(path string, es []*entry, more []byte) {
	if len(es) == 0 && len(more) == 0 {
		return
	}
	var b []byte
	for _, e := range es {
		b = appendEntry(b, e)
	}
	b = append(b, more...)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return // none yet: the next listing writes it whole
	}
	f.Write(b)
	f.Close()
}

// appendJSONString appends s as encoding/json writes it: as it is between
// quotes when nothing in it needs escaping (the usual tenant id).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

type kid struct{ id, status string }

// maxOver is how many moved items children may hold beside the cached
// index before it rebuilds the index instead, and maxRead how many it may
// read in one call.
const (
	maxOver = 32
	maxRead = 16
	// maxAppended is the least number of lines passed over (see
	// appendIndex) that has the next reader rewrite the file; past a
	// quarter of the items it is rewritten too.
	maxAppended = 256
)

// children lists the direct children of id, as the refs stand now. Every
// claim asks (under the item's lock), so it does not rebuild the index as
// index does, a map of every item per call. It looks at the refs whose tip
// is not the cached index's: the loose ones, and the packed ones, found by
// one pass over packed-refs per version of it and of the index (see
// packedMoved). It reads only the items that moved (kept for the next call
// beside the index, in idxOver), and answers from the cached children of id
// and the moved items. Past maxOver moved items it rebuilds the index.
func (s *Store) children(id string) ([]kid, error) {
	base, over := s.cachedIndex()
	kids, ok, err := s.childrenIn(base, over, id)
	if err != nil {
		return nil, err
	}
	if ok && !base.faulted() {
		return kids, nil
	}
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	return kidsIn(idx.kids()[id], nil, nil, id), nil
}

// fromPackedLine counts the open-child checks answered from an index
// file's packed line, without reading packed-refs (tests).
var fromPackedLine atomic.Int64

// childrenIn is children from base and over; ok is false when it would
// read too many moved items, and the index is to be rebuilt instead.
//
// An index read from its file says what packed-refs held when it was
// written (packedStamp): while packed-refs is still that version, only the
// loose refs are listed, and the packed ones that differ from the index
// are the stamp's. Otherwise packed-refs is read, and a CLI call appends
// what it found to the file for the next call.
func (s *Store) childrenIn(base *boardIndex, over map[string]*entry, id string) (_ []kid, ok bool, _ error) {
	var packedMoved, loose []gitstore.Ref
	var packedHas func(iid string) bool
	var stampLine []byte
	if f := base.file; f != nil && f.stamp.version != "" {
		l, at, err := s.git.LooseRefsAt(ItemsPrefix, f.stamp.version)
		if err != nil {
			return nil, false, err
		}
		if at {
			loose, packedMoved, packedHas = l, f.packedMoved(), f.packedHas
			fromPackedLine.Add(1)
		}
	}
	if packedHas == nil {
		packed, l, version, err := s.git.RefPartsVersion(ItemsPrefix)
		if err != nil {
			return nil, false, err
		}
		loose, packedMoved = l, s.packedMoved(base, packed)
		packedHas = func(iid string) bool {
			_, ok := findRef(packed, ItemsPrefix+iid)
			return ok
		}
		if f := base.file; f != nil && s.AppendIndex && version != "" && version != f.stamp.version && !base.faulted() {
			stampLine = appendPackedLine(nil, version, packed, f.sortedIDs)
			if base.faulted() { // a line sortedIDs could not read: say nothing
				stampLine = nil
			}
		}
	}
	var moved map[string]*entry // items whose ref is not at base's tip
	var read []*entry           // of those, the ones read by this call
	consider := func(r gitstore.Ref) error {
		iid := r.Name[len(ItemsPrefix):]
		if e, ok := base.get(iid); ok && e.tip == r.Hash {
			return nil
		}
		e, ok := over[iid]
		if !ok || e.tip != r.Hash {
			it, err := s.load(r.Hash)
			if err != nil {
				if apperr.Is(err, SchemaVersion) {
					return nil // an item from a newer git ideate: skipped, as listings do
				}
				return err
			}
			e = entryOf(r.Hash, it)
			read = append(read, e)
		}
		if moved == nil {
			moved = map[string]*entry{}
		}
		moved[iid] = e
		return nil
	}
	for _, r := range packedMoved {
		if _, isLoose := findRef(loose, r.Name); !isLoose { // else the loose value stands
			if err := consider(r); err != nil {
				return nil, false, err
			}
		}
	}
	for _, r := range loose {
		if err := consider(r); err != nil {
			return nil, false, err
		}
	}
	// A long-lived process reads a moved item once; a CLI call starts
	// from the index file and reads every item moved since it was
	// written: past maxRead of them, index rewrites the file (it does at
	// 16 stale), so the next call does not read them all again.
	if len(moved) > maxOver || len(read) >= maxRead {
		return nil, false, nil
	}
	if len(read) > 0 {
		s.keep(base, read...) // nothing if index ran meanwhile: its index is newer
	}
	if s.AppendIndex {
		appendIndex(s.indexPath(), read, stampLine)
	}
	listed := func(iid string) bool {
		_, inLoose := findRef(loose, ItemsPrefix+iid)
		return inLoose || packedHas(iid)
	}
	return kidsIn(base.kidsOf(id), moved, listed, id), true, nil
}

// findRef binary-searches refs, sorted by name, for name.
func findRef(refs []gitstore.Ref, name string) (int, bool) {
	i := sort.Search(len(refs), func(i int) bool { return refs[i].Name >= name })
	return i, i < len(refs) && refs[i].Name == name
}

// movedMemo is the packed refs whose tip is not the index's, for one
// version of packed-refs (the reader's parsed slice, the same until the
// file changes) and one index.
type movedMemo struct {
	base   *boardIndex
	packed *gitstore.Ref // &packed[0] of the version compared
	n      int
	moved  []gitstore.Ref
}

// packedMoved returns the refs of packed whose tip is not base's, comparing
// every one only when packed or base is not the one it last compared.
func (s *Store) packedMoved(base *boardIndex, packed []gitstore.Ref) []gitstore.Ref {
	if len(packed) == 0 {
		return nil
	}
	s.idxMu.Lock()
	m := s.movedMemo
	s.idxMu.Unlock()
	if m != nil && m.base == base && m.packed == &packed[0] && m.n == len(packed) {
		return m.moved
	}
	m = &movedMemo{base: base, packed: &packed[0], n: len(packed)}
	all := base.all()
	for _, r := range packed {
		if e, ok := all[r.Name[len(ItemsPrefix):]]; !ok || e.tip != r.Hash {
			m.moved = append(m.moved, r)
		}
	}
	s.idxMu.Lock()
	s.movedMemo = m
	s.idxMu.Unlock()
	return m.moved
}

// kidsIn is the children of id: those of cached (the index's) that did not
// move and are still listed, and the moved items whose parent is id,
// sorted by id.
func kidsIn(cached []*entry, moved map[string]*entry, listed func(string) bool, id string) []kid {
	var out []kid
	for _, e := range cached {
		if _, ok := moved[e.id]; ok || listed != nil && !listed(e.id) {
			continue
		}
		out = append(out, kid{e.id, e.status})
	}
	for _, e := range moved {
		if e.parent == id {
			out = append(out, kid{e.id, e.status})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (idx *boardIndex) backlinks() map[string][]Reference { return backlinksOf(idx.byID) }

// backlinksOf maps each item id to the items of es that reference it.
func backlinksOf(es map[string]*entry) map[string][]Reference {
	out := map[string][]Reference{}
	for _, e := range es {
		if e.refs == "[]" || e.refs == "" || e.refs == "null" {
			continue
		}
		var refs []Reference
		if json.Unmarshal([]byte(e.refs), &refs) != nil {
			continue
		}
		for _, r := range refs {
			out[r.ID] = append(out[r.ID], Reference{Rel: r.Rel, ID: e.id})
		}
	}
	for _, refs := range out { // newest referrer first, as items are listed
		sort.Slice(refs, func(i, j int) bool { return refs[i].ID > refs[j].ID })
	}
	return out
}

// backlinksOf is item id's referenced_by for Get: the live items and the
// archived ones that reference it (archiverefs.go), newest first.
func (s *Store) backlinksOf(id string) ([]Reference, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	back := append([]Reference{}, idx.backlinks()[id]...)
	arch, err := s.archivedBacklinks(idx.byID)
	if err != nil {
		return nil, err
	}
	if len(arch[id]) > 0 {
		back = append(back, arch[id]...)
		sort.Slice(back, func(i, j int) bool { return back[i].ID > back[j].ID })
	}
	return back, nil
}

// claimableIn is the derived claimable flag: open, every direct dependency
// done (a cancelled one still blocks), and no direct child open or in
// progress (a cancelled child does not block). archived is the status of
// a dependency that has no ref ("" when it is not archived either).
func (idx *boardIndex) claimableIn(e *entry, kids map[string][]*entry, archived func(id string) string) bool {
	if e.status != StatusOpen {
		return false
	}
	for _, d := range e.deps {
		if de, ok := idx.byID[d]; ok {
			if de.status != StatusDone {
				return false
			}
		} else if archived(d) != StatusDone {
			return false
		}
	}
	for _, k := range kids[e.id] {
		if k.status == StatusOpen || k.status == StatusInProgress {
			return false
		}
	}
	return true
}

// kids maps each parent id to its direct children, built once per index
// (an index is not modified once built). The map is shared: read only.
func (idx *boardIndex) kids() map[string][]*entry {
	idx.kidsOnce.Do(func() {
		m := map[string][]*entry{}
		for _, e := range idx.all() {
			if e.parent != "" {
				m[e.parent] = append(m[e.parent], e)
			}
		}
		idx.kidsMap = m
	})
	return idx.kidsMap
}

// kidsOf is the direct children of id; an index read from its file reads
// them from its children's section, not from every entry.
func (idx *boardIndex) kidsOf(id string) []*entry {
	if idx.file != nil {
		return idx.file.kidsOf(id)
	}
	return idx.kids()[id]
}

// Sweep returns every expired claim (of tenant, or of all tenants when
// tenant is "") to open with an orphan-recovery event, and reports how many.
func (s *Store) Sweep(ctx context.Context, tenant string) (int, error) {
	items, err := s.SweepItems(ctx, tenant, 0)
	return len(items), err
}

// SweepItems is Sweep naming what it recovered: each item as it stood
// before its claim lapsed (its Claim shows the holder and lease; no
// spec), ordered by id. max > 0 stops it after that many recoveries (each
// is a commit), for callers on a time budget; the rest wait for the next
// sweep or the next verb that names them.
func (s *Store) SweepItems(ctx context.Context, tenant string, max int) ([]*Item, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	return s.sweepIndex(ctx, idx, tenant, max)
}

func (s *Store) sweepIndex(ctx context.Context, idx *boardIndex, tenant string, max int) ([]*Item, error) {
	now := s.Now()
	var out []*Item
	for _, e := range idx.byID {
		if max > 0 && len(out) == max {
			break
		}
		if e.status != StatusInProgress || e.lease == "" || (tenant != "" && e.tenant != tenant) {
			continue
		}
		if parseTime(e.lease).After(now) {
			continue
		}
		ok, err := s.Expire(ctx, e.id)
		if err != nil {
			return out, err
		}
		if ok {
			it := &Item{}
			if json.Unmarshal([]byte(e.itemJSON), it) != nil {
				it = &Item{ID: e.id}
			}
			it.normalize()
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ListFilter selects items. Parent: nil = all, "" = roots only, else the
// children of that item.
type ListFilter struct {
	TenantID string
	Status   string
	Parent   *string
}

func (f ListFilter) key() string {
	p := "*"
	if f.Parent != nil {
		p = "=" + *f.Parent
	}
	return "tenant=" + f.TenantID + "\x00status=" + f.Status + "\x00parent=" + p
}

// ListRequest is one bounded page of the board.
type ListRequest struct {
	Filter      ListFilter
	IncludeSpec bool
	Limit       *int
	Cursor      string
	Measure     paging.Measure
	// NoSweep lists without first returning expired claims to open, for
	// a reader that must not write (an expired claim then shows as held).
	NoSweep bool
	// Archived lists the items a sync folded into the archive as well
	// (ArchiveRef): finished work, kept out of a plain listing so that it
	// costs what the live board costs. A filter on status done or
	// cancelled includes them anyway.
	Archived bool
}

// ListPage is a page of rows, newest first; NextCursor is nil only when
// the selection is exhausted.
type ListPage struct {
	Items      []Row   `json:"items"`
	NextCursor *string `json:"next_cursor"`
	// Swept counts expired claims the list's sweep returned to open.
	Swept int `json:"-"`
}

const workCursorKind = "work"

// List sweeps expired claims (best effort), then serves one page ordered by
// created_at, then id, descending.
func (s *Store) List(ctx context.Context, req ListRequest) (*ListPage, error) {
	f := req.Filter
	if f.Status != "" && !ValidStatus(f.Status) {
		return nil, apperr.New(apperr.Schema, "status %q is not one of open, in_progress, done, cancelled", f.Status)
	}
	after, err := paging.Position(req.Cursor, workCursorKind, f.key(), 2)
	if err != nil {
		return nil, err
	}
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	page := &ListPage{Items: []Row{}}
	if !req.NoSweep {
		if swept, err := s.sweepIndex(ctx, idx, f.TenantID, 0); err == nil && len(swept) > 0 {
			page.Swept = len(swept)
			if idx, err = s.index(); err != nil {
				return nil, err
			}
		}
	}
	all := idx.byID
	var archivedAll map[string]*entry
	if req.Archived || f.Status == StatusDone || f.Status == StatusCancelled {
		// Finished items live in the archive once a sync folded them in;
		// an item with a ref stands over its archive entry.
		if archivedAll, err = s.archivedEntries(); err != nil {
			return nil, err
		}
		if len(archivedAll) > 0 {
			all = make(map[string]*entry, len(idx.byID)+len(archivedAll))
			for id, e := range archivedAll {
				all[id] = e
			}
			for id, e := range idx.byID {
				all[id] = e
			}
		}
	}
	sel := make([]*entry, 0, len(all))
	for _, e := range all {
		if f.TenantID != "" && e.tenant != f.TenantID || f.Status != "" && e.status != f.Status {
			continue
		}
		if f.Parent != nil && e.parent != *f.Parent {
			continue
		}
		if after != nil && !(e.createdAt < after[0] || e.createdAt == after[0] && e.id < after[1]) {
			continue
		}
		sel = append(sel, e)
	}
	sort.Slice(sel, func(i, j int) bool {
		if sel[i].createdAt != sel[j].createdAt {
			return sel[i].createdAt > sel[j].createdAt
		}
		return sel[i].id > sel[j].id
	})
	limit := paging.Limit(req.Limit)
	more := len(sel) > limit
	if more {
		sel = sel[:limit]
	}
	kids := idx.kids()
	back := backlinksOf(all)
	archived := s.archivedStatus()
	for _, e := range sel {
		var it *Item
		if req.IncludeSpec {
			if it, err = s.load(e.tip); err != nil {
				return nil, err
			}
		} else {
			it = &Item{}
			if err := json.Unmarshal([]byte(e.itemJSON), it); err != nil {
				return nil, apperr.Wrap(apperr.Internal, err, "board index entry for %s does not parse", e.id)
			}
			it.normalize()
		}
		row := newRow(it, back[e.id], idx.claimableIn(e, kids, archived), req.IncludeSpec)
		row.SpecLength = e.specLen
		page.Items = append(page.Items, row)
	}
	page.Items, page.NextCursor, err = paging.Finish(page.Items, more, req.Measure, workCursorKind, f.key(),
		func(last Row) []string { return []string{last.CreatedAt, last.ID} })
	if err != nil {
		return nil, err
	}
	return page, nil
}

// Ready returns the claimable items of tenant ("" = all), oldest first.
func (s *Store) Ready(ctx context.Context, tenant string) ([]Row, error) {
	if _, err := s.Sweep(ctx, tenant); err != nil {
		return nil, err
	}
	rows, _, err := s.ReadyFirst(ctx, tenant, -1)
	return rows, err
}

// ReadyFirst is Ready without the sweep and cut to the oldest limit items
// (all when limit < 0); total counts every ready item. Only the rows
// returned are decoded, so a caller that names a handful of a large board's
// ready items (a session start, after SweepItems) pays for those alone.
func (s *Store) ReadyFirst(ctx context.Context, tenant string, limit int) (rows []Row, total int, err error) {
	idx, err := s.index()
	if err != nil {
		return nil, 0, err
	}
	kids := idx.kids()
	archived := s.archivedStatus()
	var sel []*entry
	for _, e := range idx.byID {
		if (tenant == "" || e.tenant == tenant) && idx.claimableIn(e, kids, archived) {
			sel = append(sel, e)
		}
	}
	sort.Slice(sel, func(i, j int) bool {
		if sel[i].createdAt != sel[j].createdAt {
			return sel[i].createdAt < sel[j].createdAt
		}
		return sel[i].id < sel[j].id
	})
	total = len(sel)
	if limit >= 0 && len(sel) > limit {
		sel = sel[:limit]
	}
	back := idx.backlinks()
	rows = make([]Row, 0, len(sel))
	for _, e := range sel {
		it := &Item{}
		if err := json.Unmarshal([]byte(e.itemJSON), it); err != nil {
			return nil, 0, err
		}
		it.normalize()
		row := newRow(it, back[e.id], true, false)
		row.SpecLength = e.specLen
		rows = append(rows, row)
	}
	return rows, total, nil
}

// ClaimNext claims the oldest ready item of tenant, trying the next one
// when another contender wins a race; nil when nothing is ready.
func (s *Store) ClaimNext(ctx context.Context, tenant string, who Actor, leaseMs *int64) (*Item, error) {
	rows, err := s.Ready(ctx, tenant)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		it, err := s.Claim(ctx, r.ID, who, leaseMs)
		if apperr.Is(err, NotClaimable) {
			continue
		}
		return it, err
	}
	return nil, nil
}
