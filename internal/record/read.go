package record

import (
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// Snapshot is the record as of one commit of refs/ideate/record. Reads
// through one Snapshot are consistent with each other.
type Snapshot struct {
	s    *Store
	Tip  gitstore.Hash
	Root gitstore.Hash
}

// Snapshot reads the current tip.
func (s *Store) Snapshot() (*Snapshot, error) {
	tip, err := s.git.Ref(RefName)
	if err != nil {
		return nil, err
	}
	root, err := s.git.RootTree(tip, format)
	if err != nil {
		return nil, err
	}
	return &Snapshot{s: s, Tip: tip, Root: root}, nil
}

// Get returns the record with this id, or apperr.NotFound.
func (sn *Snapshot) Get(id string) (*Record, error) {
	if !ValidID(id) {
		return nil, apperr.New(apperr.Schema, "id %q is not a ULID", shown(id))
	}
	dirs, file := Path(id)
	e, ok, err := sn.s.git.Lookup(sn.Root, append(dirs, file))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.New(apperr.NotFound, "no record %s", id)
	}
	return sn.load(e.Hash)
}

// load reads and parses a record file, through the Store's cache of
// parsed records.
func (sn *Snapshot) load(blob gitstore.Hash) (*Record, error) {
	if r, ok := sn.s.recs.get(blob); ok {
		if r == nil {
			return nil, ErrUnparseable
		}
		return r, nil
	}
	data, err := sn.s.git.ReadBlob(blob)
	if err != nil {
		return nil, err
	}
	r, err := Parse(data)
	switch {
	case err == nil:
		sn.s.recs.put(blob, r)
	case err == ErrUnparseable:
		sn.s.recs.put(blob, nil)
	}
	return r, err
}

const depth = 6 // directory levels below the root, see Path

// Walk calls fn for each record newest first (id descending), starting
// strictly below before when it is non-empty. fn returns false to stop.
// Files that do not parse are skipped.
func (sn *Snapshot) Walk(before string, fn func(*Record) (bool, error)) error {
	_, err := sn.walkTree(sn.Root, "", 0, before, func(id string, blob gitstore.Hash) (bool, error) {
		r, err := sn.load(blob)
		if err != nil {
			if err == ErrUnparseable {
				return true, nil
			}
			return false, err
		}
		if r.ID != id {
			return true, nil // a file whose name and id disagree is not trusted
		}
		return fn(r)
	})
	return err
}

// WalkIDs is Walk without reading the records.
func (sn *Snapshot) WalkIDs(before string, fn func(id string, blob gitstore.Hash) (bool, error)) error {
	_, err := sn.walkTree(sn.Root, "", 0, before, fn)
	return err
}

func (sn *Snapshot) walkTree(tree gitstore.Hash, prefix string, level int, before string,
	fn func(string, gitstore.Hash) (bool, error)) (bool, error) {
	if tree == gitstore.ZeroHash {
		return true, nil
	}
	entries, err := sn.s.git.ReadTree(tree)
	if err != nil {
		return false, err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if level < depth {
			if !e.IsDir() {
				continue
			}
			p := prefix + e.Name
			if before != "" && len(before) >= len(p) && p > before[:len(p)] {
				continue // wholly newer than the boundary
			}
			more, err := sn.walkTree(e.Hash, p, level+1, before, fn)
			if err != nil || !more {
				return more, err
			}
			continue
		}
		id, ok := strings.CutSuffix(e.Name, ".md")
		if !ok || e.IsDir() || !ValidID(id) || !strings.HasPrefix(id, prefix) {
			continue
		}
		if before != "" && id >= before {
			continue
		}
		more, err := fn(id, e.Hash)
		if err != nil || !more {
			return more, err
		}
	}
	return true, nil
}

// Count returns the number of records.
func (sn *Snapshot) Count() (int, error) {
	n := 0
	err := sn.WalkIDs("", func(string, gitstore.Hash) (bool, error) { n++; return true, nil })
	return n, err
}

