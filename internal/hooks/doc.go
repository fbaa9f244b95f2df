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
//	SubagentStart  context for the subagent: the session's digest and ready
//	               items, plus earlier reports of its agent type (AgentScope)
//	SessionEnd     record session-outcome (payload + transcript summary), then
//	               sweep (at most SweepMax)
//	PreCompact     capture the compaction-snapshot, recorded by the SessionStart
//	               "compact" that follows a compaction the host carried out
//	               (an abandoned one is dropped at the next PreCompact or at
//	               SessionEnd)
//	SubagentStop   record subagent-outcome; for the compaction summarizer (empty
//	               agent_type) record compaction-summary instead
//	PostToolUse    every tool: the payload, whole and redacted, to the
//	               transcript store (its task's log too when the agent is
//	               bound); Bash running `git commit` (see GitCommitDir;
//	               a confined worker's command is read inside its
//	               confining entry, its commit is its worktree's HEAD):
//	               record commit-boundary and note the commit on
//	               refs/notes/ideate; a bound agent's expensive Bash run
//	               that the cost gate let through is remembered with its
//	               worktree's fingerprint (costrun.go)
//	PostToolUseFailure  Bash: the same, for a run that failed ("Exit code N")
//	UserPromptSubmit  the prompt's payload to the transcript store
//	Stop           copy the session's transcript (what it gained since the
//	               last copy) into the transcript store; SessionEnd copies
//	               the tail, SubagentStop the agent's own transcript
//	TaskCompleted  record native-task-completion
//
// The transcript store (package transcripts, .git/ideate/transcripts/) is
// never staged whole: an execution agent's SubagentStart copies its task's
// slice read-only into the task's worktree (.transcripts/, ignored by git),
// and its catch-all SubagentStop removes it (see transcripts.go).
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
// The Dispatcher's Gates (a gates.Registry; without one nothing is gated)
// judge what PreToolUse and SubagentStop announce. Which gate is asked
// depends on the point and the agent's role:
//
//	PreToolUse    BeforeToolGates (the role guard "guard", then the
//	              bounded-cost gate "cost" on a bound agent's Bash call,
//	              with its task's scope and declared tests and the cost
//	              rules cached with the dispatch) on Write, Edit,
//	              MultiEdit, NotebookEdit, Bash, Agent and MCP tools
//	              (ToolMatcher; a guarded sub-agent uses only MCP tools
//	              Dispatcher.ReadOnlyTool vouches for);
//	              the hooks gather the facts (the agent's role and
//	              binding, its task's contract, a dispatch's task and the
//	              plan gate's verdict on it) and the guard decides; a
//	              refusal is stored through Dispatcher.Judge. A bound
//	              execution agent's Bash call that passes is answered
//	              allow with updatedInput when Dispatcher.Confine names
//	              a confining command line (git ideate confine: the
//	              command runs under Landlock, held to the role's files);
//	              without confinement the guard reads the command (the
//	              weaker mode) and a pass says nothing
//	SubagentStop  in the gate entries only (anchored matchers
//	              ^(git-ideate:)?<role>$, `git ideate hook --gate`, GateOnly):
//	              StopGates[role] (red-worker → red, scaffolder →
//	              scaffold, green-worker → green) for the agent's task,
//	              through Dispatcher.Judge, which stores the verdict; then
//	              the worker's .ideate/output.md goes to the task's ref as
//	              its attempt's output.md (Stores.CaptureOutput), whatever
//	              the verdict; the catch-all entry records the outcome and
//	              judges nothing
//	Stop          nothing: the main session's end is not a gate point; the
//	              supervisor runs the final gate as a command
//
// PASS says nothing. FAIL and UNVERIFIABLE both block, and so does a gate
// that errs or is not registered: a gate that could not judge never lets
// an action through. A block is hookSpecificOutput.permissionDecision
// "deny" on PreToolUse (never "ask", which a headless host refuses
// anyway) and the top-level decision "block" on SubagentStop, which sends
// the agent back to work. Exit codes stay 0: the JSON carries the
// decision. A payload that cannot be read decides nothing; a stop that
// was not judged leaves no verdict, which the supervisor sees as missing.
//
// # Binding an execution agent to its task
//
// The host links no Agent call to the agent it starts, and the model's
// words are not trusted. An execution role (red-worker, scaffolder or
// post-planner, green-worker; plugin-qualified or not: gates.RoleOf) is
// dispatched by an Agent call whose prompt names its task on a line
// "ideate-task: S1-01/T1"; the dispatch is denied unless that task has an
// open contract for that role (and without isolation: the task's worktree
// is ours), the plan's check passed and every task it waits for (its
// `Depends on:`, the waves before its own) passed GREEN. An approved dispatch is written
// under .git/ideate/dispatch/pending/<tool_use_id>.json with the guard
// policy read from the standards (test globs, shim marker, source
// extensions; also cached in .git/ideate/guard-policy.json for the main
// session). On the agent's first call the host's meta file
// (<transcript without .jsonl>/subagents/agent-<id>.meta.json, toolUseId)
// names the dispatch; failing that, the first line of the agent's
// transcript holds its prompt, whose ideate-task line must match an
// approved dispatch of the same role. The agent takes the dispatch with a
// claim file created once (claims/<tool_use_id>), so two agents never
// share one, and its binding (agents/<agent_id>.json) is created whole, so
// parallel first calls agree. An execution agent without a binding has
// every call denied, with what is missing; stopping, it is blocked once
// with the reason and then let go without a verdict. Files older than
// StaleAfter are swept when a dispatch is approved.
//
// The guard's facts come from the binding and one read of the task's
// contract (its ref): no scan of the repository on the allow path. The
// main session is held to "no production source" while a sprint
// executes, which is while .git/ideate/executing/ is not empty (the
// worktree manager keeps one file per open task); meanwhile a sub-agent
// bound to no task (general-purpose, Explore, another plugin's) writes
// nothing in the repository. Reviewers (structural-reviewer, final-gate,
// archivist) write nothing at all. SubagentStop blocks are
// counted per agent (reset when stop_hook_active is false); the reason
// says which of CLAUDE_CODE_STOP_HOOK_BLOCK_CAP (default 8) it is; the
// host honours that many and ends the agent at its next stop, and the
// stored verdict stands. A gated agent's subagent-outcome record is
// written only for a stop that is let through (or that the host ends).
package hooks
