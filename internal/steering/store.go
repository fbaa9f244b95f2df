package steering

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// RefName is the one ref of the steering store.
const RefName = "refs/ideate/steering"

// FormatVersion is the tree layout this build writes and the newest it
// reads; it is the blob FormatFile at the root of every commit's tree.
const (
	FormatVersion = 1
	FormatFile    = "ideate-format"
	itemsDir      = "items"
	itemExt       = ".md"
)

// MaxStatement is the largest statement (in bytes) an item may carry, the
// same bound as a record's body.
const MaxStatement = 1 << 20

// Error codes of the steering store, beside apperr's shared ones.
const (
	// Gated is returned by every call of a store opened with enabled=false.
	Gated apperr.Code = "GATED"
)

// format is the version entry at the root of every steering tree; a tree
// without it (none yet) passes the check.
var format = gitstore.Format{File: FormatFile, Kind: "ideate-steering", Version: FormatVersion,
	Code: apperr.FormatVersion, What: "the steering store on " + RefName}

// Store is the steering store of one repository.
type Store struct {
	git     *gitstore.Store
	enabled bool

	// Now is the clock updated_at is stamped from.
	Now func() time.Time
	// Warn, when set, hears of item files a read skipped because they do
	// not parse; nil discards them.
	Warn func(msg string)
}

// Open returns the steering store over git. When enabled is false every
// call returns a Gated error before looking at its arguments, and nothing
// is read or written.
func Open(git *gitstore.Store, enabled bool) *Store {
	return &Store{git: git, enabled: enabled, Now: time.Now}
}

// Enabled reports whether the store was opened enabled.
func (s *Store) Enabled() bool { return s.enabled }

// Gate returns the Gated error when s is nil or not enabled, else nil. The
// CLI and the MCP server answer with this one error.
func (s *Store) Gate() error { return s.gate() }

func (s *Store) gate() error {
	if s == nil || !s.enabled {
		return apperr.New(Gated, "steering is gated off in this repository; set \"steering\": {\"enabled\": true} in .ideate.json (or git config ideate.steering true) to use it")
	}
	return nil
}

func itemPath(id string) []string { return []string{itemsDir, id + itemExt} }

// snapshot returns the root tree at the current tip (ZeroHash when the
// store is empty), after the format check.
func (s *Store) snapshot() (gitstore.Hash, error) {
	tip, err := s.git.Ref(RefName)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return s.git.RootTree(tip, format)
}

// load returns the item id in tree root, nil when there is none. A file
// that does not parse is an error here: a writer must never build on it.
func (s *Store) load(root gitstore.Hash, id string) (*Item, error) {
	if root == gitstore.ZeroHash {
		return nil, nil
	}
	e, ok, err := s.git.Lookup(root, itemPath(id))
	if err != nil || !ok {
		return nil, err
	}
	data, err := s.git.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	it, err := Parse(data)
	if err != nil || it.ID != id {
		return nil, apperr.Wrap(apperr.Internal, ErrUnparseable, "steering item file %s/%s%s does not parse", itemsDir, id, itemExt)
	}
	return it, nil
}

// Get returns the item id with its history, or nil when it does not exist.
func (s *Store) Get(id string) (*Item, error) {
	if err := s.gate(); err != nil {
		return nil, err
	}
	if !ValidID(id) {
		return nil, badID("id", id)
	}
	root, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	return s.load(root, id)
}

// PutInput is what a caller supplies to Put.
//
// Domain is a pointer so that "keep the prior domain" (nil) differs from
// "clear it" (pointer to ""); a new item's domain defaults to "". Status
// "" means unset: keep the prior status, or active for a new item.
// Supersedes "" and References nil mean "keep the prior edges"; when
// either is given the edge list becomes the supersedes edge (first) plus
// References, so a non-nil empty References with no Supersedes clears the
// edges. Actor, when set, is recorded as the commit's Ideate-Actor
// trailer.
type PutInput struct {
	ID         string
	Kind       string
	Statement  string
	Domain     *string
	Status     string
	Supersedes string
	References []Reference
	Actor      string
	// KeepPrior lets Kind or Statement be empty when amending: the empty
	// one keeps the prior version's value (a status change alone). A new
	// item still needs both.
	KeepPrior bool
}

