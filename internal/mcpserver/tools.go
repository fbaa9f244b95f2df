package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/steering"
)

type toolDef struct {
	name, desc, schema string
	readOnly, gated    bool
	// sweeps marks a read that returns expired claims to open first (a
	// write the board would derive anyway): it runs beside other reads,
	// but is not annotated read-only.
	sweeps bool
	// long marks a call that runs for seconds or minutes (it runs tests):
	// reads do not wait for it, it reports progress and is cancelled when
	// the client goes.
	long     bool
	run      func(ctx context.Context, b *Backend, raw json.RawMessage) (any, error)
	compiled *schema
}

// Schema fragments: the JSON Schema type of an argument.
const (
	str      = `"type":"string"`
	strArr   = `"type":"array","items":{"type":"string"}`
	integer  = `"type":"integer"`
	posInt   = `"type":"integer","minimum":1`
	boolean  = `"type":"boolean"`
	strOrNil = `"type":["string","null"]`
)

// arg is one argument of a tool: its name, schema fragment and a short
// description for the model.
type arg struct{ name, schema, desc string }

// obj builds an object schema from args; required lists the required
// names. Keys not listed are allowed (and ignored), as the reference's
// schemas allow them.
func obj(required []string, args ...arg) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		d, _ := json.Marshal(a.desc)
		b.WriteString(`"` + a.name + `":{` + a.schema + `,"description":` + string(d) + `}`)
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		b.WriteString(`,"required":["` + strings.Join(required, `","`) + `"]`)
	}
	b.WriteString(`}`)
	return b.String()
}

// Arguments several tools share.
var (
	argID         = arg{"id", str, "Item id (ULID)."}
	argHuman      = arg{"actor_human", str, "The human on whose behalf you act."}
	argAgent      = arg{"actor_agent", str, "The agent acting, if any."}
	argToken      = arg{"claim_token", integer, "The claim.claim_token your work_claim returned."}
	argLease      = arg{"lease_ms", posInt, "Lease length in ms (default 4h, at most 30 days)."}
	argSupersedes = arg{"supersedes", str, "Id this one replaces (a supersedes edge)."}
	argRefs       = arg{"references", str, `Typed edges as a JSON string: [{"rel":"…","id":"…"}].`}
	argScopeW     = arg{"scope", str, "Where it applies (module, area, task)."}
	argAnchor     = arg{"verification_anchor", str, "How to check it (file:line, command, commit)."}
	argTask       = arg{"task_id", str, "The task or board item this belongs to."}
	argLimit      = arg{"limit", integer, "Page size, 1..500 (default 100)."}
	argCursor     = arg{"cursor", str, "next_cursor of the previous page."}
	argTenant     = arg{"tenant_id", str, "Tenant (default local)."}
	argSpec       = arg{"spec", str, "The work to do; opaque to the board."}
	argSpecFmt    = arg{"spec_format", str, "Format of spec (markdown, json, …)."}
	argDeps       = arg{"depends_on", strArr, "Ids that must be done before this can be claimed."}
	argParent     = arg{"parent_id", strOrNil, "Containing item's id; null for none."}
	argNote       = arg{"note", str, "A short note for the event."}
)

