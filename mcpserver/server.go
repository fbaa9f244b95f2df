// Package mcpserver is git ideate's MCP stdio server: the record, board and
// steering tools over the same library calls as the CLI. Registering tools
// touches nothing on disk; the repository is opened on the first call.
// Every call reads the current refs, so writes by other processes (the CLI,
// hooks, other servers) are seen on the next call.
//
// # Results
//
// A success carries the payload both as structuredContent and as the same
// JSON in a text block (hosts differ in which they show the model). A
// failure is a tool result with isError and the envelope
// {"ok":false,"code","message","reason"} (message and reason are the same
// sentence; both keys are kept for clients of the existing implementation).
package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/ideate/git-ideate/apperr"
	"github.com/ideate/git-ideate/board"
	"github.com/ideate/git-ideate/gitstore"
	"github.com/ideate/git-ideate/record"
	"github.com/ideate/git-ideate/steering"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Name is the server's MCP identity.
const Name = "ideate"

// Backend is what the tools call. Open returns it on first use; tests and
// the CLI supply their own.
type Backend struct {
	Git      *gitstore.Store
	Record   *record.Store
	Board    *board.Store
	Steering *steering.Store // nil or not enabled: steering tools answer GATED
	// SteeringErr, when set, is why steering could not be opened (an
	// unreadable .ideate.json); steering tools answer with it.
	SteeringErr error
	Session     string // the server's session id, mcp-<ULID>
}

// Opener builds the backend on the first tool call.
type Opener func() (*Backend, error)

// Server holds the MCP server and its lazily opened backend.
type Server struct {
	MCP *server.MCPServer

	open    Opener
	once    sync.Mutex
	backend *Backend
}

// New registers every tool on a new MCP server.
func New(version string, open Opener) *Server {
	s := &Server{open: open}
	s.MCP = server.NewMCPServer(Name, version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInputSchemaValidation(),
		server.WithInstructions("git ideate: an append-only process record (record_*), a delegation board with leased claims (work_*) and steering items (steering_*, usually gated off), all stored in this git repository's refs/ideate/*. Reads are paged: follow next_cursor until it is null."),
	)
	for _, t := range tools() {
		t := t
		tool := mcp.NewToolWithRawSchema(t.name, t.desc, json.RawMessage(t.schema))
		if t.readOnly {
			tool.Annotations.ReadOnlyHint = mcp.ToBoolPtr(true)
		}
		s.MCP.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.call(t, req), nil
		})
	}
	return s
}

// ServeStdio serves JSON-RPC on stdin/stdout until EOF.
func (s *Server) ServeStdio() error { return server.ServeStdio(s.MCP) }

func (s *Server) backendFor() (*Backend, error) {
	s.once.Lock()
	defer s.once.Unlock()
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

func (s *Server) call(t toolDef, req mcp.CallToolRequest) *mcp.CallToolResult {
	raw, err := json.Marshal(req.GetArguments())
	if err != nil {
		return errorResult(apperr.New(apperr.Schema, "arguments are not a JSON object"))
	}
	if t.gated {
		// The steering gate answers before anything else, whatever the arguments.
		b, err := s.backendFor()
		if err != nil {
			return errorResult(err)
		}
		if b.SteeringErr != nil {
			return errorResult(b.SteeringErr)
		}
		if b.Steering == nil || !b.Steering.Enabled() {
			return errorResult(apperr.New("GATED", "steering is gated off; set steering.enabled in .ideate.json (or git config ideate.steering true) to use it"))
		}
	}
	b, err := s.backendFor()
	if err != nil {
		return errorResult(err)
	}
	out, err := t.run(b, raw)
	if err != nil {
		return errorResult(err)
	}
	text, jerr := marshal(out)
	if jerr != nil {
		return errorResult(apperr.Wrap(apperr.Internal, jerr, "result does not serialize"))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: out}
}

type envelope struct {
	OK      bool   `json:"ok"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
}

func errorResult(err error) *mcp.CallToolResult {
	code := apperr.CodeOf(err)
	msg := apperr.Message(err)
	env := envelope{OK: false, Code: string(code), Message: msg, Reason: msg}
	text, _ := marshal(env)
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: env, IsError: true}
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

// decode parses tool arguments strictly (unknown keys are refused by the
// schema already).
func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return apperr.New(apperr.Schema, "arguments do not match the tool's parameters: %v", err)
	}
	return nil
}
