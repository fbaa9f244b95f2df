// Package hooks is `git ideate hook`: the handlers of Claude Code's hook
// events. The host runs one hook process per event with a JSON payload on
// stdin; the handler primes the conversation with the process record and
// the board, or captures what just happened as a record, and never fails
// the host.
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
// Every other event does nothing and prints nothing. Capture handlers
// return no context and no decision. Context is quoted historical data in
// a labelled frame, never instructions; the SessionStart context aims to
// stay under ContextBudget characters and Render cuts any context at
// MaxContext.
//
// # Gates
//
// Blocking checks plug in as a Gate on the Dispatcher. A gate is consulted
// on PreToolUse, Stop and SubagentStop only (Gated), before the capture
// handler; it returns a *Decision, and a blocking one is rendered as the
// host expects for that event: hookSpecificOutput.permissionDecision
// "deny" with its reason on PreToolUse, the top-level decision "block"
// and reason on Stop and SubagentStop. A block skips the event's capture,
// since the action it announced did not happen; a gate that errs is
// skipped, so gates fail open. Exit codes stay 0: the JSON carries the
// decision.
package hooks
