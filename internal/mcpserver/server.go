// Package mcpserver is git ideate's MCP stdio server: the record, board and
// steering tools over the same library calls as the CLI. Registering tools
// touches nothing on disk; the repository is opened on the first call.
// Every call reads the current refs, so writes by other processes (the CLI,
// hooks, other servers) are seen on the next call.
//
// # Why not mcp-go's server
//
// The server speaks the MCP stdio protocol itself (JSON-RPC 2.0, one
// message per line: initialize, ping, tools/list, tools/call) and validates
// arguments against its own hand-written schemas. mcp-go's server package
// links github.com/santhosh-tekuri/jsonschema/v6, whose package init
// compiles every JSON Schema meta-schema: 7.8 ms and 1.7 MB on every start
// of the binary (GODEBUG=inittrace=1 on this machine), which every CLI call
// and hook would pay since they are the same binary. The tests drive this
// server with mcp-go's client.
//
// # Results
//
// A success carries the payload both as structuredContent and as the same
// JSON in a text block (hosts differ in which they show the model). A
// failure is a tool result with isError and the envelope
// {"ok":false,"code","message","reason"} (message and reason are the same
// sentence; both keys are kept for clients of the existing implementation).
// Arguments that fail the input schema get the same envelope with code
// SCHEMA and a message starting "input validation failed" (the reference
// answers those with a bare text instead; see docs/CONTRACT-DIFFERENCES.md).
// Argument keys a tool does not know are ignored, as the reference does.
package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/steering"
)

// Name is the server's MCP identity.
const Name = "ideate"

// Protocol versions this server speaks, newest first.
var protocolVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

const instructions = "git ideate: an append-only process record (record_*), a delegation board with leased claims (work_*) and steering items (steering_*, usually gated off), all stored in this git repository's refs/ideate/*. Reads are paged: follow next_cursor until it is null."

// Backend is what the tools call. The Opener returns it on first use.
type Backend struct {
	Record *record.Store
	Board  *board.Store
	// Steering opens the steering store as the settings stand now. It is
	// called on every steering call, so that turning steering on or off
	// (.ideate.json, git config ideate.steering) takes effect without a
	// restart. nil, or a store not enabled: the steering tools answer
	// GATED; an error (an unreadable .ideate.json) is their answer.
	Steering func() (*steering.Store, error)
	// Session is the session id writes carry: the host's session when it
	// passed one, else the server's mcp-<ULID>.
	Session string
	// Git is the repository (plan_import's lock); Plan loads the sprint
	// numbered n (0: the highest-numbered) from the working tree. nil: the
	// plan tools answer INTERNAL.
	Git  *gitstore.Store
	Plan func(ctx context.Context, n int) (*plan.Sprint, error)
	// Exec is the execution log plan_check stores its verdict on; nil:
	// the check is not stored.
	Exec *execlog.Log
	// Gates builds the gate registry and the verdict log gate_run judges
	// and stores with (the CLI's `git ideate gate`); nil: gate_run
	// answers INTERNAL.
	Gates func() (*gates.Registry, gates.VerdictLog, error)
	// TaskDeps is what test_run reads (the tasks, the repository, the
	// plan); nil: test_run answers INTERNAL.
	TaskDeps func() (gates.Deps, error)
	// Revision builds the revision loop (escalations reads it); nil:
	// escalations answers INTERNAL.
	Revision func() (revision.Deps, error)

	steering *steering.Store // the store of this call (steering tools)
}

// Opener builds the backend on the first tool call.
type Opener func() (*Backend, error)

// Server is one MCP server.
type Server struct {
	version string
	open    Opener
	tools   []toolDef
	byName  map[string]*toolDef

	mu      sync.Mutex
	backend *Backend
}

// New registers every tool.
func New(version string, open Opener) *Server {
	s := &Server{version: version, open: open, tools: append(append(append(tools(), execTools()...), retroTools()...), symbolTools()...), byName: map[string]*toolDef{}}
	for i := range s.tools {
		t := &s.tools[i]
		t.compiled = mustCompile(t.schema)
		s.byName[t.name] = t
	}
	return s
}

// ServeStdio serves on the process's stdin and stdout.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.Serve(ctx, in, out)
}

