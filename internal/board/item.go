package board

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Statuses. "blocked" is not a status: it is derived (see Claimable).
const (
	StatusOpen       = "open"
	StatusInProgress = "in_progress"
	StatusDone       = "done"
	StatusCancelled  = "cancelled"
)

// ValidStatus reports whether s is one of the four statuses.
func ValidStatus(s string) bool {
	return s == StatusOpen || s == StatusInProgress || s == StatusDone || s == StatusCancelled
}

// Transitions recorded as events.
const (
	TCreate         = "create"
	TClaim          = "claim"
	TRenew          = "renew"
	TRelease        = "release"
	TComplete       = "complete"
	TCancel         = "cancel"
	TReopen         = "reopen"
	TOrphanRecovery = "orphan-recovery"
	TUpdateMeta     = "update-meta"
)

// Error codes of the board (the contract's, plus INVALID_TRANSITION's
// siblings shared through apperr).
const (
	SchemaVersion      apperr.Code = "SCHEMA_VERSION"
	VersionConflict    apperr.Code = "VERSION_CONFLICT"
	InvalidLease       apperr.Code = "INVALID_LEASE"
	NotClaimable       apperr.Code = "NOT_CLAIMABLE"
	InvalidClaim       apperr.Code = "INVALID_CLAIM"
	InvalidTransition  apperr.Code = "INVALID_TRANSITION"
	Cycle              apperr.Code = "CYCLE"
	DanglingDependency apperr.Code = "DANGLING_DEPENDENCY"
	ParentCycle        apperr.Code = "PARENT_CYCLE"
	DanglingParent     apperr.Code = "DANGLING_PARENT"
	ReservedField      apperr.Code = "RESERVED_FIELD"
)

// Lease bounds.
const (
	DefaultLease = 4 * time.Hour
	MaxLease     = 30 * 24 * time.Hour
)

// Actor is who acts: a human, optionally through an agent.
type Actor struct {
	Human string `json:"human"`
	Agent string `json:"agent,omitempty"`
}

// String is "human" or "human (agent)", as messages and trailers name an
// actor.
func (a Actor) String() string {
	if a.Agent == "" {
		return a.Human
	}
	return a.Human + " (" + a.Agent + ")"
}

// Claim is a lease on an in-progress item.
type Claim struct {
	Holder       Actor  `json:"holder"`
	ClaimToken   int64  `json:"claim_token"`
	AcquiredAt   string `json:"acquired_at"`
	LeaseExpires string `json:"lease_expires"`
}

// Reference is a typed forward edge to another item.
type Reference struct {
	Rel string `json:"rel"`
	ID  string `json:"id"`
}

// Item is one work item. Field order is the contract's emitted order.
type Item struct {
	ID         string      `json:"id"`
	TenantID   string      `json:"tenant_id"`
	Title      string      `json:"title"`
	SpecFormat string      `json:"spec_format"`
	Status     string      `json:"status"`
	Claim      *Claim      `json:"claim"`
	DependsOn  []string    `json:"depends_on"`
	ParentID   *string     `json:"parent_id"`
	References []Reference `json:"references"`
	CreatedBy  Actor       `json:"created_by"`
	CreatedAt  string      `json:"created_at"`
	UpdatedAt  string      `json:"updated_at"`
	Version    int64       `json:"version"`
	Spec       string      `json:"spec"`

	// TokenCounter is the last fencing token issued for this item; tokens
	// only go up. Stored in the snapshot, not shown in views.
	TokenCounter int64 `json:"-"`
}

// stored is the snapshot as written to item.json: the item plus its
// fencing counter.
type stored struct {
	Item
	TokenCounter int64 `json:"claim_token_counter"`
}

func (it *Item) marshalStored() []byte {
	b, _ := json.MarshalIndent(stored{Item: *it, TokenCounter: it.TokenCounter}, "", "  ")
	return append(b, '\n')
}

func unmarshalStored(data []byte) (*Item, error) {
	var s stored
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	it := s.Item
	it.TokenCounter = s.TokenCounter
	it.normalize()
	return &it, nil
}

func (it *Item) normalize() {
	if it.DependsOn == nil {
		it.DependsOn = []string{}
	}
	if it.References == nil {
		it.References = []Reference{}
	}
}

// Event is one transition in an item's audit trail.
type Event struct {
	ItemID     string `json:"item_id"`
	Actor      Actor  `json:"actor"`
	Transition string `json:"transition"`
	ClaimToken *int64 `json:"claim_token,omitempty"`
	Note       string `json:"note,omitempty"`
	At         string `json:"at"`
}

// View is an item as get shows it: the item plus derived backlinks.
type View struct {
	*Item
	ReferencedBy []Reference `json:"referenced_by"`
}

// Row is an item as list shows it: no spec unless asked, its length in
// code points, backlinks and the derived claimable flag.
type Row struct {
	ID           string      `json:"id"`
	TenantID     string      `json:"tenant_id"`
	Title        string      `json:"title"`
	SpecFormat   string      `json:"spec_format"`
	Status       string      `json:"status"`
	Claim        *Claim      `json:"claim"`
	DependsOn    []string    `json:"depends_on"`
	ParentID     *string     `json:"parent_id"`
	References   []Reference `json:"references"`
	CreatedBy    Actor       `json:"created_by"`
	CreatedAt    string      `json:"created_at"`
	UpdatedAt    string      `json:"updated_at"`
	Version      int64       `json:"version"`
	Spec         *string     `json:"spec,omitempty"`
	SpecLength   int         `json:"spec_length"`
	ReferencedBy []Reference `json:"referenced_by"`
	Claimable    bool        `json:"claimable"`
}

func newRow(it *Item, back []Reference, claimable, withSpec bool) Row {
	r := Row{ID: it.ID, TenantID: it.TenantID, Title: it.Title, SpecFormat: it.SpecFormat, Status: it.Status,
		Claim: it.Claim, DependsOn: it.DependsOn, ParentID: it.ParentID, References: it.References,
		CreatedBy: it.CreatedBy, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, Version: it.Version,
		SpecLength: utf8.RuneCountInString(it.Spec), ReferencedBy: back, Claimable: claimable}
	if withSpec {
		s := it.Spec
		r.Spec = &s
	}
	if r.ReferencedBy == nil {
		r.ReferencedBy = []Reference{}
	}
	return r
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
