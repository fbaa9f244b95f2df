package main

import (
	"time"

	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/record"
)

// McpCmd serves the MCP tools on stdio.
type McpCmd struct{}

// Run serves until stdin closes. Nothing but protocol goes to stdout; the
// repository is opened on the first tool call, from the directory the
// server was started in.
func (c *McpCmd) Run(env *Env) error {
	session := "mcp-" + record.NewIDSource().New(time.Now())
	env.session = session
	srv := mcpserver.New(versionString(), func() (*mcpserver.Backend, error) {
		return env.Backend(session)
	})
	return srv.ServeStdio(env.In, env.Out)
}

// Backend opens the stores the MCP tools use, for this environment.
func (e *Env) Backend(session string) (*mcpserver.Backend, error) {
	// With ideate.remote set, the claim-lifecycle tools are
	// remote-authoritative, as the CLI verbs are.
	b, err := e.AuthBoard("")
	if err != nil {
		return nil, err
	}
	// A broken .ideate.json only affects the tools that read it.
	st, serr := e.Steering()
	return &mcpserver.Backend{Git: e.git, Record: e.rec, Board: b, Steering: st, SteeringErr: serr, Session: session}, nil
}