// Serve reads JSON-RPC messages, one per line, from in and writes responses
// to out until in ends; nothing but protocol is written to out.
//
// Tool calls take effect in the order they arrive, as if run one at a
// time: a call that writes starts only after every earlier call has
// answered, and every later call waits for it, so a read sent after a
// write (even before its answer came back) sees it. Consecutive read-only
// calls run side by side, at most eight at once; their answers may come
// back out of order (each carries its request's id).
//
// Every call runs under ctx: when it is done (the process got SIGINT or
// SIGTERM), calls in flight are cancelled — git processes they started are
// killed — and Serve returns ctx.Err() once they have answered, without
// waiting for in to end.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	var wmu sync.Mutex
	w := bufio.NewWriter(out)
	write := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		wmu.Lock()
		w.Write(b)
		w.WriteByte('\n')
		w.Flush()
		wmu.Unlock()
	}
	sem := make(chan struct{}, workersMax)
	run := &workers{jobs: make(chan func())}
	// order is taken in arrival order, and released by the call after
	// its answer is written: shared by a read (any method but a writing
	// tools/call), exclusive for a write.
	var order sync.RWMutex
	var wg sync.WaitGroup
	// stopped is set once Serve has stopped taking calls (ctx done);
	// guarded by stopMu, which wg.Add also holds, so no call is added
	// once Serve waits for the last ones.
	var stopMu sync.Mutex
	stopped := false
	// The reader blocks in a read that ctx cannot interrupt: it runs on
	// its own goroutine, and Serve returns when ctx is done without
	// waiting for it. It parses each line and hands the call on itself,
	// and runs a write where it is: a write holds the order lock
	// exclusively, so every later call waits for it whatever reads the
	// next line, and each hand-over between goroutines is a thread to
	// wake when calls come seconds apart, as an agent's do (the answer
	// to a ping after an idle moment took 0.2–0.3 ms against 0.1 back to
	// back).
	scanDone := make(chan struct{})
	go func() {
		defer close(scanDone)
		for sc.Scan() {
			if ctx.Err() != nil {
				return
			}
			line := sc.Bytes()
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var msg request
			if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" {
				write(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: -32700, Message: "parse error"}})
				continue
			}
			if msg.ID == nil {
				continue // a notification: nothing to answer
			}
			if msg.Method == "tools/call" {
				msg.call = new(callParams)
				if json.Unmarshal(msg.Params, msg.call) != nil {
					msg.call = nil // handle answers "invalid params"
				}
			}
			// Every request holds the order lock until answered: shared
			// for reads (initialize, ping, tools/list, a read-only tool),
			// exclusive for a tool that writes, so a write waits for what
			// came before it and everything after waits for the write.
			writes := msg.call != nil && !s.readOnlyCall(msg.call.Name)
			var release func()
			if writes {
				order.Lock()
				release = order.Unlock
			} else {
				order.RLock()
				release = order.RUnlock
			}
			stopMu.Lock()
			if stopped {
				stopMu.Unlock()
				release()
				return
			}
			wg.Add(1)
			stopMu.Unlock()
			if writes {
				write(s.handle(ctx, msg))
				release()
				wg.Done()
				continue
			}
			sem <- struct{}{}
			run.do(func() {
				defer func() { release(); <-sem; wg.Done() }()
				write(s.handle(ctx, msg))
			})
			// The worker was made ready on this thread's processor; the
			// read the loop goes back to blocks in a system call, and the
			// worker would wait for the runtime to notice (reads back to
			// back took 20 % longer): let it run first.
			runtime.Gosched()
		}
	}()
	select {
	case <-scanDone:
	case <-ctx.Done():
	}
	stopMu.Lock()
	stopped = true
	stopMu.Unlock()
	wg.Wait()
	run.stop()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return sc.Err()
}

// workers runs the calls of one Serve on goroutines that live as long as
// it does, at most as many as run at once, rather than on a new goroutine
// per call: a new goroutine starts with a small stack, and a tool call
// grew it again every time (runtime.newstack and copystack were 5 % of
// the server's CPU in an append run, pprof).
type workers struct {
	jobs chan func()
	mu   sync.Mutex
	n    int // workers started
}

// do runs fn on an idle worker, or on a new one while fewer than
// workersMax run, or else on the next worker to be free.
func (w *workers) do(fn func()) {
	select {
	case w.jobs <- fn:
		return
	default:
	}
	w.mu.Lock()
	start := w.n < workersMax
	if start {
		w.n++
	}
	w.mu.Unlock()
	if !start {
		w.jobs <- fn
		return
	}
	go func() {
		for ; fn != nil; fn = <-w.jobs {
			fn()
		}
	}()
}

// stop ends the idle workers; call it once no job is running or to come.
func (w *workers) stop() { close(w.jobs) }

// workersMax bounds the workers: Serve runs at most eight calls at once.
const workersMax = 8