// PutResult is the outcome of a successful Put.
type PutResult struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Amended bool   `json:"amended"`

	// Item is the item as written (after the secret gate).
	Item *Item `json:"-"`
	// Commit is the commit that wrote it.
	Commit gitstore.Hash `json:"-"`
}

func badID(field, id string) error {
	return apperr.New(apperr.Schema, "%s %s is not a steering id ([A-Za-z0-9][A-Za-z0-9._-]*, at most %d characters)",
		field, show(id), MaxIDLen)
}

// show quotes a caller's value for an error sentence: redacted, then
// shortened, so that no sentence carries a secret.
func show(v string) string {
	v, _ = secretgate.Scan(clean(v))
	return strconv.Quote(textfmt.Fit(v, 40))
}

func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// prepared is a validated, gated put: everything but what depends on the
// prior item.
type prepared struct {
	id, kind, statement, status, actor string
	domain                             *string
	refs                               []Reference // nil: keep the prior edges
}

// prepare validates in and passes every free-text field through the
// secret gate. It touches no git object.
func prepare(in PutInput) (*prepared, error) {
	if red, _ := secretgate.Scan(in.ID); red != in.ID {
		// An id the gate would change names no item anyone meant; it is
		// refused rather than redacted.
		return nil, apperr.New(apperr.Schema, "id looks like a secret; choose another id")
	}
	if !ValidID(in.ID) {
		return nil, badID("id", in.ID)
	}
	p := &prepared{id: in.ID, kind: clean(in.Kind), statement: clean(in.Statement), status: in.Status, actor: clean(in.Actor)}
	if strings.TrimSpace(p.kind) == "" {
		if !in.KeepPrior || p.kind != "" {
			return nil, apperr.New(apperr.Schema, "kind must not be empty")
		}
	}
	if err := gitstore.CheckLabel("kind", p.kind); err != nil {
		return nil, err
	}
	if err := gitstore.CheckLabel("actor", p.actor); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.statement) == "" {
		if !in.KeepPrior || p.statement != "" {
			return nil, apperr.New(apperr.Schema, "statement must contain non-whitespace text")
		}
	}
	if len(p.statement) > MaxStatement {
		return nil, apperr.New(apperr.Schema, "statement is %d bytes; at most %d are allowed", len(p.statement), MaxStatement)
	}
	if p.status != "" && !ValidStatus(p.status) {
		return nil, apperr.New(apperr.Schema, "status %s is not one of active, deprecated, superseded", show(p.status))
	}
	if in.Domain != nil {
		d := clean(*in.Domain)
		p.domain = &d
	}
	if in.Supersedes != "" || in.References != nil {
		refs := make([]Reference, 0, len(in.References)+1)
		if in.Supersedes != "" {
			refs = append(refs, Reference{Rel: "supersedes", ID: in.Supersedes})
		}
		for _, r := range in.References {
			refs = append(refs, Reference{Rel: clean(r.Rel), ID: r.ID})
		}
		p.refs = refs
	}
	// The gate runs before any object exists. An edge id the gate changes
	// is no longer a stem, so it is refused below as a bad id.
	secretgate.Fields(&p.kind, &p.statement, &p.actor)
	if p.domain != nil {
		secretgate.Fields(p.domain)
	}
	seen := map[Reference]bool{}
	out := p.refs[:0]
	for _, r := range p.refs {
		secretgate.Fields(&r.Rel, &r.ID)
		if strings.TrimSpace(r.Rel) == "" {
			return nil, apperr.New(apperr.Schema, "a reference's rel must not be empty")
		}
		if err := gitstore.CheckLabel("a reference's rel", r.Rel); err != nil {
			return nil, err
		}
		if !ValidID(r.ID) {
			return nil, badID("reference id", r.ID)
		}
		if r.ID == p.id {
			return nil, apperr.New(apperr.Schema, "item %s cannot reference itself", p.id)
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	if p.refs != nil {
		p.refs = out
	}
	return p, nil
}

// Put creates or amends one item and commits it on refs/ideate/steering.
// The new item is computed from the tip the commit lands on, so two puts
// racing on the same id both land, one amending the other. Nothing is
// written when it returns an error. ctx bounds the wait for the ref (see
// gitstore.Transact).
func (s *Store) Put(ctx context.Context, in PutInput) (*PutResult, error) {
	if err := s.gate(); err != nil {
		return nil, err
	}
	p, err := prepare(in)
	if err != nil {
		return nil, err
	}
	var res *PutResult
	commit, err := s.git.Transact(ctx, RefName, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		root, err := s.git.RootTree(tip, format)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		prior, err := s.load(root, p.id)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		it, err := s.next(root, prior, p)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		blob, err := s.git.WriteBlob(Marshal(it))
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		root, err = s.git.InsertWithRootFile(root, []string{itemsDir}, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: p.id + itemExt, Hash: blob}, true, format.File, format.Blob())
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		res = &PutResult{ID: it.ID, Status: it.Status, Amended: prior != nil, Item: it}
		return root, commitMessage(it, p.actor), nil
	})
	if err != nil {
		return nil, err
	}
	res.Commit = commit
	return res, nil
}

