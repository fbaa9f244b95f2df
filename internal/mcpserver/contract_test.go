package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/mark3labs/mcp-go/mcp"
)

// A differential run against the reference implementation found these payload and argument differences; each case pins the
// contract's behaviour.

// work_create, work_update_meta, work_release and work_complete always
// carry unresolved_ids, [] when every cited id resolves.
func TestContract_UnresolvedIDsAlwaysPresent(t *testing.T) {
	h := newHarness(t)
	has := func(verb string, out map[string]any) {
		t.Helper()
		u, ok := out["unresolved_ids"].([]any)
		if !ok || len(u) != 0 {
			t.Fatalf("%s: unresolved_ids = %#v, want [] (payload %v)", verb, out["unresolved_ids"], out)
		}
	}
	c := h.ok("work_create", map[string]any{"title": "t", "spec": "s", "spec_format": "f", "actor_human": "dan"})
	has("work_create", c)
	id := c["item"].(map[string]any)["id"]
	has("work_update_meta", h.ok("work_update_meta", map[string]any{"id": id, "expected_version": 1, "title": "t2"}))
	tok := h.ok("work_claim", map[string]any{"id": id, "actor_human": "eve"})["item"].(map[string]any)["claim"].(map[string]any)["claim_token"]
	has("work_release", h.ok("work_release", map[string]any{"id": id, "claim_token": tok}))
	tok = h.ok("work_claim", map[string]any{"id": id, "actor_human": "eve"})["item"].(map[string]any)["claim"].(map[string]any)["claim_token"]
	has("work_complete", h.ok("work_complete", map[string]any{"id": id, "claim_token": tok}))
	// A cited id that resolves to nothing is still listed.
	ghost := "01JDQ3Z5E8X9K2M4N6P8R0T1VW"
	c = h.ok("work_create", map[string]any{"title": "cites " + ghost, "spec": "s", "spec_format": "f", "actor_human": "dan"})
	if u := c["unresolved_ids"].([]any); len(u) != 1 || u[0].(map[string]any)["id"] != ghost {
		t.Fatalf("unresolved_ids = %v", u)
	}
}

// Argument keys a tool does not know are ignored (a client may send
// rank); the keys it knows are still type-checked.
func TestContract_UnknownKeysIgnored(t *testing.T) {
	h := newHarness(t)
	h.ok("record_append", map[string]any{"kind": "k", "claim": "c", "content": "x", "rank": 3, "bogus": map[string]any{"a": 1}})
	h.ok("work_create", map[string]any{"title": "t", "spec": "s", "spec_format": "f", "actor_human": "d", "rank": 1})
	h.ok("record_read", map[string]any{"sort": "relevance"})
	h.fails("record_append", map[string]any{"kind": "k", "claim": 7, "content": "x", "rank": 3}, "schema-validation")
	h.fails("record_read", map[string]any{"limit": "ten", "bogus": true}, "schema-validation")
}

// The contract fields may be empty strings: claim "" is a record.
func TestContract_EmptyClaim(t *testing.T) {
	h := newHarness(t)
	a := h.ok("record_append", map[string]any{"kind": "finding", "claim": "", "content": "body"})
	d := h.ok("record_decision", map[string]any{"claim": ""})
	for _, id := range []any{a["id"], d["id"]} {
		row := h.ok("record_read", map[string]any{"id": id})["records"].([]any)[0].(map[string]any)
		if row["claim"] != "" {
			t.Fatalf("claim = %q", row["claim"])
		}
	}
	gt.Fsck(t, h.dir)
}