func tools() []toolDef {
	return []toolDef{
		{name: "record_append", run: recordAppend,
			desc: "Append one record to the project's append-only process record (a finding, outcome, note…). Never edits: to correct a record, append a new one with supersedes=<old id>. Secrets in any field are redacted before writing.",
			schema: obj([]string{"kind", "claim", "content"}, arg{"kind", str, "Open vocabulary: finding, outcome, note…"},
				arg{"claim", str, "The point in one sentence."}, arg{"content", str, "The body (Markdown)."}, argAnchor,
				argScopeW, argTask, argSupersedes, argRefs)},
		{name: "record_decision", run: recordDecision,
			desc: "Record a decision (an ADR entry): claim is the decision in one sentence, rationale why. Overturn one with supersedes=<old id>.",
			schema: obj([]string{"claim"}, arg{"claim", str, "The decision in one sentence."}, arg{"rationale", str, "Why."},
				argAnchor, argScopeW, argTask, argSupersedes, argRefs)},
		{name: "record_read", run: recordRead, readOnly: true,
			desc: "Read records newest first. Returns a page (≤40k chars): pass next_cursor back as cursor until it is null; a short page is not the end.",
			schema: obj(nil, arg{"scope", str, "Case-insensitive substring of scope, kind, capture point, session or task."},
				arg{"id", str, "Fetch this one record."}, arg{"include_content", boolean, "Include bodies (default: content_length only)."},
				argLimit, argCursor)},
		{name: "work_create", run: workCreate,
			desc: "Create an open work item on the delegation board.",
			schema: obj([]string{"title", "spec", "spec_format", "actor_human"}, arg{"title", str, "One line."}, argSpec, argSpecFmt,
				argHuman, argAgent, argDeps, argParent, argSupersedes, argRefs, argTenant)},
		{name: "work_get", run: workGet, readOnly: true, sweeps: true,
			desc:   "Get one work item with its full spec (null when it does not exist). Expired claims are released first.",
			schema: obj([]string{"id"}, argID)},
		{name: "work_list", run: workList, readOnly: true, sweeps: true,
			desc: "List work items newest first with a derived claimable flag (expired claims are swept first). Paged like record_read.",
			schema: obj(nil, argTenant, arg{"status", `"type":"string","enum":["open","in_progress","done","cancelled"]`, "Only items in this status."},
				arg{"parent_id", strOrNil, "Omit for all, an id for its children, null for roots."},
				arg{"include_spec", boolean, "Include specs (default: spec_length only)."},
				arg{"archived", boolean, "Also the finished items a sync folded into the archive (status done or cancelled includes them anyway)."}, argLimit, argCursor)},
		{name: "work_update_meta", run: workUpdateMeta,
			desc: "Change an item's metadata if it is still at expected_version (VERSION_CONFLICT otherwise). Omitted fields stay as they are.",
			schema: obj([]string{"id", "expected_version"}, argID, arg{"expected_version", integer, "The version you read."},
				arg{"title", str, "New title."}, arg{"spec", str, "New spec."}, arg{"spec_format", str, "New spec format."},
				arg{"depends_on", strArr, "Replaces the dependencies."}, arg{"parent_id", strOrNil, "Move under this item; null makes it a root."},
				arg{"supersedes", str, "Replaces the edges with one supersedes edge (plus references)."},
				arg{"references", str, `Replaces the typed edges: [{"rel","id"}] as a JSON string; "[]" clears.`},
				arg{"actor_human", str, "Who changes it (default: this repository's git user)."}, argAgent)},
		{name: "work_claim", run: workClaim,
			desc:   "Claim an open, claimable item: you get a lease and claim.claim_token, which renew/release/complete require. Exactly one claimer wins; others get NOT_CLAIMABLE naming the holder.",
			schema: obj([]string{"id", "actor_human"}, argID, argHuman, argAgent, argLease)},
		{name: "work_renew", run: workRenew,
			desc:   "Extend the lease of a claim you hold.",
			schema: obj([]string{"id", "claim_token"}, argID, argToken, argLease)},
		{name: "work_release", run: workRelease,
			desc:   "Give a claim back; the item is open again.",
			schema: obj([]string{"id", "claim_token"}, argID, argToken, argNote)},
		{name: "work_complete", run: workComplete,
			desc:   "Complete a claimed item; it also writes a work-completion record to the process record.",
			schema: obj([]string{"id", "claim_token"}, argID, argToken, arg{"note", str, "What was done; becomes the work-completion record."})},
		{name: "work_cancel", run: workCancel,
			desc:   "Cancel an open or in-progress item (voids any claim).",
			schema: obj([]string{"id", "actor_human"}, argID, argHuman, argAgent)},
		{name: "work_reopen", run: workReopen,
			desc:   "Move a done item back to open.",
			schema: obj([]string{"id", "actor_human"}, argID, argHuman, argAgent)},
		{name: "work_events", run: workEvents, readOnly: true, sweeps: true,
			desc:   "Every event of an item (its audit trail), oldest first.",
			schema: obj([]string{"id"}, argID)},
		{name: "steering_read", run: steeringRead, readOnly: true, gated: true,
			desc: "Read steering items (project principles), gated off unless enabled. Paged like record_read.",
			schema: obj(nil, arg{"id", str, "Exact item id."}, arg{"domain", str, "Case-insensitive substring of the domain."},
				arg{"status", str, "active, deprecated or superseded."}, arg{"kind", str, "Exact kind."},
				arg{"include_history", boolean, "Include prior versions."}, argLimit, argCursor)},
		{name: "steering_put", run: steeringPut, gated: true,
			desc: "Create or amend one steering item (gated off unless enabled); amendments keep history.",
			schema: obj([]string{"id", "kind", "statement"}, arg{"id", str, "A stem like GP-23."},
				arg{"kind", str, "Open vocabulary: guiding-principle, policy…"}, arg{"statement", str, "The steering text."},
				arg{"domain", str, "Domain tag (default: the prior one)."},
				arg{"status", str, "active, deprecated or superseded (default: the prior one, or active)."},
				arg{"supersedes", str, "The item this one replaces."}, argRefs)},
	}
}

