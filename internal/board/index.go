package board

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/paging"
)

// The board index is a per-clone cache under .git/ideate/ of what list,
// sweep, claimability and backlinks need from every item, keyed by each
// item ref's tip. It is refreshed on use: refs whose tip moved are re-read,
// refs that vanished are dropped, so it is never the only copy of
// anything and a deleted or corrupt index is simply rebuilt.
const indexFile = "board-index.v1"

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
	byID map[string]*entry
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

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
	old := s.cachedIndex()
	idx := &boardIndex{byID: make(map[string]*entry, len(refs))}
	stale := 0
	for _, r := range refs {
		id := strings.TrimPrefix(r.Name, ItemsPrefix)
		if e, ok := old.byID[id]; ok && e.tip == r.Hash {
			idx.byID[id] = e
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
	if stale >= 16 || len(old.byID) == 0 && len(refs) > 0 || len(old.byID)+stale > len(idx.byID)+16 {
		writeIndex(s.indexPath(), idx)
	}
	s.idxMu.Lock()
	s.idxMem = idx // a long-lived process (the MCP server) starts from here next time
	s.idxMu.Unlock()
	return idx, nil
}

// cachedIndex is the newest index this process built, or the one on disk.
func (s *Store) cachedIndex() *boardIndex {
	s.idxMu.Lock()
	mem := s.idxMem
	s.idxMu.Unlock()
	if mem != nil {
		return mem
	}
	return readIndex(s.indexPath())
}

func readIndex(path string) *boardIndex {
	idx := &boardIndex{byID: map[string]*entry{}}
	data, err := os.ReadFile(path)
	if err != nil {
		return idx
	}
	// One string for the whole file: every field below is a substring of
	// it, so 10k lines cost 10k entries, not 110k small strings.
	text := string(data)
	header, rest, ok := strings.Cut(text, "\n")
	if !ok || header != "ideate-board-index 1" {
		return idx
	}
	idx.byID = make(map[string]*entry, strings.Count(rest, "\n"))
	var f [11]string
	for len(rest) > 0 {
		line, next, _ := strings.Cut(rest, "\n")
		rest = next
		n := 0
		for n < 10 {
			i := strings.IndexByte(line, '\t')
			if i < 0 {
				break
			}
			f[n], line = line[:i], line[i+1:]
			n++
		}
		if n != 10 {
			return &boardIndex{byID: map[string]*entry{}}
		}
		f[10] = line
		tip, err := gitstore.ParseHash(f[1])
		if err != nil {
			return &boardIndex{byID: map[string]*entry{}}
		}
		n2, _ := strconv.Atoi(f[9])
		e := &entry{id: f[0], tip: tip, status: f[2], parent: f[3], createdAt: f[5], lease: f[6],
			refs: f[8], specLen: n2, itemJSON: f[10], tenant: unquoteFast(f[7])}
		if f[4] != "" {
			e.deps = strings.Split(f[4], ",")
		}
		idx.byID[e.id] = e
	}
	return idx
}

func unquoteFast(q string) string {
	if len(q) >= 2 && strings.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	var s string
	json.Unmarshal([]byte(q), &s)
	return s
}

func writeIndex(path string, idx *boardIndex) {
	var b bytes.Buffer
	b.WriteString("ideate-board-index 1\n")
	ids := make([]string, 0, len(idx.byID))
	for id := range idx.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e := idx.byID[id]
		tenant, _ := json.Marshal(e.tenant)
		b.WriteString(strings.Join([]string{e.id, e.tip.String(), e.status, e.parent, strings.Join(e.deps, ","),
			e.createdAt, e.lease, string(tenant), e.refs, strconv.Itoa(e.specLen), e.itemJSON}, "\t"))
		b.WriteByte('\n')
	}
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o777) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".board-index-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b.Bytes())
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

type kid struct{ id, status string }

// children lists the direct children of id.
func (s *Store) children(id string) ([]kid, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	var out []kid
	for _, e := range idx.byID {
		if e.parent == id {
			out = append(out, kid{e.id, e.status})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

func (idx *boardIndex) backlinks() map[string][]Reference {
	out := map[string][]Reference{}
	for _, e := range idx.byID {
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

func (s *Store) backlinksOf(id string) ([]Reference, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	back := idx.backlinks()[id]
	if back == nil {
		back = []Reference{}
	}
	return back, nil
}

// claimableIn is the derived claimable flag: open, every direct dependency
// done (a cancelled one still blocks), and no direct child open or in
// progress (a cancelled child does not block).
func (idx *boardIndex) claimableIn(e *entry, kids map[string][]*entry) bool {
	if e.status != StatusOpen {
		return false
	}
	for _, d := range e.deps {
		de, ok := idx.byID[d]
		if !ok || de.status != StatusDone {
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

func (idx *boardIndex) kids() map[string][]*entry {
	m := map[string][]*entry{}
	for _, e := range idx.byID {
		if e.parent != "" {
			m[e.parent] = append(m[e.parent], e)
		}
	}
	return m
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
	if swept, err := s.sweepIndex(ctx, idx, f.TenantID, 0); err == nil && len(swept) > 0 {
		page.Swept = len(swept)
		if idx, err = s.index(); err != nil {
			return nil, err
		}
	}
	sel := make([]*entry, 0, len(idx.byID))
	for _, e := range idx.byID {
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
	back := idx.backlinks()
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
		row := newRow(it, back[e.id], idx.claimableIn(e, kids), req.IncludeSpec)
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
	var sel []*entry
	for _, e := range idx.byID {
		if (tenant == "" || e.tenant == tenant) && idx.claimableIn(e, kids) {
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