// Filter selects records. Scope is a case-insensitive substring matched
// against scope, kind, capture point, session id and task id; ID is exact.
// Both set means both must hold.
type Filter struct {
	Scope string
	ID    string
}

// Key is the canonical form of the filter that cursors are bound to.
func (f Filter) Key() string { return "scope=" + f.Scope + "\x00id=" + f.ID }

// Match reports whether r is selected.
func (f Filter) Match(r *Record) bool {
	if f.ID != "" && r.ID != f.ID {
		return false
	}
	if f.Scope == "" {
		return true
	}
	q := strings.ToLower(f.Scope)
	for _, v := range []string{r.Scope, r.Kind, r.Source.CapturePoint, r.Source.SessionID, r.Source.TaskID} {
		if strings.Contains(strings.ToLower(v), q) {
			return true
		}
	}
	return false
}

// Row is one record as a read shows it: every field, derived backlinks and
// the body length; the body itself only when asked for. Field order is the
// contract's.
type Row struct {
	ID                 string      `json:"id"`
	Kind               string      `json:"kind"`
	Claim              string      `json:"claim"`
	VerificationAnchor string      `json:"verification_anchor"`
	Scope              string      `json:"scope"`
	Source             Source      `json:"source"`
	References         []Reference `json:"references"`
	ReferencedBy       []Reference `json:"referenced_by"`
	ContentLength      int         `json:"content_length"`
	Content            *string     `json:"content,omitempty"`
}

// UTF16Len is the length of s in UTF-16 code units, the unit of
// content_length.
func UTF16Len(s string) int {
	n := 0
	for n < len(s) && s[n] < 0x80 { // ASCII: one unit a byte
		n++
	}
	for _, r := range s[n:] {
		// range yields U+FFFD for a byte that is not UTF-8, never a
		// surrogate, so a rune is one unit or, above the BMP, two.
		if r > 0xFFFF {
			n++
		}
		n++
	}
	return n
}

// NewRow projects a record.
func NewRow(r *Record, backlinks []Reference, withContent bool) Row {
	row := Row{
		ID: r.ID, Kind: r.Kind, Claim: r.Claim, VerificationAnchor: r.VerificationAnchor,
		Scope: r.Scope, Source: r.Source, References: r.References, ReferencedBy: backlinks,
		ContentLength: UTF16Len(r.Content),
	}
	if row.References == nil {
		row.References = []Reference{}
	}
	if row.ReferencedBy == nil {
		row.ReferencedBy = []Reference{}
	}
	if withContent {
		c := r.Content
		row.Content = &c
	}
	return row
}

// Select returns up to limit records matching f, newest first, strictly
// below before, and whether more matching records remain.
func (sn *Snapshot) Select(f Filter, before string, limit int) ([]*Record, bool, error) {
	if f.ID != "" {
		if before != "" && f.ID >= before {
			return nil, false, nil
		}
		r, err := sn.Get(f.ID)
		if apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.Schema) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if !f.Match(r) {
			return nil, false, nil
		}
		return []*Record{r}, false, nil
	}
	var out []*Record
	more := false
	err := sn.Walk(before, func(r *Record) (bool, error) {
		if !f.Match(r) {
			return true, nil
		}
		if len(out) == limit {
			more = true
			return false, nil
		}
		out = append(out, r)
		return true, nil
	})
	return out, more, err
}

// sortRefs orders backlinks newest referrer first (id descending), as
// records are read.
func sortRefs(refs []Reference) {
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].ID != refs[j].ID {
			return refs[i].ID > refs[j].ID
		}
		return refs[i].Rel < refs[j].Rel
	})
}

// HasRecord reports whether a record with this id exists at the current tip.
func (s *Store) HasRecord(id string) (bool, error) {
	sn, err := s.Snapshot()
	if err != nil {
		return false, err
	}
	return sn.s.exists(sn.Root, id)
}
