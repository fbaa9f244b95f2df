package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/steering"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

type harness struct {
	t   *testing.T
	dir string
	c   *client.Client
}

func backendFor(dir string, steeringOn bool) mcpserver.Opener {
	return func() (*mcpserver.Backend, error) {
		g, err := gitstore.Open(dir)
		if err != nil {
			return nil, err
		}
		rec := record.Open(g)
		b := board.Open(g, rec)
		rec.Resolve = b.Exists
		st := func() (*steering.Store, error) { return steering.Open(g, steeringOn), nil }
		return &mcpserver.Backend{Record: rec, Board: b, Steering: st, Session: "mcp-test"}, nil
	}
}

// start serves a server over in-memory pipes and connects mcp-go's client
// to it, so the tests speak the real protocol.
func start(t *testing.T, dir string, open mcpserver.Opener) *harness {
	t.Helper()
	srv := mcpserver.New("test", open)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() { srv.Serve(t.Context(), inR, outW); outW.Close(); close(done) }()
	c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))
	t.Cleanup(func() { c.Close(); inW.Close(); <-done })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, dir: dir, c: c}
}

func newHarness(t *testing.T) *harness {
	dir := gt.NewRepo(t)
	return start(t, dir, backendFor(dir, false))
}

// call returns the decoded text payload and whether it was an error.
func (h *harness) call(name string, args map[string]any) (map[string]any, bool) {
	h.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := h.c.CallTool(context.Background(), req)
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		if res.IsError {
			return map[string]any{"raw": text}, true
		}
		h.t.Fatalf("%s: text is not JSON: %q", name, text)
	}
	// Structured content and text carry the same JSON.
	if res.StructuredContent != nil {
		sb, _ := json.Marshal(res.StructuredContent)
		var again map[string]any
		json.Unmarshal(sb, &again)
		a, _ := json.Marshal(again)
		b, _ := json.Marshal(out)
		if string(a) != string(b) {
			h.t.Fatalf("%s: structured content differs from text:\n%s\n%s", name, a, b)
		}
	}
	return out, res.IsError
}

func (h *harness) ok(name string, args map[string]any) map[string]any {
	h.t.Helper()
	out, isErr := h.call(name, args)
	if isErr || out["ok"] != true {
		h.t.Fatalf("%s(%v) failed: %v", name, args, out)
	}
	return out
}

func (h *harness) fails(name string, args map[string]any, code string) {
	h.t.Helper()
	out, isErr := h.call(name, args)
	if !isErr {
		h.t.Fatalf("%s(%v) succeeded, want %s", name, args, code)
	}
	if code == "schema-validation" {
		// An input-schema failure is a SCHEMA error like any other.
		if msg, _ := out["message"].(string); out["code"] != "SCHEMA" || !strings.HasPrefix(msg, "input validation failed") {
			h.t.Fatalf("%s: want an input-schema failure, got %v", name, out)
		}
		return
	}
	if out["ok"] != false || out["code"] != code || out["message"] != out["reason"] || out["message"] == "" {
		h.t.Fatalf("%s(%v): got %v, want code %s", name, args, out, code)
	}
}

func TestServer_ListsItsTools(t *testing.T) {
	h := newHarness(t)
	res, err := h.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	size := 0
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		b, _ := json.Marshal(tl)
		size += len(b)
	}
	sort.Strings(names)
	want := "escalations exec_log gate_run memory_add memory_check memory_list plan_check plan_import plan_show record_append record_decision record_read retro scaffold steering_put steering_read symbols_defs symbols_find task_abandon task_attempt task_complete task_feedback task_list task_release task_show task_start test_classify test_run wave_check work_cancel work_claim work_complete work_create work_events work_get work_list work_release work_renew work_reopen work_update_meta"
	if strings.Join(names, " ") != want {
		t.Fatalf("tools = %v", names)
	}
	// Every argument carries a short description; the whole list still
	// costs the model little context.
	if size > 700*len(names) {
		t.Fatalf("tool list is %d characters; keep it short", size)
	}
}