func parseRefs(s string) ([]record.Reference, error) { return record.ParseReferences(s) }

func boardRefs(refs []record.Reference) []board.Reference {
	out := make([]board.Reference, 0, len(refs))
	for _, r := range refs {
		out = append(out, board.Reference{Rel: r.Rel, ID: r.ID})
	}
	return out
}

type appendResult struct {
	OK         bool                   `json:"ok"`
	ID         string                 `json:"id"`
	Kind       string                 `json:"kind"`
	Redactions []secretgate.Redaction `json:"redactions"`
	Unresolved []record.Unresolved    `json:"unresolved_ids"`
}

func appendOut(res *record.AppendResult) appendResult {
	out := appendResult{OK: true, ID: res.Record.ID, Kind: res.Record.Kind, Redactions: res.Redactions, Unresolved: res.Unresolved}
	if out.Redactions == nil {
		out.Redactions = []secretgate.Redaction{}
	}
	if out.Unresolved == nil {
		out.Unresolved = []record.Unresolved{}
	}
	return out
}

func recordAppend(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Kind, Claim, Content, VerificationAnchor, Scope, TaskID, Supersedes, References string
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	refs, err := parseRefs(a.References)
	if err != nil {
		return nil, err
	}
	point := "mcp:record_append"
	if strings.TrimSpace(a.Kind) == "decision" {
		point = "mcp:record_decision"
	}
	res, err := b.Record.Append(ctx, record.AppendInput{Kind: a.Kind, Claim: a.Claim, Content: a.Content,
		VerificationAnchor: a.VerificationAnchor, Scope: a.Scope, Supersedes: a.Supersedes, References: refs,
		Source: record.Source{CapturePoint: point, SessionID: b.Session, TaskID: a.TaskID}})
	if err != nil {
		return nil, err
	}
	return appendOut(res), nil
}

func recordDecision(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Claim, Rationale, VerificationAnchor, Scope, TaskID, Supersedes, References string
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	refs, err := parseRefs(a.References)
	if err != nil {
		return nil, err
	}
	res, err := b.Record.Decision(ctx, record.DecisionInput{Claim: a.Claim, Rationale: a.Rationale,
		VerificationAnchor: a.VerificationAnchor, Scope: a.Scope, Supersedes: a.Supersedes, References: refs,
		Source: record.Source{CapturePoint: "mcp:record_decision", SessionID: b.Session, TaskID: a.TaskID}})
	if err != nil {
		return nil, err
	}
	return appendOut(res), nil
}

