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
// A success carries the payload once, as JSON in a text block: no tool
// declares an output schema, so none sends structuredContent (a copy of
// the text would double every message). A result over 4 MiB is refused
// with TOO_LARGE rather than sent. A failure is a tool result with isError and the envelope
// {"ok":false,"code","message","reason"} (message and reason are the same
// sentence; both keys are kept for clients of the existing implementation).
// Arguments that fail the input schema get the same envelope with code
// SCHEMA and a message starting "input validation failed" (the reference
// answers those with a bare text instead; see docs/CONTRACT-DIFFERENCES.md).
// Argument keys a tool does not know are ignored, as the reference does.
package mcpserver

import (
	"context"
	"encoding/json"
	"github.com/ideate/git-ideate/internal/scaffold"
	"slices"
	"strings"
	"sync"
	"time"

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

// TooLarge is a result too large to send.
const TooLarge apperr.Code = "TOO_LARGE"

// Name is the server's MCP identity.
const Name = "ideate"

// Protocol versions this server speaks, newest first.
var protocolVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

const instructions = "git ideate: an append-only process record (record_*), a delegation board with leased claims (work_*) and steering items (steering_*, usually gated off), all stored in this git repository's refs/ideate/*. Reads are paged: follow next_cursor until it is null. A string argument holds at most 64 KiB (content, spec, statement, output, rationale, note, text, feedback and evidence: 1 MiB); a longer one is refused with SCHEMA and nothing is written."

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
	// The builders below take the sprint a tool names (0: the
	// highest-numbered one), as the CLI's --sprint does.
	//
	// Gates builds the gate registry and the verdict log gate_run judges
	// and stores with (the CLI's `git ideate gate`); nil: gate_run
	// answers INTERNAL.
	Gates func(sprint int) (*gates.Registry, gates.VerdictLog, error)
	// TaskDeps is what test_run reads (the tasks, the repository, the
	// plan); nil: test_run answers INTERNAL.
	TaskDeps func(sprint int) (gates.Deps, error)
	// Revision builds the revision loop (escalations, task_attempt,
	// task_feedback, task_show and wave_check use it); nil: they answer
	// INTERNAL.
	Revision func(sprint int) (revision.Deps, error)
	// Tasks are the task commands' functions the CLI runs too (task
	// start, list, complete, release, abandon); nil: those tools answer
	// INTERNAL.
	Tasks TaskVerbs
	// Scaffold builds what the scaffold step reads and writes; nil: the
	// scaffold tool answers INTERNAL.
	Scaffold func(sprint int) (scaffold.TaskDeps, error)
	// Now is the clock for dates the tools fill in (memory_add); nil:
	// time.Now.
	Now func() time.Time

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
	s := &Server{version: version, open: open, tools: allTools(), byName: map[string]*toolDef{}}
	for i := range s.tools {
		t := &s.tools[i]
		t.compiled = mustCompile(t.schema)
		s.byName[t.name] = t
	}
	return s
}

// handle answers a request other than tools/call.
func (s *Server) handle(id json.RawMessage, method string, params json.RawMessage) (resp response) {
	resp = response{JSONRPC: "2.0", ID: id}
	defer func() {
		if r := recover(); r != nil {
			resp = errorResponse(id, codeInternal, "internal error")
		}
	}()
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if len(params) > 0 && json.Unmarshal(params, &p) != nil {
			return errorResponse(id, codeParams, "invalid params: initialize takes {protocolVersion, capabilities, clientInfo}")
		}
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
		resp.Result = map[string]any{"tools": s.List()}
	default:
		return errorResponse(id, codeMethod, "method not found: "+method)
	}
	return resp
}

// List is what tools/list answers: every tool with its description, input
// schema and annotations.
func (s *Server) List() []map[string]any {
	list := make([]map[string]any, 0, len(s.tools))
	for _, t := range s.tools {
		tl := map[string]any{"name": t.name, "description": t.desc, "inputSchema": json.RawMessage(t.schema)}
		switch {
		case t.sweeps:
			// It writes only the expiry of lapsed claims: doing that
			// again changes nothing.
			tl["annotations"] = map[string]any{"readOnlyHint": false, "idempotentHint": true}
		case t.readOnly:
			tl["annotations"] = map[string]any{"readOnlyHint": true}
		}
		list = append(list, tl)
	}
	return list
}

// ToolResult is an MCP tool result.
type ToolResult struct {
	Content []textContent `json:"content"`
	IsError bool          `json:"isError,omitempty"`
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
	var args any
	if err := json.Unmarshal(raw, &args); err != nil {
		return validationResult("arguments are not JSON")
	}
	if msg := t.compiled.sizes(args); msg != "" {
		return validationResult(msg)
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
		if next := nextStep(t.name, err); next != "" {
			err = apperr.Wrap(apperr.CodeOf(err), err, "%s.%s", apperr.Message(err), next)
		}
		return errorResult(err)
	}
	text, jerr := marshal(out)
	if jerr != nil {
		return errorResult(apperr.Wrap(apperr.Internal, jerr, "result does not serialize"))
	}
	if n := encodedLen(text); n > maxResult {
		return errorResult(apperr.New(TooLarge, "the result is %d bytes, over the %d a result may hold: narrow the call (a filter, a lower limit, include_content false)", n, maxResult))
	}
	// The result is sent once, as text: no tool declares an output
	// schema, so none sends structuredContent.
	return &ToolResult{Content: []textContent{{"text", text}}}
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
	return &ToolResult{Content: []textContent{{"text", text}}, IsError: true}
}

// encodedLen is how many bytes text takes as the JSON string the response
// carries it in (escaping can double it); measured only for a text large
// enough to matter.
func encodedLen(text string) int {
	if len(text) <= maxResult/2 {
		return len(text)
	}
	b, _ := json.Marshal(text)
	return len(b)
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

func allTools() []toolDef {
	return slices.Concat(tools(), execTools(), taskTools(), retroTools(), symbolTools())
}

// ReadOnly reports whether the server's tool name changes nothing (the
// tools annotated readOnlyHint).
func ReadOnly(name string) bool {
	for _, t := range allTools() {
		if t.name == name {
			return t.readOnly
		}
	}
	return false
}
