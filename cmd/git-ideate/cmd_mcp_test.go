package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
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

func startMCP(t *testing.T, dir string) *rpc {
	t.Helper()
	r := &rpc{t: t, cmd: exec.Command(binPath, "mcp"), got: map[int]json.RawMessage{}}
	r.cv = sync.NewCond(&r.mu)
	r.cmd.Dir = dir
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
	deadline := time.Now().Add(20 * time.Second)
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
	IsError           bool           `json:"isError"`
	StructuredContent map[string]any `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
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
		ids[res.StructuredContent["id"].(string)] = true
	}
	if len(ids) != 40 {
		t.Fatalf("%d distinct ids", len(ids))
	}

	// Parity: a record written through the CLI is visible to the server at once.
	cliID := strings.TrimSpace(mustOK(t, bin(t, dir, "", "record", "append", "--kind", "finding", "--claim", "from the CLI")).out)
	res := r.call(100, "record_read", map[string]any{"limit": 1})
	recs := res.StructuredContent["records"].([]any)
	if recs[0].(map[string]any)["id"] != cliID {
		t.Fatalf("server does not see the CLI write: %+v", res)
	}
	// …and a claim made through the CLI refuses the server's claim.
	item := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", "t", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	mustOK(t, bin(t, dir, "", "work", "claim", "--id", item, "--human", "cli"))
	res = r.call(101, "work_claim", map[string]any{"id": item, "actor_human": "mcp"})
	if !res.IsError || res.StructuredContent["code"] != "NOT_CLAIMABLE" {
		t.Fatalf("server claim after CLI claim: %+v", res)
	}
	// The server's writes are visible to the CLI.
	res = r.call(102, "work_create", map[string]any{"title": "from mcp", "spec": "s", "spec_format": "f", "actor_human": "m"})
	mid := res.StructuredContent["item"].(map[string]any)["id"].(string)
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
