package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// RefName is the ref whose commit chain is the process record.
const RefName = "refs/ideate/record"

// FormatVersion is the version of the record tree layout this build writes
// and the newest it reads. It is stored in the tree as the blob FormatFile.
const (
	FormatVersion = 1
	FormatFile    = "ideate-format"
)

// MaxContent is the largest body a record may carry.
const MaxContent = 1 << 20

// Error codes of the record store, beside apperr's shared ones.
const (
	Duplicate apperr.Code = "DUPLICATE_ID"
)

// Observer receives capture signals (telemetry). All methods must be cheap
// and must not fail the caller.
type Observer interface {
	Captured(point, session string)
	CaptureFailed(point, session, reason string)
	Redacted(pattern string, count int, session string)
}

// Store is the process record of one repository.
type Store struct {
	git *gitstore.Store
	ids *IDSource

	// Now is the clock (UTC ISO timestamps come from it).
	Now func() time.Time
	// Observer, when set, is told of captures, failures and redactions.
	Observer Observer
	// Resolve, when set, reports whether an id that is not a record names
	// something else (a board item); it serves id-lint and references.
	Resolve func(id string) (bool, error)

	edges edgeState // backlinks of the newest root read (edges.go)
	recs  recCache  // parsed records by blob (reccache.go)
}

// Open returns the record store of the repository git opened.
func Open(git *gitstore.Store) *Store {
	return &Store{git: git, ids: NewIDSource(), Now: time.Now}
}

// Git returns the underlying git store.
func (s *Store) Git() *gitstore.Store { return s.git }

// AppendInput is what a caller supplies to Append. ID and Source.Timestamp
// are minted when empty; Supersedes adds a "supersedes" reference.
type AppendInput struct {
	ID                 string
	Kind               string
	Claim              string
	VerificationAnchor string
	Scope              string
	Source             Source
	References         []Reference
	Supersedes         string
	Content            string
}

// Unresolved is an id cited in prose that names nothing in the record or
// the board (id-lint, warn only).
type Unresolved struct {
	ID         string `json:"id"`
	Resolution string `json:"resolution"` // "unresolved" or "unknown" (the lookup failed)
}

// AppendResult is the outcome of a successful append.
type AppendResult struct {
	Record     *Record
	Commit     gitstore.Hash
	Path       string
	Redactions []secretgate.Redaction
	Unresolved []Unresolved
}

func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// Append validates in, passes every text field through the secret gate,
// and commits the record on refs/ideate/record. Nothing is written when it
// returns an error. ctx bounds the wait for the ref (see
// gitstore.Transact); a cancelled Append returns ctx.Err() and writes no
// record.
func (s *Store) Append(ctx context.Context, in AppendInput) (res *AppendResult, err error) {
	defer s.failed(in, &err)
	w, err := s.compose(in)
	if err != nil {
		return nil, err
	}
	commit, err := s.git.Transact(ctx, RefName, w.build)
	if err != nil {
		return nil, err
	}
	return s.appended(w, commit), nil
}

// failed tells the observer an append failed.
func (s *Store) failed(in AppendInput, err *error) {
	if *err != nil && s.Observer != nil {
		s.Observer.CaptureFailed(in.Source.CapturePoint, in.Source.SessionID, apperr.Message(*err))
	}
}

// write is one record on its way into a commit: validated, through the
// secret gate, serialized.
type write struct {
	s          *Store
	rec        *Record
	data       []byte
	dirs       []string
	file       string
	red        []secretgate.Redaction
	blob       gitstore.Hash
	unresolved []Unresolved
}

func (s *Store) compose(in AppendInput) (*write, error) {
	rec, err := s.prepare(in)
	if err != nil {
		return nil, err
	}
	red := secretgate.Fields(&rec.Kind, &rec.Claim, &rec.VerificationAnchor, &rec.Scope,
		&rec.Source.CapturePoint, &rec.Source.SessionID, &rec.Source.TaskID, &rec.Source.Timestamp, &rec.Content)
	for i := range rec.References {
		red = secretgate.Merge(red, secretgate.Fields(&rec.References[i].Rel, &rec.References[i].ID))
	}
	// The gate ran before any object exists; now write.
	dirs, file := Path(rec.ID)
	return &write{s: s, rec: rec, data: Marshal(rec), dirs: dirs, file: file, red: red}, nil
}

// build is the record's tree on tip (a gitstore.BuildFunc).
func (w *write) build(tip gitstore.Hash) (gitstore.Hash, string, error) {
	s := w.s
	root, err := s.git.RootTree(tip, format)
	if err != nil {
		return gitstore.ZeroHash, "", err
	}
	if err := s.checkReferences(root, w.rec); err != nil {
		return gitstore.ZeroHash, "", err
	}
	w.unresolved = s.lint(root, w.rec)
	if w.blob, err = s.git.WriteBlob(w.data); err != nil {
		return gitstore.ZeroHash, "", err
	}
	newRoot, err := s.git.InsertWithRootFile(root, w.dirs, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: w.file, Hash: w.blob}, false, format.File, format.Blob())
	if err != nil {
		if apperr.Is(err, apperr.Conflict) {
			return gitstore.ZeroHash, "", apperr.New(Duplicate, "record %s already exists; records are never rewritten", w.rec.ID)
		}
		return gitstore.ZeroHash, "", err
	}
	return newRoot, CommitMessage(w.rec), nil
}