// A number with no fractional part is an integer (JSON Schema; Python
// clients send 1.0); one beyond 64 bits is out of range, not a wrong type.
func TestContract_IntegerArguments(t *testing.T) {
	h := newHarness(t)
	h.ok("record_append", map[string]any{"kind": "k", "claim": "one", "content": "x"})
	h.ok("record_append", map[string]any{"kind": "k", "claim": "two", "content": "x"})
	r := h.ok("record_read", map[string]any{"limit": json.RawMessage("1.0")})
	if len(r["records"].([]any)) != 1 {
		t.Fatalf("limit 1.0: %v", r)
	}
	if r := h.ok("record_read", map[string]any{"limit": json.RawMessage("2e0")}); len(r["records"].([]any)) != 2 {
		t.Fatalf("limit 2e0: %v", r)
	}
	it := h.ok("work_create", map[string]any{"title": "t", "spec": "s", "spec_format": "f", "actor_human": "d"})["item"].(map[string]any)
	h.ok("work_update_meta", map[string]any{"id": it["id"], "expected_version": json.RawMessage("1.0"), "title": "t2"})
	cl := h.ok("work_claim", map[string]any{"id": it["id"], "actor_human": "d", "lease_ms": json.RawMessage("60000.0")})
	tok := cl["item"].(map[string]any)["claim"].(map[string]any)["claim_token"].(float64)
	h.ok("work_renew", map[string]any{"id": it["id"], "claim_token": json.RawMessage(fmt.Sprintf("%.1f", tok))})

	out, isErr := h.call("record_read", map[string]any{"limit": json.RawMessage("1e20")})
	msg, _ := out["message"].(string)
	if !isErr || out["code"] != "SCHEMA" || !strings.Contains(msg, "out of range") || strings.Contains(msg, "type") {
		t.Fatalf("limit 1e20: %v", out)
	}
	h.fails("record_read", map[string]any{"limit": json.RawMessage("1.5")}, "schema-validation")
}

// Pipelined calls take effect in the order they arrive: five appends,
// each followed by a read of its own scope, all sent before any answer,
// are answered in order and every read sees the append before it.
func TestContract_PipelinedCallsInArrivalOrder(t *testing.T) {
	dir := gt.NewRepo(t)
	srv := mcpserver.New("test", backendFor(dir, false))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { srv.Serve(t.Context(), inR, outW); outW.Close() }()
	defer inW.Close()
	var batch strings.Builder
	line := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		batch.Write(append(b, '\n'))
	}
	line(0, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "0"}})
	for i := 0; i < 5; i++ {
		scope := fmt.Sprintf("pipe-%d", i)
		line(1+2*i, "tools/call", map[string]any{"name": "record_append", "arguments": map[string]any{"kind": "finding", "claim": "c " + scope, "content": "x", "scope": scope}})
		line(2+2*i, "tools/call", map[string]any{"name": "record_read", "arguments": map[string]any{"scope": scope}})
	}
	go io.WriteString(inW, batch.String()) // everything before any answer is read

	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	type answer struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			out map[string]any
		} `json:"result"`
	}
	var got []answer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(got) < 11 && sc.Scan() {
			var a answer
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				t.Errorf("answer %q: %v", sc.Text(), err)
				return
			}
			if len(a.Result.Content) == 1 {
				json.Unmarshal([]byte(a.Result.Content[0].Text), &a.Result.out)
			}
			got = append(got, a)
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("no answers")
	}
	var order []int
	for _, a := range got {
		order = append(order, a.ID)
	}
	if fmt.Sprint(order) != "[0 1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("answers came in the order %v", order)
	}
	for i := 0; i < 5; i++ {
		w, r := got[1+2*i].Result, got[2+2*i].Result
		if w.IsError || r.IsError {
			t.Fatalf("pair %d failed: %+v %+v", i, w, r)
		}
		recs := r.out["records"].([]any)
		if len(recs) != 1 || recs[0].(map[string]any)["id"] != w.out["id"] {
			t.Fatalf("read %d does not see the append sent before it: %v", i, recs)
		}
	}
}

// tools/list describes every argument of every tool, and the steering
// tools' schemas state their types and required arguments (the gate
// still answers first, whatever the arguments).
func TestContract_ToolSchemas(t *testing.T) {
	h := newHarness(t)
	res, err := h.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if len(tl.InputSchema.Properties) == 0 {
			t.Fatalf("%s has no arguments in its schema", tl.Name)
		}
		for name, p := range tl.InputSchema.Properties {
			pm, _ := p.(map[string]any)
			if d, _ := pm["description"].(string); d == "" {
				t.Errorf("%s.%s has no description", tl.Name, name)
			}
			if pm["type"] == nil {
				t.Errorf("%s.%s has no type", tl.Name, name)
			}
		}
		want := map[string]string{"steering_put": "id kind statement", "steering_read": ""}
		if w, ok := want[tl.Name]; ok && strings.Join(tl.InputSchema.Required, " ") != w {
			t.Errorf("%s requires %v, want %q", tl.Name, tl.InputSchema.Required, w)
		}
	}
	h.fails("steering_put", map[string]any{"id": 3}, "GATED")
}

