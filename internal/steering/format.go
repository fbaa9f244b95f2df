package steering

import (
	"encoding/json"
	"errors"
	"github.com/ideate/git-ideate/internal/jsstr"
	"github.com/ideate/git-ideate/internal/textfmt"
	"strings"
)

// Statuses of a steering item. There is no delete: an item leaves service
// by becoming deprecated or superseded.
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusSuperseded = "superseded"
)

// ValidStatus reports whether s is one of the three statuses.
func ValidStatus(s string) bool {
	return s == StatusActive || s == StatusDeprecated || s == StatusSuperseded
}

// MaxIDLen is the longest id an item may have.
const MaxIDLen = 128

// ValidID reports whether id is a steering id: a stem matching
// [A-Za-z0-9][A-Za-z0-9._-]* of at most MaxIDLen characters.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// Reference is a typed forward edge to another steering item. The
// vocabulary of Rel is open; "supersedes" is the one the store names.
type Reference struct {
	Rel string `json:"rel"`
	ID  string `json:"id"`
}

// Amendment is one prior version of an item: the updated_at it carried
// (At), its status and its statement.
type Amendment struct {
	At        string `json:"at"`
	Status    string `json:"status"`
	Statement string `json:"statement"`
}

// Item is one steering item. The JSON field order is the order the
// reference implementation emits.
type Item struct {
	ID         string      `json:"id"`
	Kind       string      `json:"kind"`
	Domain     string      `json:"domain"`
	Status     string      `json:"status"`
	UpdatedAt  string      `json:"updated_at"`
	Statement  string      `json:"statement"`
	History    []Amendment `json:"history"`
	References []Reference `json:"references"`
}

func (it *Item) normalize() {
	if it.History == nil {
		it.History = []Amendment{}
	}
	if it.References == nil {
		it.References = []Reference{}
	}
}

// ErrUnparseable is returned by Parse for bytes that are not an item file.
var ErrUnparseable = errors.New("not a steering item file")

// quote appends s as JavaScript's JSON.stringify writes it (see jsstr).
func quote(b *strings.Builder, s string) { jsstr.Write(b, s) }

func line(b *strings.Builder, key, value string) {
	b.WriteString(key)
	b.WriteString(": ")
	quote(b, value)
	b.WriteByte('\n')
}

// Marshal renders it as its file: a front matter of one JSON value per
// line (id, kind, domain, status, updated_at, history, references), the
// closing fence, one blank line, the statement verbatim and one newline.
// The bytes equal what the reference implementation writes for the same
// item.
func Marshal(it *Item) []byte {
	var b strings.Builder
	b.Grow(256 + 2*len(it.Statement))
	b.WriteString("---\n")
	line(&b, "id", it.ID)
	line(&b, "kind", it.Kind)
	line(&b, "domain", it.Domain)
	line(&b, "status", it.Status)
	line(&b, "updated_at", it.UpdatedAt)
	b.WriteString("history: [")
	for i, h := range it.History {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"at":`)
		quote(&b, h.At)
		b.WriteString(`,"status":`)
		quote(&b, h.Status)
		b.WriteString(`,"statement":`)
		quote(&b, h.Statement)
		b.WriteByte('}')
	}
	b.WriteString("]\nreferences: [")
	for i, r := range it.References {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"rel":`)
		quote(&b, r.Rel)
		b.WriteString(`,"id":`)
		quote(&b, r.ID)
		b.WriteByte('}')
	}
	b.WriteString("]\n---\n\n")
	b.WriteString(it.Statement)
	b.WriteByte('\n')
	return []byte(b.String())
}

// amendmentWire and referenceWire tell a missing member from an empty one.
type amendmentWire struct {
	At        *string `json:"at"`
	Status    *string `json:"status"`
	Statement *string `json:"statement"`
}

type referenceWire struct {
	Rel *string `json:"rel"`
	ID  *string `json:"id"`
}

// Parse reads an item file. Unknown front-matter keys are ignored, and a
// missing history or references reads as empty. A file without the front
// matter, with a line that is not `key: <JSON>`, with a required field
// missing or of the wrong type, with an invalid id or status, or with an
// edge whose rel or id is empty is ErrUnparseable.
func Parse(data []byte) (*Item, error) {
	// Front-matter values are JSON, so none holds a raw newline: the first
	// "\n---\n" is the closing fence, whatever the statement contains.
	front, body, ok := textfmt.SplitFrontMatter(data)
	if !ok {
		return nil, ErrUnparseable
	}
	it := &Item{}
	seen := map[string]bool{}
	for _, ln := range strings.Split(front, "\n") {
		if strings.TrimSpace(ln) == "" {
			continue
		}
		key, val, found := strings.Cut(ln, ": ")
		if !found {
			return nil, ErrUnparseable
		}
		var dst *string
		switch key {
		case "id":
			dst = &it.ID
		case "kind":
			dst = &it.Kind
		case "domain":
			dst = &it.Domain
		case "status":
			dst = &it.Status
		case "updated_at":
			dst = &it.UpdatedAt
		case "history":
			var hs []amendmentWire
			if json.Unmarshal([]byte(val), &hs) != nil || hs == nil {
				return nil, ErrUnparseable
			}
			it.History = make([]Amendment, 0, len(hs))
			for _, h := range hs {
				if h.At == nil || h.Status == nil || h.Statement == nil || !ValidStatus(*h.Status) {
					return nil, ErrUnparseable
				}
				it.History = append(it.History, Amendment{At: *h.At, Status: *h.Status, Statement: *h.Statement})
			}
			seen[key] = true
			continue
		case "references":
			var rs []referenceWire
			if json.Unmarshal([]byte(val), &rs) != nil || rs == nil {
				return nil, ErrUnparseable
			}
			it.References = make([]Reference, 0, len(rs))
			for _, r := range rs {
				if r.Rel == nil || r.ID == nil || *r.Rel == "" || *r.ID == "" {
					return nil, ErrUnparseable
				}
				it.References = append(it.References, Reference{Rel: *r.Rel, ID: *r.ID})
			}
			seen[key] = true
			continue
		default:
			if json.Valid([]byte(val)) {
				continue // an unknown key: ignored
			}
			return nil, ErrUnparseable
		}
		if json.Unmarshal([]byte(val), dst) != nil || !strings.HasPrefix(strings.TrimSpace(val), `"`) {
			return nil, ErrUnparseable
		}
		seen[key] = true
	}
	for _, k := range []string{"id", "kind", "domain", "status", "updated_at"} {
		if !seen[k] {
			return nil, ErrUnparseable
		}
	}
	if !ValidID(it.ID) || !ValidStatus(it.Status) {
		return nil, ErrUnparseable
	}
	// Exactly one blank line after the fence and one trailing newline are
	// framing; everything between is the statement, verbatim.
	body = strings.TrimPrefix(body, "\n")
	it.Statement = strings.TrimSuffix(body, "\n")
	it.normalize()
	return it, nil
}