func TestServer_RecordTools(t *testing.T) {
	h := newHarness(t)
	a := h.ok("record_append", map[string]any{"kind": "finding", "claim": "first", "content": "body", "scope": "mcp"})
	id := a["id"].(string)
	if a["kind"] != "finding" {
		t.Fatalf("append result %v", a)
	}
	key := "AKIA" + strings.Repeat("Q7", 8)
	d := h.ok("record_decision", map[string]any{"claim": "decide " + key, "rationale": "because", "supersedes": id})
	if red := d["redactions"].([]any); len(red) != 1 {
		t.Fatalf("redactions = %v", d["redactions"])
	}
	r := h.ok("record_read", map[string]any{"id": id, "include_content": true})
	recs := r["records"].([]any)
	row := recs[0].(map[string]any)
	if row["content"] != "body" || len(row["referenced_by"].([]any)) != 1 || r["next_cursor"] != nil {
		t.Fatalf("read by id: %v", r)
	}
	r = h.ok("record_read", map[string]any{"limit": 1})
	if r["next_cursor"] == nil || len(r["records"].([]any)) != 1 {
		t.Fatalf("paged read: %v", r)
	}
	cursor := r["next_cursor"].(string)
	r2 := h.ok("record_read", map[string]any{"limit": 1, "cursor": cursor})
	if r2["records"].([]any)[0].(map[string]any)["id"] != id {
		t.Fatalf("second page: %v", r2)
	}
	// Errors.
	h.fails("record_append", map[string]any{"kind": " ", "claim": "c", "content": "x"}, "SCHEMA")
	h.fails("record_append", map[string]any{"kind": "k", "claim": "c", "content": "x", "references": "not json"}, "SCHEMA")
	h.fails("record_append", map[string]any{"kind": "k", "claim": "c", "content": "x", "supersedes": "01JDQ3Z5E8X9K2M4N6P8R0T1VW"}, "DANGLING_SUPERSEDES")
	h.fails("record_read", map[string]any{"cursor": "garbage"}, "SCHEMA")
	h.fails("record_read", map[string]any{"cursor": cursor, "scope": "other"}, "CURSOR_MISMATCH")
	h.fails("record_read", map[string]any{"limit": 1.5}, "schema-validation")
	h.fails("record_append", map[string]any{"kind": "k"}, "schema-validation")
}

func TestServer_WorkTools(t *testing.T) {
	h := newHarness(t)
	p := h.ok("work_create", map[string]any{"title": "parent", "spec": "s", "spec_format": "f", "actor_human": "dan"})["item"].(map[string]any)
	c := h.ok("work_create", map[string]any{"title": "child", "spec": "s", "spec_format": "f", "actor_human": "dan",
		"parent_id": p["id"], "tenant_id": "t1"})["item"].(map[string]any)
	h.ok("work_create", map[string]any{"title": "root", "spec": "s", "spec_format": "f", "actor_human": "dan", "parent_id": nil})
	kids := h.ok("work_list", map[string]any{"parent_id": p["id"]})["items"].([]any)
	roots := h.ok("work_list", map[string]any{"parent_id": nil})["items"].([]any)
	all := h.ok("work_list", map[string]any{})["items"].([]any)
	if len(kids) != 1 || len(roots) != 2 || len(all) != 3 {
		t.Fatalf("list: %d kids, %d roots, %d all", len(kids), len(roots), len(all))
	}
	id := c["id"].(string)
	cl := h.ok("work_claim", map[string]any{"id": id, "actor_human": "eve", "actor_agent": "w/1", "lease_ms": 60000})["item"].(map[string]any)
	tok := cl["claim"].(map[string]any)["claim_token"]
	h.fails("work_claim", map[string]any{"id": id, "actor_human": "bob"}, "NOT_CLAIMABLE")
	h.ok("work_renew", map[string]any{"id": id, "claim_token": tok, "lease_ms": 120000})
	h.fails("work_renew", map[string]any{"id": id, "claim_token": 99}, "INVALID_CLAIM")
	h.ok("work_release", map[string]any{"id": id, "claim_token": tok, "note": "later"})
	cl = h.ok("work_claim", map[string]any{"id": id, "actor_human": "eve"})["item"].(map[string]any)
	tok = cl["claim"].(map[string]any)["claim_token"]
	done := h.ok("work_complete", map[string]any{"id": id, "claim_token": tok, "note": "shipped"})
	if done["item"].(map[string]any)["status"] != "done" {
		t.Fatalf("complete: %v", done)
	}
	h.ok("work_reopen", map[string]any{"id": id, "actor_human": "dan"})
	h.ok("work_cancel", map[string]any{"id": id, "actor_human": "dan"})
	h.fails("work_cancel", map[string]any{"id": id, "actor_human": "dan"}, "INVALID_TRANSITION")
	h.fails("work_reopen", map[string]any{"id": id, "actor_human": "dan"}, "INVALID_TRANSITION")
	ev := h.ok("work_events", map[string]any{"id": id})["events"].([]any)
	if len(ev) != 8 {
		t.Fatalf("events: %v", ev)
	}
	g := h.ok("work_get", map[string]any{"id": p["id"]})
	if g["item"].(map[string]any)["spec"] != "s" {
		t.Fatalf("get: %v", g)
	}
	if g := h.ok("work_get", map[string]any{"id": "01JDQ3Z5E8X9K2M4N6P8R0T1VW"}); g["item"] != nil {
		t.Fatalf("get missing: %v", g)
	}
	up := h.ok("work_update_meta", map[string]any{"id": p["id"], "expected_version": 1, "title": "parent 2", "parent_id": nil})
	if up["item"].(map[string]any)["version"].(float64) != 2 {
		t.Fatalf("update: %v", up)
	}
	h.fails("work_update_meta", map[string]any{"id": p["id"], "expected_version": 1, "title": "x"}, "VERSION_CONFLICT")
	h.fails("work_update_meta", map[string]any{"id": p["id"], "expected_version": 2, "parent_id": p["id"]}, "PARENT_CYCLE")
	h.fails("work_create", map[string]any{"title": "t", "spec": "s", "spec_format": "f", "actor_human": "d", "depends_on": []any{"01JDQ3Z5E8X9K2M4N6P8R0T1VW"}}, "DANGLING_DEPENDENCY")
	h.fails("work_create", map[string]any{"title": "t", "spec": "s", "spec_format": "f", "actor_human": "d", "parent_id": "01JDQ3Z5E8X9K2M4N6P8R0T1VW"}, "DANGLING_PARENT")
	h.fails("work_claim", map[string]any{"id": "01JDQ3Z5E8X9K2M4N6P8R0T1VW", "actor_human": "d"}, "NOT_FOUND")
	h.fails("work_claim", map[string]any{"id": p["id"], "actor_human": "d", "lease_ms": 0}, "schema-validation")
	h.fails("work_claim", map[string]any{"id": p["id"], "actor_human": "d", "lease_ms": int64(31 * 24 * 3600 * 1000)}, "INVALID_LEASE")
	h.fails("work_list", map[string]any{"status": "blocked"}, "schema-validation")
	h.fails("work_complete", map[string]any{"id": p["id"], "claim_token": 1}, "INVALID_CLAIM")
	gt.Fsck(t, h.dir)
}

