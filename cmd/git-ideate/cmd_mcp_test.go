package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// rpc drives the built binary as a stdio MCP server.
type rpc struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	mu  sync.Mutex
	got map[int]json.RawMessage
	out []string // every stdout line, to check nothing but protocol is written
	cv  *sync.Cond
}

// startMCP starts `git-ideate mcp` in dir; env adds KEY=value entries to
// the test's environment.
func startMCP(t *testing.T, dir string, env ...string) *rpc {
	t.Helper()
	r := &rpc{t: t, cmd: exec.Command(binPath, "mcp"), got: map[int]json.RawMessage{}}
	r.cv = sync.NewCond(&r.mu)
	r.cmd.Dir = dir
	r.cmd.Env = append(os.Environ(), env...)
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, _ := r.cmd.StdoutPipe()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line := sc.Text()
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			r.mu.Lock()
			r.out = append(r.out, line)
			if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
				if m.Result != nil {
					r.got[*m.ID] = m.Result
				} else {
					r.got[*m.ID] = m.Error
				}
			}
			r.cv.Broadcast()
			r.mu.Unlock()
		}
		r.mu.Lock()
		r.cv.Broadcast()
		r.mu.Unlock()
	}()
	t.Cleanup(func() { r.in.Close(); r.cmd.Wait() })
	r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	r.wait(0)
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rpc) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rpc) callAsync(id int, tool string, args map[string]any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	r.send(string(b))
}

func (r *rpc) wait(id int) json.RawMessage {
	r.t.Helper()
	return r.waitFor(id, 20*time.Second)
}

// waitFor waits up to d for the answer to id.
func (r *rpc) waitFor(id int, d time.Duration) json.RawMessage {
	r.t.Helper()
	deadline := time.Now().Add(d)
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if res, ok := r.got[id]; ok {
			return res
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no response to id %d", id)
		}
		go func() { time.Sleep(50 * time.Millisecond); r.mu.Lock(); r.cv.Broadcast(); r.mu.Unlock() }()
		r.cv.Wait()
	}
}

type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	// Out is the decoded text: the result's one copy of its payload.
	Out map[string]any `json:"-"`
}

func (r *toolResult) UnmarshalJSON(b []byte) error {
	type plain toolResult
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if len(r.Content) == 1 {
		json.Unmarshal([]byte(r.Content[0].Text), &r.Out)
	}
	return nil
}

func (r *rpc) call(id int, tool string, args map[string]any) toolResult {
	r.t.Helper()
	r.callAsync(id, tool, args)
	var res toolResult
	if err := json.Unmarshal(r.wait(id), &res); err != nil {
		r.t.Fatal(err)
	}
	return res
}