// readOnlyCall reports whether the tool named is read-only (an unknown
// tool is answered at once and touches nothing).
func (s *Server) readOnlyCall(name string) bool {
	t, ok := s.byName[name]
	return !ok || t.readOnly
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	// call is a tools/call's params, decoded once by Serve (nil: they
	// are not an object of that form).
	call *callParams
}

// callParams are the params of a tools/call.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *Server) handle(ctx context.Context, m request) (resp response) {
	resp = response{JSONRPC: "2.0", ID: m.ID}
	defer func() {
		if r := recover(); r != nil {
			resp.Result, resp.Error = nil, &rpcError{Code: -32603, Message: "internal error"}
		}
	}()
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Params, &p)
		v := protocolVersions[0]
		for _, pv := range protocolVersions {
			if pv == p.ProtocolVersion {
				v = pv
			}
		}
		resp.Result = map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": Name, "version": s.version},
			"instructions":    instructions,
		}
	case "ping":
		resp.Result = struct{}{}
	case "tools/list":
		list := make([]map[string]any, 0, len(s.tools))
		for _, t := range s.tools {
			tl := map[string]any{"name": t.name, "description": t.desc, "inputSchema": json.RawMessage(t.schema)}
			if t.readOnly {
				tl["annotations"] = map[string]any{"readOnlyHint": true}
			}
			list = append(list, tl)
		}
		resp.Result = map[string]any{"tools": list}
	case "tools/call":
		p := m.call
		if p == nil {
			resp.Error = &rpcError{Code: -32602, Message: "invalid params"}
			return
		}
		t, ok := s.byName[p.Name]
		if !ok {
			resp.Error = &rpcError{Code: -32602, Message: "unknown tool " + p.Name}
			return
		}
		resp.Result = s.Call(ctx, t.name, p.Arguments)
	default:
		resp.Error = &rpcError{Code: -32601, Message: "method not found: " + m.Method}
	}
	return resp
}

// ToolResult is an MCP tool result.
type ToolResult struct {
	Content           []textContent `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (s *Server) backendFor() (*Backend, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backend != nil {
		return s.backend, nil
	}
	b, err := s.open()
	if err != nil {
		return nil, err
	}
	s.backend = b
	return b, nil
}

// Call runs one tool with raw JSON arguments (nil means {}) under ctx.
func (s *Server) Call(ctx context.Context, name string, raw json.RawMessage) *ToolResult {
	t, ok := s.byName[name]
	if !ok {
		return errorResult(apperr.New(apperr.Schema, "no tool %s", name))
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var st *steering.Store
	if t.gated {
		// The steering gate answers before anything else, whatever the
		// arguments, with the same error as the CLI's.
		b, err := s.backendFor()
		if err != nil {
			return errorResult(err)
		}
		if b.Steering != nil {
			if st, err = b.Steering(); err != nil {
				return errorResult(err)
			}
		}
		if err := st.Gate(); err != nil {
			return errorResult(err)
		}
	}
	var args any
	if err := json.Unmarshal(raw, &args); err != nil {
		return validationResult("arguments are not JSON")
	}
	if msg := t.compiled.validate(args, ""); msg != "" {
		return validationResult(msg)
	}
	b, err := s.backendFor()
	if err != nil {
		return errorResult(err)
	}
	call := *b
	call.steering = st
	out, err := t.run(ctx, &call, raw)
	if err != nil {
		return errorResult(err)
	}
	text, jerr := marshal(out)
	if jerr != nil {
		return errorResult(apperr.Wrap(apperr.Internal, jerr, "result does not serialize"))
	}
	// The structured content is the text's bytes, not out encoded again.
	return &ToolResult{Content: []textContent{{"text", text}}, StructuredContent: json.RawMessage(text)}
}

// validationResult is the answer to arguments that fail the input schema:
// a SCHEMA error like any other, so that every failure carries a code.
func validationResult(msg string) *ToolResult {
	return errorResult(apperr.New(apperr.Schema, "input validation failed: %s", msg))
}

type envelope struct {
	OK      bool   `json:"ok"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
}

func errorResult(err error) *ToolResult {
	code := apperr.CodeOf(err)
	msg, _ := secretgate.Scan(apperr.Message(err)) // a sentence may quote a caller's value
	env := envelope{OK: false, Code: string(code), Message: msg, Reason: msg}
	text, _ := marshal(env)
	return &ToolResult{Content: []textContent{{"text", text}}, StructuredContent: env, IsError: true}
}

func marshal(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