// next builds the item p writes over prior (nil when new) in tree root,
// checking that every new edge names an existing, readable item.
func (s *Store) next(root gitstore.Hash, prior *Item, p *prepared) (*Item, error) {
	it := &Item{ID: p.id, Kind: p.kind, Status: StatusActive, UpdatedAt: textfmt.Timestamp(s.Now()),
		Statement: p.statement, History: []Amendment{}, References: []Reference{}}
	if prior == nil && (p.kind == "" || p.statement == "") {
		return nil, apperr.New(apperr.Schema, "item %s is new: it needs a kind and a statement", p.id)
	}
	if prior != nil && p.kind == "" {
		it.Kind = prior.Kind
	}
	if prior != nil && p.statement == "" {
		it.Statement = prior.Statement
	}
	if prior != nil {
		it.Domain, it.Status, it.References = prior.Domain, prior.Status, prior.References
		it.History = make([]Amendment, 0, len(prior.History)+1)
		it.History = append(it.History, Amendment{At: prior.UpdatedAt, Status: prior.Status, Statement: prior.Statement})
		it.History = append(it.History, prior.History...)
	}
	if p.domain != nil {
		it.Domain = *p.domain
	}
	if p.status != "" {
		it.Status = p.status
	}
	if p.refs != nil {
		var missing []string
		for _, r := range p.refs {
			target, err := s.load(root, r.ID)
			if errors.Is(err, ErrUnparseable) {
				target, err = nil, nil // unreadable: not a target
			}
			if err != nil {
				return nil, err
			}
			if target == nil {
				missing = append(missing, r.ID)
			}
		}
		if len(missing) > 0 {
			return nil, apperr.New(apperr.DanglingSupersedes, "reference target %s names no steering item", strings.Join(missing, ", "))
		}
		it.References = append([]Reference{}, p.refs...)
	}
	it.normalize()
	return it, nil
}

// commitMessage is "<kind> <id>: <first line of the statement>", then the
// trailers naming the item, its status and, when given, the actor.
func commitMessage(it *Item, actor string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s\n\n", textfmt.Fit(gitstore.MessageLine(it.Kind), 40), it.ID, textfmt.Fit(gitstore.MessageLine(textfmt.FirstLine(it.Statement)), 72))
	fmt.Fprintf(&b, "Ideate-Steering: %s\nIdeate-Status: %s\n", it.ID, it.Status)
	if a := gitstore.MessageLine(actor); a != "" {
		fmt.Fprintf(&b, "Ideate-Actor: %s\n", textfmt.Fit(a, 200))
	}
	return b.String()
}