// The update-meta event names the caller, not the item's creator: the
// actor given, else the git user (through this server's session).
func TestContract_UpdateMetaActor(t *testing.T) {
	h := newHarness(t)
	it := h.ok("work_create", map[string]any{"title": "t", "spec": "s", "spec_format": "f", "actor_human": "dan"})["item"].(map[string]any)
	h.ok("work_update_meta", map[string]any{"id": it["id"], "expected_version": 1, "title": "t2"})
	h.ok("work_update_meta", map[string]any{"id": it["id"], "expected_version": 2, "title": "t3", "actor_human": "eve"})
	var actors []string
	for _, e := range h.ok("work_events", map[string]any{"id": it["id"]})["events"].([]any) {
		a := e.(map[string]any)["actor"].(map[string]any)
		agent, _ := a["agent"].(string)
		actors = append(actors, a["human"].(string)+"/"+agent)
	}
	if fmt.Sprint(actors) != "[dan/ Test User/mcp-test eve/]" {
		t.Fatalf("event actors = %v", actors)
	}
}

// Decisions where we differ from the reference or pick one of its
// inconsistencies (docs/CONTRACT-DIFFERENCES.md).
func TestContract_Decisions(t *testing.T) {
	h := newHarness(t)
	ghost := "01JDQ3Z5E8X9K2M4N6P8R0T1VW"
	// One code for a reference to nothing, whatever the rel and the store.
	h.fails("record_append", map[string]any{"kind": "k", "claim": "c", "content": "x", "references": `[{"rel":"refutes","id":"` + ghost + `"}]`}, "DANGLING_SUPERSEDES")
	h.fails("work_create", map[string]any{"title": "t", "spec": "s", "spec_format": "f", "actor_human": "d", "references": `[{"rel":"refutes","id":"` + ghost + `"}]`}, "DANGLING_SUPERSEDES")
	// referenced_by lists the newest referrer first, as the reference does.
	a := h.ok("record_append", map[string]any{"kind": "k", "claim": "a", "content": "x"})["id"].(string)
	b := h.ok("record_append", map[string]any{"kind": "k", "claim": "b", "content": "x", "supersedes": a})["id"].(string)
	c := h.ok("record_append", map[string]any{"kind": "k", "claim": "c", "content": "x", "references": `[{"rel":"refutes","id":"` + a + `"}]`})["id"].(string)
	back := h.ok("record_read", map[string]any{"id": a})["records"].([]any)[0].(map[string]any)["referenced_by"].([]any)
	if len(back) != 2 || back[0].(map[string]any)["id"] != c || back[1].(map[string]any)["id"] != b {
		t.Fatalf("record referenced_by = %v, want %s then %s", back, c, b)
	}
	item := func(title string, refs string) string {
		args := map[string]any{"title": title, "spec": "s", "spec_format": "f", "actor_human": "d"}
		if refs != "" {
			args["references"] = refs
		}
		return h.ok("work_create", args)["item"].(map[string]any)["id"].(string)
	}
	x := item("x", "")
	y := item("y", `[{"rel":"relates-to","id":"`+x+`"}]`)
	z := item("z", `[{"rel":"relates-to","id":"`+x+`"}]`)
	back = h.ok("work_get", map[string]any{"id": x})["item"].(map[string]any)["referenced_by"].([]any)
	if len(back) != 2 || back[0].(map[string]any)["id"] != z || back[1].(map[string]any)["id"] != y {
		t.Fatalf("board referenced_by = %v, want %s then %s", back, z, y)
	}
	// A malformed id is a SCHEMA error, not "no such item".
	h.fails("work_get", map[string]any{"id": "01JDQ3"}, "SCHEMA")
	h.fails("work_events", map[string]any{"id": "01JDQ3"}, "SCHEMA")
	h.fails("work_claim", map[string]any{"id": "01JDQ3", "actor_human": "d"}, "SCHEMA")
	// Every failure has a code, a bad status filter included.
	h.fails("work_list", map[string]any{"status": "blocked"}, "SCHEMA")
}