// The built binary serves MCP on stdio: concurrent requests are answered
// (matched by id), stdout carries only JSON-RPC, and writes made by the CLI
// at the same time are visible to the running server at once.
func TestMCP_StdioServerAndParity(t *testing.T) {
	dir := gt.NewRepo(t)
	r := startMCP(t, dir)

	// 40 concurrent appends, then every response matched by id.
	for i := 1; i <= 40; i++ {
		r.callAsync(i, "record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("mcp %d", i), "content": "c"})
	}
	ids := map[string]bool{}
	for i := 1; i <= 40; i++ {
		var res toolResult
		json.Unmarshal(r.wait(i), &res)
		if res.IsError {
			t.Fatalf("append %d: %+v", i, res)
		}
		ids[res.Out["id"].(string)] = true
	}
	if len(ids) != 40 {
		t.Fatalf("%d distinct ids", len(ids))
	}

	// Parity: a record written through the CLI is visible to the server at once.
	cliID := strings.TrimSpace(mustOK(t, bin(t, dir, "", "record", "append", "--kind", "finding", "--claim", "from the CLI")).out)
	res := r.call(100, "record_read", map[string]any{"limit": 1})
	recs := res.Out["records"].([]any)
	if recs[0].(map[string]any)["id"] != cliID {
		t.Fatalf("server does not see the CLI write: %+v", res)
	}
	// …and a claim made through the CLI refuses the server's claim.
	item := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", "t", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	mustOK(t, bin(t, dir, "", "work", "claim", "--id", item, "--human", "cli"))
	res = r.call(101, "work_claim", map[string]any{"id": item, "actor_human": "mcp"})
	if !res.IsError || res.Out["code"] != "NOT_CLAIMABLE" {
		t.Fatalf("server claim after CLI claim: %+v", res)
	}
	// The server's writes are visible to the CLI.
	res = r.call(102, "work_create", map[string]any{"title": "from mcp", "spec": "s", "spec_format": "f", "actor_human": "m"})
	mid := res.Out["item"].(map[string]any)["id"].(string)
	if out := mustOK(t, bin(t, dir, "", "work", "get", "--id", mid)).out; !strings.Contains(out, "from mcp") {
		t.Fatalf("CLI does not see the server's item: %s", out)
	}
	r.mu.Lock()
	for _, line := range r.out {
		if !strings.HasPrefix(line, `{"jsonrpc":"2.0"`) {
			t.Fatalf("stdout carries a non-protocol line: %q", line)
		}
	}
	r.mu.Unlock()
	gt.Fsck(t, dir)
}

// Turning steering on or off in .ideate.json takes effect on the running
// server's next call, and its GATED answer is the CLI's, word for word.
func TestMCP_SteeringGateReadPerCall(t *testing.T) {
	dir := gt.NewRepo(t)
	r := startMCP(t, dir)
	id := 0
	read := func() toolResult {
		id++
		return r.call(id, "steering_read", map[string]any{})
	}
	res := read()
	if !res.IsError || res.Out["code"] != "GATED" {
		t.Fatalf("steering_read before enabling: %+v", res)
	}
	cliRes := bin(t, dir, "", "steering", "read")
	if msg := res.Out["message"].(string); cliRes.code == 0 || !strings.Contains(cliRes.err, msg) {
		t.Fatalf("GATED differs between CLI and MCP:\nCLI: %s\nMCP: %s", cliRes.err, msg)
	}
	conf := filepath.Join(dir, ".ideate.json")
	if err := os.WriteFile(conf, []byte(`{"schema_version":10,"steering":{"enabled":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := read(); res.IsError {
		t.Fatalf("steering_read after enabling: %+v", res)
	}
	id++
	if res := r.call(id, "steering_put", map[string]any{"id": "GP-1", "kind": "principle", "statement": "Small commits"}); res.IsError {
		t.Fatalf("steering_put after enabling: %+v", res)
	}
	if err := os.WriteFile(conf, []byte(`{"schema_version":10,"steering":{"enabled":false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := read(); !res.IsError || res.Out["code"] != "GATED" {
		t.Fatalf("steering_read after disabling: %+v", res)
	}
	// git config ideate.steering turns it on as well.
	gt.Git(t, dir, "config", "ideate.steering", "true")
	if res := read(); res.IsError {
		t.Fatalf("steering_read after git config ideate.steering true: %+v", res)
	}
}

// The server's writes carry the host's session id when the host passes
// one (Claude Code sets CLAUDE_CODE_SESSION_ID for its MCP servers), so
// they share it with the session's hook records; else mcp-<ULID>.
func TestMCP_SessionFromHost(t *testing.T) {
	dir := gt.NewRepo(t)
	session := func(env ...string) string {
		r := startMCP(t, dir, env...)
		res := r.call(1, "record_append", map[string]any{"kind": "finding", "claim": "c", "content": "x"})
		if res.IsError {
			t.Fatalf("append: %+v", res)
		}
		row := r.call(2, "record_read", map[string]any{"id": res.Out["id"]}).Out["records"].([]any)[0]
		return row.(map[string]any)["source"].(map[string]any)["session_id"].(string)
	}
	host := "3b311f76-4634-48ab-b822-33299bd463ef"
	if got := session("CLAUDE_CODE_SESSION_ID=" + host); got != host {
		t.Fatalf("session_id = %q, want the host's %q", got, host)
	}
	if got := session("CLAUDE_CODE_SESSION_ID="); !strings.HasPrefix(got, "mcp-") {
		t.Fatalf("session_id without a host session = %q", got)
	}
	if got := session("CLAUDE_CODE_SESSION_ID=bad\nid"); !strings.HasPrefix(got, "mcp-") {
		t.Fatalf("session_id from an unprintable host value = %q", got)
	}
}

// TestMemoryLimitFor: the server's soft limit is the fixed one while the
// live heap is small, and stays half as much again above a large live
// heap, so a big board does not collect after every call.
func TestMemoryLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{{0, mcpMemoryLimit}, {13 << 20, mcpMemoryLimit}, {16 << 20, 28 << 20}, {23 << 20, 23<<20 + 23<<19 + 4<<20}} {
		if got := memoryLimitFor(c.live); got != c.want {
			t.Errorf("memoryLimitFor(%d MiB) = %.1f MiB, want %.1f", c.live>>20, float64(got)/(1<<20), float64(c.want)/(1<<20))
		}
		if got := memoryLimitFor(c.live); got < int64(c.live+c.live/2) {
			t.Errorf("memoryLimitFor(%d MiB) = %d: below 1.5 × the live heap", c.live>>20, got)
		}
	}
}
