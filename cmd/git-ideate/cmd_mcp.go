package main

import (
	"context"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/corecmd"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/record"
)

// mcpMemoryLimit is the MCP server's soft memory limit (runtime/debug)
// while its live heap is small; see memoryLimitFor.
const mcpMemoryLimit = 24 << 20

// memoryLimitFor is the soft memory limit for a live heap of live bytes:
// mcpMemoryLimit, or half as much again as the live heap and 4 MiB more
// (the runtime's own memory) when that is larger, which happens past
// about 13 MiB live. A fixed limit below what a large board keeps alive
// (its index: 23 MiB live at about 18,000 items) made the collector run
// after every 1 MB allocated, 1.3 collections per MCP call; with the limit
// above the live heap, a collection comes every few dozen calls.
func memoryLimitFor(live uint64) int64 {
	return max(mcpMemoryLimit, int64(live+live/2)+4<<20)
}

// followLiveHeap sets the soft memory limit from the live heap once a
// second until ctx is done.
func followLiveHeap(ctx context.Context) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	set := int64(mcpMemoryLimit)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if l := memoryLimitFor(sample[0].Value.Uint64()); l != set {
			debug.SetMemoryLimit(l)
			set = l
		}
	}
}

// McpCmd serves the MCP tools on stdio.
type McpCmd struct{}

// Run serves until stdin closes. Nothing but protocol goes to stdout; the
// repository is opened on the first tool call, from the directory the
// server was started in.
func (c *McpCmd) Run(ctx context.Context, env *Env) error {
	// main turns the collector off for short CLI calls; a server lives for
	// a whole session, so it collects as usual, and harder near a soft
	// limit, which keeps its memory flat (134 MiB after 10k calls with the
	// collector off).
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(mcpMemoryLimit)
	lctx, stopLimit := context.WithCancel(ctx)
	defer stopLimit()
	go followLiveHeap(lctx)
	session := mcpSession(os.Getenv("CLAUDE_CODE_SESSION_ID"), time.Now())
	env.Session = session
	env.Server = true
	srv := mcpserver.New(corecmd.VersionString(), func() (*mcpserver.Backend, error) {
		return backendFor(env, session)
	})
	return srv.ServeStdio(ctx, mcpInput(env.In), env.Out)
}

// mcpInput is the server's input: stdin, after the request the launcher
// already read when it handed the connection over (GIT_IDEATE_MCP_PENDING;
// see bin/git-ideate: on a first launch it answers initialize itself
// while the binary is being got, then execs the server at the next
// request).
func mcpInput(in io.Reader) io.Reader {
	p := os.Getenv("GIT_IDEATE_MCP_PENDING")
	if p == "" {
		return in
	}
	os.Unsetenv("GIT_IDEATE_MCP_PENDING")
	return io.MultiReader(strings.NewReader(p+"\n"), in)
}

// mcpSession is the session id the server's writes carry: the host's own
// session (Claude Code passes CLAUDE_CODE_SESSION_ID to the MCP servers it
// starts, and its hooks record the same id), so that a session's MCP
// writes and its hook records share one id; else a fresh mcp-<ULID>. A
// value that is not one short printable line is not used.
func mcpSession(host string, now time.Time) string {
	host = strings.TrimSpace(host)
	ok := host != "" && len(host) <= 128 && utf8.ValidString(host)
	for _, r := range host {
		if !unicode.IsPrint(r) {
			ok = false
		}
	}
	if ok {
		return host
	}
	return "mcp-" + record.NewIDSource().New(now)
}