// appended is what a write that landed as commit leaves behind.
func (s *Store) appended(w *write, commit gitstore.Hash) *AppendResult {
	// The next page read shows this record: parse it now, as a read would,
	// so that read neither inflates it nor opens the pack just written.
	if r, err := Parse(w.data); err == nil {
		s.recs.put(w.blob, r)
	}
	rec := w.rec
	if s.Observer != nil {
		s.Observer.Captured(rec.Source.CapturePoint, rec.Source.SessionID)
		for _, r := range w.red {
			s.Observer.Redacted(r.Rule, r.Count, rec.Source.SessionID)
		}
	}
	return &AppendResult{Record: rec, Commit: commit, Path: strings.Join(w.dirs, "/") + "/" + w.file,
		Redactions: w.red, Unresolved: w.unresolved}
}

// Staged is a record built as a commit on the record's tip but not yet
// published: see Stage.
type Staged struct {
	in          AppendInput
	w           *write
	tip, commit gitstore.Hash
}

// Stage builds the record in as a commit on the record's current tip
// without moving the ref, so its objects can go to disk with another
// transaction's (inside gitstore.Store.Together, one pack for both); Publish
// then moves the ref. A board completion stages its work-completion record
// inside the item's own transaction: two commits, one pack.
func (s *Store) Stage(in AppendInput) (*Staged, error) {
	w, err := s.compose(in)
	if err != nil {
		return nil, err
	}
	tip, err := s.git.Ref(RefName)
	if err != nil {
		return nil, err
	}
	tree, msg, err := w.build(tip)
	if err != nil {
		return nil, err
	}
	commit, err := s.git.CommitTree(tree, tip, msg)
	if err != nil {
		return nil, err
	}
	// An append afresh (see Publish) keeps the record's id and time.
	in.ID, in.Source.Timestamp = w.rec.ID, w.rec.Source.Timestamp
	return &Staged{in: in, w: w, tip: tip, commit: commit}, nil
}

// Publish moves the record ref to st's commit when it still names the tip
// st was built on; when another append moved it meanwhile, the record is
// appended afresh (Append, with the same id).
func (s *Store) Publish(ctx context.Context, st *Staged) (res *AppendResult, err error) {
	err = s.git.UpdateRef(ctx, RefName, st.commit, st.tip)
	if errors.Is(err, gitstore.ErrStale) {
		return s.Append(ctx, st.in)
	}
	defer s.failed(st.in, &err)
	if err != nil {
		return nil, err
	}
	return s.appended(st.w, st.commit), nil
}

func (s *Store) prepare(in AppendInput) (*Record, error) {
	rec := &Record{
		ID:                 strings.TrimSpace(in.ID),
		Kind:               clean(strings.TrimSpace(in.Kind)),
		Claim:              clean(in.Claim),
		VerificationAnchor: clean(in.VerificationAnchor),
		Scope:              clean(in.Scope),
		Source: Source{
			CapturePoint: clean(in.Source.CapturePoint),
			SessionID:    clean(in.Source.SessionID),
			TaskID:       clean(in.Source.TaskID),
			Timestamp:    strings.TrimSpace(in.Source.Timestamp),
		},
		Content: clean(in.Content),
	}
	if rec.Kind == "" {
		return nil, apperr.New(apperr.Schema, "kind is required")
	}
	for _, l := range []struct{ field, v string }{{"kind", rec.Kind}, {"source capture_point", rec.Source.CapturePoint},
		{"source session_id", rec.Source.SessionID}, {"source task_id", rec.Source.TaskID}} {
		if err := gitstore.CheckLabel(l.field, l.v); err != nil {
			return nil, err
		}
	}
	if len(rec.Content) > MaxContent {
		return nil, apperr.New(apperr.Schema, "content is %d bytes; a record body may be at most %d", len(rec.Content), MaxContent)
	}
	now := s.Now()
	if rec.ID == "" {
		rec.ID = s.ids.New(now)
	} else if !ValidID(rec.ID) {
		return nil, apperr.New(apperr.Schema, "id %q is not a ULID", shown(rec.ID))
	}
	if rec.Source.Timestamp == "" {
		rec.Source.Timestamp = textfmt.Timestamp(now)
	} else if _, err := time.Parse(time.RFC3339Nano, rec.Source.Timestamp); err != nil {
		return nil, apperr.New(apperr.Schema, "source timestamp %q is not an RFC 3339 instant", shown(rec.Source.Timestamp))
	}
	refs := in.References
	if sup := strings.TrimSpace(in.Supersedes); sup != "" {
		refs = append([]Reference{{Rel: "supersedes", ID: sup}}, refs...)
	}
	seen := map[Reference]bool{}
	for _, r := range refs {
		r.Rel, r.ID = clean(strings.TrimSpace(r.Rel)), strings.TrimSpace(r.ID)
		if r.Rel == "" {
			return nil, apperr.New(apperr.Schema, "a reference needs a rel")
		}
		if err := gitstore.CheckLabel("a reference's rel", r.Rel); err != nil {
			return nil, err
		}
		if !ValidID(r.ID) {
			return nil, apperr.New(apperr.Schema, "reference id %q is not a ULID", shown(r.ID))
		}
		if r.ID == rec.ID {
			return nil, apperr.New(apperr.Schema, "a record cannot reference itself")
		}
		if !seen[r] {
			seen[r] = true
			rec.References = append(rec.References, r)
		}
	}
	return rec, nil
}

