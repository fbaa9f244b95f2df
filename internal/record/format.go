package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/ideate/git-ideate/internal/jsstr"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// Source says where a record was captured.
type Source struct {
	CapturePoint string `json:"capture_point"`
	SessionID    string `json:"session_id"`
	TaskID       string `json:"task_id,omitempty"`
	Timestamp    string `json:"timestamp"`
}

// Reference is a typed forward edge to another record (or board item).
type Reference struct {
	Rel string `json:"rel"`
	ID  string `json:"id"`
}

// Record is one entry of the process record. It is never edited: a
// correction is a new record with a "supersedes" reference.
type Record struct {
	ID                 string      `json:"id"`
	Kind               string      `json:"kind"`
	Claim              string      `json:"claim"`
	VerificationAnchor string      `json:"verification_anchor"`
	Scope              string      `json:"scope"`
	Source             Source      `json:"source"`
	References         []Reference `json:"references"`
	Content            string      `json:"content"`
}

// ErrUnparseable is returned by Parse for a file that is not a record.
var ErrUnparseable = errors.New("not a record file")

// quote encodes s as JavaScript's JSON.stringify does (see jsstr).
func quote(s string) string { return jsstr.Quote(s) }

// Marshal renders r as its Markdown file: a front matter of JSON-string
// scalars, one blank line, the body and exactly one trailing newline.
func Marshal(r *Record) []byte {
	var b strings.Builder
	b.Grow(256 + len(r.Content))
	b.WriteString("---\n")
	b.WriteString("id: " + quote(r.ID) + "\n")
	b.WriteString("kind: " + quote(r.Kind) + "\n")
	b.WriteString("claim: " + quote(r.Claim) + "\n")
	b.WriteString("verification_anchor: " + quote(r.VerificationAnchor) + "\n")
	b.WriteString("scope: " + quote(r.Scope) + "\n")
	if len(r.References) > 0 {
		b.WriteString("references: " + quote(refsJSON(r.References)) + "\n")
	}
	b.WriteString("source:\n")
	b.WriteString("  capture_point: " + quote(r.Source.CapturePoint) + "\n")
	b.WriteString("  session_id: " + quote(r.Source.SessionID) + "\n")
	if r.Source.TaskID != "" {
		b.WriteString("  task_id: " + quote(r.Source.TaskID) + "\n")
	}
	b.WriteString("  timestamp: " + quote(r.Source.Timestamp) + "\n")
	b.WriteString("---\n\n")
	b.WriteString(r.Content)
	b.WriteString("\n")
	return []byte(b.String())
}

func refsJSON(refs []Reference) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, ref := range refs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"rel":` + quote(ref.Rel) + `,"id":` + quote(ref.ID) + `}`)
	}
	b.WriteByte(']')
	return b.String()
}

func unquote(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	// Most values hold no escape: the text between the quotes is the value
	// (the file was checked to be UTF-8 already).
	if inner := v[1 : len(v)-1]; v[len(v)-1] == '"' && !strings.ContainsAny(inner, "\\\"") && !hasControl(inner) {
		return inner, true
	}
	var s string
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return "", false
	}
	return s, true
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// Parse reads a record file. Unknown front-matter keys are ignored; a file
// without the front matter, an id, or any of the contract fields is
// ErrUnparseable.
func Parse(data []byte) (*Record, error) {
	front, body, ok := textfmt.SplitFrontMatter(data)
	if !ok {
		return nil, ErrUnparseable
	}
	r := &Record{}
	seen := map[string]bool{}
	inSource := false
	for _, line := range strings.Split(front, "\n") {
		if line == "" {
			continue
		}
		indented := strings.HasPrefix(line, "  ")
		key, val, found := strings.Cut(strings.TrimLeft(line, " "), ":")
		if !found {
			return nil, ErrUnparseable
		}
		if !indented {
			inSource = key == "source"
			if inSource {
				if strings.TrimSpace(val) != "" {
					return nil, ErrUnparseable
				}
				seen["source"] = true
				continue
			}
		} else if !inSource {
			continue // nested value of an unknown key
		}
		str, isStr := unquote(val)
		field := key
		if indented {
			field = "source." + key
		}
		switch field {
		case "id", "kind", "claim", "verification_anchor", "scope",
			"source.capture_point", "source.session_id", "source.task_id", "source.timestamp", "references":
			if !isStr {
				return nil, ErrUnparseable
			}
			seen[field] = true
		default:
			continue // unknown keys are kept out of the struct and ignored
		}
		switch field {
		case "id":
			r.ID = str
		case "kind":
			r.Kind = str
		case "claim":
			r.Claim = str
		case "verification_anchor":
			r.VerificationAnchor = str
		case "scope":
			r.Scope = str
		case "source.capture_point":
			r.Source.CapturePoint = str
		case "source.session_id":
			r.Source.SessionID = str
		case "source.task_id":
			r.Source.TaskID = str
		case "source.timestamp":
			r.Source.Timestamp = str
		case "references":
			var refs []Reference
			dec := json.NewDecoder(bytes.NewReader([]byte(str)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&refs); err != nil {
				return nil, ErrUnparseable
			}
			if len(refs) > 0 { // "[]" and no line at all mean the same
				r.References = refs
			}
		}
	}
	for _, f := range []string{"id", "kind", "claim", "verification_anchor", "scope", "source",
		"source.capture_point", "source.session_id", "source.timestamp"} {
		if !seen[f] {
			return nil, ErrUnparseable
		}
	}
	// Exactly one blank line, then the body and one trailing newline.
	body, ok = strings.CutPrefix(body, "\n")
	if !ok {
		return nil, ErrUnparseable
	}
	r.Content = strings.TrimSuffix(body, "\n")
	return r, nil
}
