package steering

import (
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/paging"
)

// cursorKind is the collection name bound into steering cursors.
const cursorKind = "steering"

// ReadRequest selects and pages items. Every filter is optional: ID is
// exact, Domain a case-insensitive substring, Status exact (one of the
// three statuses, else SCHEMA) and Kind exact. Limit, Cursor and Measure
// follow the paging rules: DefaultLimit items when Limit is nil, clamped
// into 1..MaxLimit, and, when Measure is set, at most paging.Budget
// characters of rows as Measure counts them (the first row always kept).
type ReadRequest struct {
	ID             string
	Domain         string
	Status         string
	Kind           string
	IncludeHistory bool
	Limit          *int
	Cursor         string
	Measure        paging.Measure
}

// key is the canonical filter string a cursor is bound to. The domain is
// folded to lower case because the filter ignores case; IncludeHistory
// and Limit shape the page, not the selection, so they are not part of it.
func (r ReadRequest) key() string {
	return "id=" + r.ID + "\x00domain=" + strings.ToLower(r.Domain) + "\x00status=" + r.Status + "\x00kind=" + r.Kind
}

// Row is an item as a read shows it: without its history unless asked,
// with the number of prior versions and the derived backlinks.
type Row struct {
	ID            string      `json:"id"`
	Kind          string      `json:"kind"`
	Domain        string      `json:"domain"`
	Status        string      `json:"status"`
	UpdatedAt     string      `json:"updated_at"`
	Statement     string      `json:"statement"`
	References    []Reference `json:"references"`
	ReferencedBy  []Reference `json:"referenced_by"`
	HistoryLength int         `json:"history_length"`
	// History is nil (and omitted) unless the read asked for it.
	History []Amendment `json:"history,omitzero"`
}

// Page is one page of rows, ordered by updated_at descending, then id
// ascending. NextCursor is nil only when the selection is exhausted.
type Page struct {
	Items      []Row   `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// after reports whether it sorts strictly after the keyset position key.
func after(it *Item, key []string) bool {
	return it.UpdatedAt < key[0] || it.UpdatedAt == key[0] && it.ID > key[1]
}

// Read serves one page of the items that match req.
func (s *Store) Read(req ReadRequest) (*Page, error) {
	if err := s.gate(); err != nil {
		return nil, err
	}
	if req.Status != "" && !ValidStatus(req.Status) {
		return nil, apperr.New(apperr.Schema, "status %s is not one of active, deprecated, superseded", show(req.Status))
	}
	pos, err := paging.Position(req.Cursor, cursorKind, req.key(), 2)
	if err != nil {
		return nil, err
	}
	items, err := s.all()
	if err != nil {
		return nil, err
	}
	back := backlinks(items)
	domain := strings.ToLower(req.Domain)
	page := &Page{Items: []Row{}}
	limit := paging.Limit(req.Limit)
	more := false
	for _, it := range items {
		if req.ID != "" && it.ID != req.ID || req.Status != "" && it.Status != req.Status ||
			req.Kind != "" && it.Kind != req.Kind || domain != "" && !strings.Contains(strings.ToLower(it.Domain), domain) {
			continue
		}
		if pos != nil && !after(it, pos) {
			continue
		}
		if len(page.Items) == limit {
			more = true
			break
		}
		page.Items = append(page.Items, newRow(it, back[it.ID], req.IncludeHistory))
	}
	page.Items, page.NextCursor, err = paging.Finish(page.Items, more, req.Measure, cursorKind, req.key(),
		func(last Row) []string { return []string{last.UpdatedAt, last.ID} })
	if err != nil {
		return nil, err
	}
	return page, nil
}

func newRow(it *Item, back []Reference, withHistory bool) Row {
	r := Row{ID: it.ID, Kind: it.Kind, Domain: it.Domain, Status: it.Status, UpdatedAt: it.UpdatedAt,
		Statement: it.Statement, References: it.References, ReferencedBy: back, HistoryLength: len(it.History)}
	if r.ReferencedBy == nil {
		r.ReferencedBy = []Reference{}
	}
	if withHistory {
		r.History = it.History
	}
	return r
}

// backlinks derives, for every item id, the edges that point at it, as
// {rel, id of the referring item}, in the order of items.
func backlinks(items []*Item) map[string][]Reference {
	back := map[string][]Reference{}
	for _, it := range items {
		for _, r := range it.References {
			back[r.ID] = append(back[r.ID], Reference{Rel: r.Rel, ID: it.ID})
		}
	}
	return back
}

// all returns every readable item at the tip, ordered by updated_at
// descending, then id ascending. Files that do not parse, or whose id
// differs from their name, are skipped (and reported to Warn).
func (s *Store) all() ([]*Item, error) {
	root, err := s.snapshot()
	if err != nil || root == gitstore.ZeroHash {
		return nil, err
	}
	dir, ok, err := s.git.Lookup(root, []string{itemsDir})
	if err != nil || !ok || !dir.IsDir() {
		return nil, err
	}
	entries, err := s.git.ReadTree(dir.Hash)
	if err != nil {
		return nil, err
	}
	items := make([]*Item, 0, len(entries))
	for _, e := range entries {
		id, isItem := strings.CutSuffix(e.Name, itemExt)
		if !isItem || !strings.HasPrefix(e.Mode, "100") || !ValidID(id) {
			continue
		}
		data, err := s.git.ReadBlob(e.Hash)
		if err != nil {
			return nil, err
		}
		it, err := Parse(data)
		if err != nil || it.ID != id {
			if s.Warn != nil {
				s.Warn("skipping steering item file " + itemsDir + "/" + e.Name + ": it does not parse")
			}
			continue
		}
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].UpdatedAt != items[j].UpdatedAt {
			return items[i].UpdatedAt > items[j].UpdatedAt
		}
		return items[i].ID < items[j].ID
	})
	return items, nil
}
