// Package hooks is `git ideate hook`: the handlers of Claude Code's hook
// events. The host runs one hook process per event with a JSON payload on
// stdin; the handler primes the conversation with the process record and
// the board, or captures what just happened as a record, and never fails
// the host.
//
// It is the only package that knows Claude Code: the payload, the
// transcript (sub-package transcript, which only hooks imports), the hook
// table and the project files `git ideate init` merges into
// (.claude/settings.json, .mcp.json). What it hands down is host-neutral:
// record.SessionOutcome, record.CommitBoundaryInput, gates.Input.
//
// # Flow
//
// ReadPayload reads the payload tolerantly (every field optional, enums
// open, unknown fields kept in Payload.Fields). Dispatcher.Dispatch picks
// the handler by hook_event_name (or the event named on the command line),
// opens the repository through Dispatcher.Open only when the handler needs
// it, and returns a Response; Response.Render turns it into the host's
// output: exactly one JSON object on stdout, or nothing.
// Dispatcher.Run strings the three together and reports every problem as
// one line through Dispatcher.Warn, so the command always exits 0.
//
// The repository is the one containing the payload's cwd when that
// directory exists, else $CLAUDE_PROJECT_DIR, else the process's working
// directory. Outside a repository a hook writes nothing and leaves one
// note.
//
// # Events
//
//	SessionStart   sweep lapsed claims (at most SweepMax); context: the record
//	               digest and a board section naming the claims that sweep
//	               returned and the oldest ready items
//	SubagentStart  context for the subagent: the digest, scoped by its agent type
//	               (see AgentScope and ScopeWindow)
//	SessionEnd     record session-outcome (payload + transcript summary), then
//	               sweep (at most SweepMax)
//	PreCompact     record compaction-snapshot
//	SubagentStop   record subagent-outcome; for the compaction summarizer (empty
//	               agent_type) record compaction-summary instead
//	PostToolUse    Bash running `git commit` (see GitCommitDir): record
//	               commit-boundary and note the commit on refs/notes/ideate
//	TaskCompleted  record native-task-completion
//
// These events and how the host runs them are one table (Hooks): the
// dispatcher finds its handlers there, MergeSettings writes it into
// .claude/settings.json, and a test holds the plugin's hooks/hooks.json
// to it. Every other event does nothing and prints nothing. Capture handlers
// return no context and no decision. Context is quoted historical data in
// a labelled frame, never instructions; the SessionStart context aims to
// stay under ContextBudget characters and Render cuts any context at
// MaxContext.
//
// # Gates
//
// The Dispatcher's Gates (a gates.Registry) judge the action a Gated event
// announces: PreToolUse, Stop and SubagentStop. GateInput translates the
// payload into a gates.Input (the moment, the agent's role and id, the
// session, the directory, and for a tool its name, command, file paths
// and the agent type it would dispatch); each gate runs before the
// event's capture handler, in name order. PASS says nothing. FAIL and
// UNVERIFIABLE both block, and so does a gate that errs (gates.Registry.Run
// makes that UNVERIFIABLE): a gate that could not judge never lets an
// action through. A block is rendered as the host expects for the event:
// hookSpecificOutput.permissionDecision "deny" with the verdict as its
// reason on PreToolUse (never "ask", which a headless host refuses
// anyway), the top-level decision "block" and reason on Stop and
// SubagentStop, which sends the agent back to work. A block skips the
// event's capture, since the action it announced did not happen. Exit
// codes stay 0: the JSON carries the decision.
package hooks
