package hooks

// Hook is one entry of the hook table: an event git ideate handles and how
// the host is asked to run the hook command for it. The plugin's
// hooks/hooks.json at the repository root and the .claude/settings.json
// that `git ideate init` writes both hold exactly these entries (a test
// compares the plugin's file with Hooks).
type Hook struct {
	Event   string
	Matcher string // the host's matcher ("" for none)
	If      string // the host's permission-rule filter on tool events ("" for none)
	Timeout int    // seconds
	// Gate marks an entry that runs a stop gate: its command is the hook
	// command followed by GateFlag, and it judges without capturing.
	Gate bool
}

// GateFlag follows the hook command in the entries that run a stop gate.
const GateFlag = "--gate"

// ToolMatcher selects the tool calls the role guard and the dispatch
// binding look at: the tools that write, and every MCP tool (whose writes
// the guard cannot see; an anchored regex, as a matcher with other
// characters than letters and '|' is one). Reads are not gated.
const ToolMatcher = "^(Write|Edit|MultiEdit|NotebookEdit|Bash|Agent|mcp__.*)$"

// StopGateTimeout is the timeout of the stop gate entries, in seconds: a
// gate runs the task's tests, and a hook past its timeout is killed and
// its decision lost.
const StopGateTimeout = 600

// Command is the command line of h, given the hook command.
func (h Hook) Command(hookCommand string) string {
	if h.Gate {
		return hookCommand + " " + GateFlag
	}
	return hookCommand
}

// table is the one list of events git ideate acts on, each with its
// handler. SessionStart has no matcher, so compact and fork sessions are
// primed too; SessionEnd gets 2 s because the host gives all SessionEnd
// hooks together 1.5 s unless a settings file asks for more.
// PreToolUse runs the dispatch binding and the role guard on the tools of
// ToolMatcher, with a short timeout (the allow path reads two small files
// and one ref). PostToolUse runs on every tool (each call is captured, see
// transcripts.go), records a commit for Bash lines that make one and
// ends the cost gate's remembered run of an expensive one (costrun.go);
// PostToolUseFailure (Bash) ends that of a failed one. UserPromptSubmit
// captures the prompt, Stop copies the session's transcript. SubagentStop has the catch-all capture entry and, per
// execution role, an entry anchored on the agent type, plugin-qualified or
// not (a matcher with ':' is an unanchored regex, so `git-ideate:red-worker`
// alone would also select `git-ideate:red-worker-extra`), that runs the
// role's gate.
// preToolTimeout is the PreToolUse entry's timeout, in seconds.
const preToolTimeout = 10

var table = []struct {
	Hook
	run handler
}{
	{Hook{Event: "SessionStart", Timeout: 30}, sessionStart},
	{Hook{Event: "SubagentStart", Timeout: 30}, subagentStart},
	{Hook{Event: "SessionEnd", Timeout: 2}, sessionEnd},
	{Hook{Event: "PreCompact", Timeout: 30}, preCompact},
	{Hook{Event: "SubagentStop", Timeout: 30}, subagentStop},
	{Hook{Event: "SubagentStop", Matcher: "^(" + PluginName + ":)?red-worker$", Timeout: StopGateTimeout, Gate: true}, nil},
	{Hook{Event: "SubagentStop", Matcher: "^(" + PluginName + ":)?scaffolder$", Timeout: StopGateTimeout, Gate: true}, nil},
	{Hook{Event: "SubagentStop", Matcher: "^(" + PluginName + ":)?" + PostPlanner + "$", Timeout: StopGateTimeout, Gate: true}, nil},
	{Hook{Event: "SubagentStop", Matcher: "^(" + PluginName + ":)?green-worker$", Timeout: StopGateTimeout, Gate: true}, nil},
	{Hook{Event: "PreToolUse", Matcher: ToolMatcher, Timeout: preToolTimeout}, nil},
	{Hook{Event: "PostToolUse", Timeout: 30}, postToolUse},
	{Hook{Event: "PostToolUseFailure", Timeout: 10}, postToolUseFailure},
	{Hook{Event: "PermissionDenied", Timeout: 10}, permissionDenied},
	{Hook{Event: "UserPromptSubmit", Timeout: 10}, userPromptSubmit},
	{Hook{Event: "Stop", Timeout: 30}, stop},
	{Hook{Event: "TaskCompleted", Timeout: 30}, taskCompleted},
}

// Hooks returns the hook table, in the order init writes it.
func Hooks() []Hook {
	out := make([]Hook, len(table))
	for i, e := range table {
		out[i] = e.Hook
	}
	return out
}

// handlerOf is the handler of event, nil for the events git ideate
// ignores.
func handlerOf(event string) handler {
	for _, e := range table {
		if e.Event == event && e.run != nil {
			return e.run
		}
	}
	return nil
}