type recordPage struct {
	OK         bool         `json:"ok"`
	Records    []record.Row `json:"records"`
	NextCursor *string      `json:"next_cursor"`
}

func recordRead(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Scope, ID, Cursor string
		IncludeContent    bool
		Limit             *int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	p, err := b.Record.ReadPage(record.PageRequest{Filter: record.Filter{Scope: a.Scope, ID: a.ID}, Limit: a.Limit,
		Cursor: a.Cursor, IncludeContent: a.IncludeContent, Measure: paging.CompactLen})
	if err != nil {
		return nil, err
	}
	return recordPage{OK: true, Records: p.Rows, NextCursor: p.NextCursor}, nil
}

type itemResult struct {
	OK   bool `json:"ok"`
	Item any  `json:"item"`
}

// outcomeResult is the answer of the verbs that lint prose for ids
// (create, update_meta, release, complete): unresolved_ids is always
// there, [] when every cited id resolves.
type outcomeResult struct {
	OK         bool                `json:"ok"`
	Item       any                 `json:"item"`
	Unresolved []record.Unresolved `json:"unresolved_ids"`
}

func outcome(o *board.Outcome) outcomeResult {
	r := outcomeResult{OK: true, Item: o.Item, Unresolved: o.Unresolved}
	if r.Unresolved == nil {
		r.Unresolved = []record.Unresolved{}
	}
	return r
}

// nullable distinguishes an absent key (nil), an explicit null (Null) and
// a string.
type nullable struct {
	Set, Null bool
	Value     string
}

func (n *nullable) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

func workCreate(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Title, Spec, SpecFormat, ActorHuman, ActorAgent, Supersedes, References, TenantID string
		DependsOn                                                                         []string
		ParentID                                                                          nullable
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	refs, err := parseRefs(a.References)
	if err != nil {
		return nil, err
	}
	o, err := b.Board.Create(ctx, board.CreateInput{Title: a.Title, Spec: a.Spec, SpecFormat: a.SpecFormat,
		CreatedBy: board.Actor{Human: a.ActorHuman, Agent: a.ActorAgent}, DependsOn: a.DependsOn,
		ParentID: a.ParentID.Value, Supersedes: a.Supersedes, References: boardRefs(refs), TenantID: a.TenantID})
	if err != nil {
		return nil, err
	}
	return outcome(o), nil
}

func workGet(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ ID string }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	v, err := b.Board.Get(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return itemResult{OK: true, Item: nil}, nil
	}
	return itemResult{OK: true, Item: v}, nil
}

type listResult struct {
	OK         bool        `json:"ok"`
	Items      []board.Row `json:"items"`
	NextCursor *string     `json:"next_cursor"`
}

func workList(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		TenantID, Status, Cursor string
		ParentID                 nullable
		IncludeSpec, Archived    bool
		Limit                    *int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	f := board.ListFilter{TenantID: a.TenantID, Status: a.Status}
	if a.ParentID.Set {
		p := a.ParentID.Value // null → "" → roots
		f.Parent = &p
	}
	p, err := b.Board.List(ctx, board.ListRequest{Filter: f, IncludeSpec: a.IncludeSpec, Limit: a.Limit, Cursor: a.Cursor, Archived: a.Archived, Measure: paging.CompactLen})
	if err != nil {
		return nil, err
	}
	return listResult{OK: true, Items: p.Items, NextCursor: p.NextCursor}, nil
}

