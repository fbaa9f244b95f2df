package record

import (
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/paging"
)

// PageRequest is a bounded read: a filter, a limit (nil = the default,
// clamped to 1..500), an opaque cursor from a previous page of the same
// filter, whether bodies are included, and the measure of one row against
// the 40,000-character budget (paging.CompactLen for MCP,
// paging.PrettyLen for the CLI).
type PageRequest struct {
	Filter         Filter
	Limit          *int
	Cursor         string
	IncludeContent bool
	Measure        paging.Measure
}

// Page is one bounded page. NextCursor is nil only when the selection is
// exhausted.
type Page struct {
	Rows       []Row   `json:"records"`
	NextCursor *string `json:"next_cursor"`
}

// cursorKind names record cursors.
const cursorKind = "record"

// ReadPage serves one page of the current record.
func (s *Store) ReadPage(req PageRequest) (*Page, error) {
	key, err := paging.Position(req.Cursor, cursorKind, req.Filter.Key(), 1)
	if err != nil {
		return nil, err
	}
	before := ""
	if key != nil {
		if !ValidID(key[0]) {
			return nil, apperr.New(apperr.Schema, "cursor is malformed; start again without it")
		}
		before = key[0]
	}
	sn, err := s.Snapshot()
	if err != nil {
		return nil, err
	}
	limit := paging.Limit(req.Limit)
	recs, more, err := sn.Select(req.Filter, before, limit)
	if err != nil {
		return nil, err
	}
	page := &Page{Rows: make([]Row, 0, len(recs))}
	if len(recs) == 0 {
		return page, nil
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	back, err := sn.BacklinksOf(ids)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		page.Rows = append(page.Rows, NewRow(r, back[r.ID], req.IncludeContent))
	}
	page.Rows, page.NextCursor, err = paging.Finish(page.Rows, more, req.Measure, cursorKind, req.Filter.Key(),
		func(last Row) []string { return []string{last.ID} })
	if err != nil {
		return nil, err
	}
	return page, nil
}
