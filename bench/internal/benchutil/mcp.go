package benchutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// MCP is a client of one `git-ideate mcp` process on stdio.
type MCP struct {
	in  io.Writer
	out *bufio.Scanner
	id  int
	// Pid is the server's process id.
	Pid int
}

// Call sends one request and returns its result and the time from the
// request's first byte to the answer's last; an error answer ends the
// benchmark.
func (c *MCP) Call(method string, params any) (json.RawMessage, time.Duration) {
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	t0 := time.Now()
	c.in.Write(append(b, '\n'))
	for c.out.Scan() {
		// The call's time ends when its answer's last byte has arrived;
		// decoding it is this client's cost, not the server's: 0.71–0.83
		// ms for a first page at 10,000 records (63 KB; go test -bench,
		// five runs), which every read figure before included.
		d := time.Since(t0)
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(c.out.Bytes(), &m) == nil && m.ID == c.id {
			if m.Error != nil {
				Must(fmt.Errorf("%s: %s", method, m.Error))
			}
			return m.Result, d
		}
	}
	Must(fmt.Errorf("server closed"))
	return nil, 0
}

// toolResult is what a tools/call answers.
type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// checked returns a tools/call result's payload (its text block); a tool
// error ends the benchmark.
func checked(name string, raw json.RawMessage) json.RawMessage {
	var r toolResult
	Must(json.Unmarshal(raw, &r))
	if len(r.Content) != 1 {
		Must(fmt.Errorf("%s: %d content blocks", name, len(r.Content)))
	}
	if r.IsError {
		Must(fmt.Errorf("%s failed: %s", name, r.Content[0].Text))
	}
	return json.RawMessage(r.Content[0].Text)
}

// Tool calls an MCP tool and returns its structured result and the time
// Call measures.
func (c *MCP) Tool(name string, args map[string]any) (json.RawMessage, time.Duration) {
	raw, d := c.Call("tools/call", map[string]any{"name": name, "arguments": args})
	return checked(name, raw), d
}

// Pipeline sends every tool call in calls (each {"name", "arguments"})
// before reading any answer, as a client that does not wait would, then
// waits for all of them, and returns the wall time of the whole batch.
func (c *MCP) Pipeline(calls []map[string]any) time.Duration {
	var buf []byte
	want := map[int]bool{}
	for _, tc := range calls {
		c.id++
		want[c.id] = true
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call", "params": tc})
		buf = append(append(buf, b...), '\n')
	}
	t0 := time.Now()
	c.in.Write(buf)
	for len(want) > 0 && c.out.Scan() {
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(c.out.Bytes(), &m) == nil && want[m.ID] {
			checked("a pipelined call", m.Result)
			delete(want, m.ID)
		}
	}
	if len(want) > 0 {
		Must(fmt.Errorf("server closed"))
	}
	return time.Since(t0)
}

// StartMCP starts `bin mcp` in repo and initializes the session; stop
// closes its input and waits for it.
func StartMCP(bin, repo string) (c *MCP, stop func()) {
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = repo
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	Must(cmd.Start())
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	c = &MCP{in: in, out: sc, Pid: cmd.Process.Pid}
	c.Call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "0"}})
	in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return c, func() { in.Close(); cmd.Wait() }
}