func workUpdateMeta(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		ID                                  string
		ExpectedVersion                     int64
		Title, Spec, SpecFormat, Supersedes *string
		References                          *string
		DependsOn                           *[]string
		ParentID                            nullable
		ActorHuman, ActorAgent              string
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	who := board.Actor{Human: a.ActorHuman, Agent: a.ActorAgent}
	if strings.TrimSpace(who.Human+who.Agent) == "" {
		// No actor given: the board names the git user; the session says
		// it came through this server.
		who.Agent = b.Session
	}
	in := board.UpdateInput{ExpectedVersion: a.ExpectedVersion, Title: a.Title, Spec: a.Spec, SpecFormat: a.SpecFormat,
		DependsOn: a.DependsOn, Supersedes: a.Supersedes, Actor: who}
	if a.ParentID.Set {
		p := a.ParentID.Value
		in.ParentID = &p
	}
	if a.References != nil {
		refs, err := parseRefs(*a.References)
		if err != nil {
			return nil, err
		}
		br := boardRefs(refs)
		in.References = &br
	}
	o, err := b.Board.UpdateMeta(ctx, a.ID, in)
	if err != nil {
		return nil, err
	}
	return outcome(o), nil
}

func workClaim(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		ID, ActorHuman, ActorAgent string
		LeaseMs                    *int64
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	it, err := b.Board.Claim(ctx, a.ID, board.Actor{Human: a.ActorHuman, Agent: a.ActorAgent}, a.LeaseMs)
	if err != nil {
		return nil, err
	}
	return itemResult{OK: true, Item: it}, nil
}

type tokenArgs struct {
	ID         string
	ClaimToken int64
	LeaseMs    *int64
	Note       string
}

func workRenew(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a tokenArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	it, err := b.Board.Renew(ctx, a.ID, a.ClaimToken, a.LeaseMs)
	if err != nil {
		return nil, err
	}
	return itemResult{OK: true, Item: it}, nil
}

func workRelease(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a tokenArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	o, err := b.Board.Release(ctx, a.ID, a.ClaimToken, a.Note)
	if err != nil {
		return nil, err
	}
	return outcome(o), nil
}

func workComplete(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a tokenArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	o, err := b.Board.Complete(ctx, a.ID, a.ClaimToken, a.Note)
	if err != nil {
		return nil, err
	}
	return outcome(o), nil
}

type actorArgs struct{ ID, ActorHuman, ActorAgent string }

func workCancel(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a actorArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	it, err := b.Board.Cancel(ctx, a.ID, board.Actor{Human: a.ActorHuman, Agent: a.ActorAgent})
	if err != nil {
		return nil, err
	}
	return itemResult{OK: true, Item: it}, nil
}

func workReopen(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a actorArgs
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	it, err := b.Board.Reopen(ctx, a.ID, board.Actor{Human: a.ActorHuman, Agent: a.ActorAgent})
	if err != nil {
		return nil, err
	}
	return itemResult{OK: true, Item: it}, nil
}

func workEvents(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ ID string }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	evs, err := b.Board.Events(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	return struct {
		OK     bool          `json:"ok"`
		Events []board.Event `json:"events"`
	}{true, evs}, nil
}

func steeringRead(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		ID, Domain, Status, Kind, Cursor string
		IncludeHistory                   bool
		Limit                            *int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	p, err := b.steering.Read(steering.ReadRequest{ID: a.ID, Domain: a.Domain, Status: a.Status, Kind: a.Kind,
		IncludeHistory: a.IncludeHistory, Limit: a.Limit, Cursor: a.Cursor, Measure: paging.CompactLen})
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		*steering.Page
	}{true, p}, nil
}

func steeringPut(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		ID, Kind, Statement, Status, Supersedes, References string
		Domain                                              *string
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	var refs []steering.Reference
	if strings.TrimSpace(a.References) != "" {
		rr, err := parseRefs(a.References)
		if err != nil {
			return nil, err
		}
		refs = []steering.Reference{}
		for _, r := range rr {
			refs = append(refs, steering.Reference{Rel: r.Rel, ID: r.ID})
		}
	}
	res, err := b.steering.Put(ctx, steering.PutInput{ID: a.ID, Kind: a.Kind, Statement: a.Statement, Domain: a.Domain,
		Status: a.Status, Supersedes: a.Supersedes, References: refs, Actor: b.Session})
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		*steering.PutResult
	}{true, res}, nil
}