// shown is a refused value as an error message may echo it: through the
// secret gate (an error is printed and logged where no redaction happens),
// then cut to 40 characters.
func shown(v string) string {
	v, _ = secretgate.Scan(textfmt.Head(v, 400)) // a secret crossing the cut at 40 is whole here
	return textfmt.Head(v, 40)
}

// CommitMessage makes `git log refs/ideate/record` readable: the kind and
// claim as the subject, and the id as a trailer.
func CommitMessage(r *Record) string {
	subj := gitstore.MessageLine(r.Kind)
	if claim := gitstore.MessageLine(r.Claim); claim != "" { // a claim may be empty
		subj += ": " + textfmt.Head(claim, 72)
	}
	return fmt.Sprintf("%s\n\nIdeate-Record: %s\n", subj, r.ID)
}

// format is the version entry at the root of every record tree.
var format = gitstore.Format{File: FormatFile, Kind: "ideate-record", Version: FormatVersion,
	Code: apperr.FormatVersion, What: "the record on " + RefName}

// exists reports whether a record with this id is in the tree root.
func (s *Store) exists(root gitstore.Hash, id string) (bool, error) {
	if root == gitstore.ZeroHash || !ValidID(id) {
		return false, nil
	}
	dirs, file := Path(id)
	_, ok, err := s.git.Lookup(root, append(dirs, file))
	return ok, err
}

func (s *Store) checkReferences(root gitstore.Hash, rec *Record) error {
	for _, r := range rec.References {
		ok, err := s.exists(root, r.ID)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if r.Rel == "supersedes" {
			return apperr.New(apperr.DanglingSupersedes, "supersedes names %s, which is not a record", r.ID)
		}
		if s.Resolve != nil {
			if found, err := s.Resolve(r.ID); err != nil {
				return err
			} else if found {
				continue
			}
		}
		return apperr.New(apperr.DanglingSupersedes, "reference %s → %s names no record or board item", r.Rel, r.ID)
	}
	return nil
}

// lint returns the ULID-shaped tokens in the record's prose that resolve
// to nothing.
func (s *Store) lint(root gitstore.Hash, rec *Record) []Unresolved {
	var out []Unresolved
	seen := map[string]bool{rec.ID: true}
	for _, text := range []string{rec.Claim, rec.VerificationAnchor, rec.Scope, rec.Content, rec.Source.TaskID} {
		for _, id := range FindIDs(text) {
			if seen[id] {
				continue
			}
			seen[id] = true
			ok, err := s.exists(root, id)
			if err == nil && !ok && s.Resolve != nil {
				ok, err = s.Resolve(id)
			}
			switch {
			case err != nil:
				out = append(out, Unresolved{ID: id, Resolution: "unknown"})
			case !ok:
				out = append(out, Unresolved{ID: id, Resolution: "unresolved"})
			}
		}
	}
	return out
}

// FindIDs returns the ULID-shaped tokens of text: 26 characters of [0-9A-Z]
// with no letter or digit on either side, that are valid ULIDs.
func FindIDs(text string) []string {
	var out []string
	isAlnum := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	for i := 0; i+26 <= len(text); i++ {
		if i > 0 && isAlnum(text[i-1]) {
			continue
		}
		j := i
		for j < len(text) && j-i <= 26 && (text[j] >= '0' && text[j] <= '9' || text[j] >= 'A' && text[j] <= 'Z') {
			j++
		}
		if j-i == 26 && (j == len(text) || !isAlnum(text[j])) && ValidID(text[i:j]) {
			out = append(out, text[i:j])
			i = j
		}
	}
	return out
}

// ParseReferences decodes typed edges given as a JSON array of
// {"rel","id"} objects (how both the CLI and the MCP tools take them);
// blank means none. Anything else is apperr.Schema.
func ParseReferences(s string) ([]Reference, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var refs []Reference
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&refs); err != nil || dec.More() {
		return nil, apperr.New(apperr.Schema, `references must be a JSON array of {"rel","id"} objects`)
	}
	return refs, nil
}