func TestServer_SteeringGatedWritesNothing(t *testing.T) {
	h := newHarness(t)
	before := gt.Git(t, h.dir, "for-each-ref")
	objs := gt.Git(t, h.dir, "count-objects")
	for _, args := range []map[string]any{
		{"id": "GP-1", "kind": "principle", "statement": "Prefer small commits"},
		{"id": "../../bad", "kind": "", "statement": " "},
		{},
	} {
		h.fails("steering_put", args, "GATED")
	}
	h.fails("steering_read", map[string]any{}, "GATED")
	h.fails("steering_read", map[string]any{"status": "nonsense"}, "GATED")
	h.fails("steering_read", map[string]any{"limit": "many", "include_history": 3}, "GATED")
	if gt.Git(t, h.dir, "for-each-ref") != before || gt.Git(t, h.dir, "count-objects") != objs {
		t.Fatal("a gated steering call wrote something")
	}
}

func TestServer_NotARepository(t *testing.T) {
	dir := t.TempDir()
	gt.Isolate(t)
	h := start(t, dir, backendFor(dir, false))
	h.fails("record_read", map[string]any{}, "NOT_A_REPOSITORY")
}

// A write made outside the server (another store, as the CLI is) is seen
// by the running server at once, and the other way round.
func TestServer_SeesOtherWriters(t *testing.T) {
	h := newHarness(t)
	h.ok("record_read", map[string]any{})
	g, _ := gitstore.Open(h.dir)
	defer g.Close()
	rec := record.Open(g)
	res, err := rec.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "from outside"})
	if err != nil {
		t.Fatal(err)
	}
	r := h.ok("record_read", map[string]any{})
	if r["records"].([]any)[0].(map[string]any)["id"] != res.Record.ID {
		t.Fatal("server did not see the outside write")
	}
	b := board.Open(g, rec)
	it, _ := b.Create(t.Context(), board.CreateInput{Title: "t", Spec: "s", SpecFormat: "f", CreatedBy: board.Actor{Human: "d"}})
	cl, err := b.Claim(t.Context(), it.Item.ID, board.Actor{Human: "cli"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.fails("work_claim", map[string]any{"id": it.Item.ID, "actor_human": "mcp"}, "NOT_CLAIMABLE")
	h.ok("work_complete", map[string]any{"id": it.Item.ID, "claim_token": cl.Claim.ClaimToken})
	if v, _ := b.Get(t.Context(), it.Item.ID); v.Status != board.StatusDone {
		t.Fatal("outside store does not see the server's complete")
	}
}

func TestServer_SteeringEnabled(t *testing.T) {
	dir := gt.NewRepo(t)
	h := start(t, dir, backendFor(dir, true))
	r := h.ok("steering_put", map[string]any{"id": "GP-1", "kind": "principle", "statement": "Prefer small commits", "domain": "process"})
	if r["id"] != "GP-1" || r["status"] != "active" || r["amended"] != false {
		t.Fatalf("put: %v", r)
	}
	r = h.ok("steering_put", map[string]any{"id": "GP-1", "kind": "principle", "statement": "Prefer small, reviewed commits", "status": "active"})
	if r["amended"] != true {
		t.Fatalf("amend: %v", r)
	}
	h.ok("steering_put", map[string]any{"id": "GP-2", "kind": "principle", "statement": "Newer", "supersedes": "GP-1"})
	p := h.ok("steering_read", map[string]any{"domain": "PROC", "include_history": true})
	items := p["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["history_length"].(float64) != 1 || len(items[0].(map[string]any)["referenced_by"].([]any)) != 1 {
		t.Fatalf("read: %v", p)
	}
	h.fails("steering_put", map[string]any{"id": "GP-3", "kind": "k", "statement": "s", "status": "retired"}, "SCHEMA")
	h.fails("steering_put", map[string]any{"id": "GP-3", "kind": "k", "statement": "s", "supersedes": "GP-404"}, "DANGLING_SUPERSEDES")
	h.fails("steering_read", map[string]any{"limit": "many"}, "SCHEMA")
	gt.Fsck(t, dir)
}
