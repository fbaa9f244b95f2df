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
}

// table is the one list of events git ideate acts on, each with its
// handler. SessionStart has no matcher, so compact and fork sessions are
// primed too; SessionEnd gets 2 s because the host gives all SessionEnd
// hooks together 1.5 s unless a settings file asks for more; PostToolUse
// runs only for Bash lines that look like a commit (GitCommitDir decides).
var table = []struct {
	Hook
	run handler
}{
	{Hook{Event: "SessionStart", Timeout: 30}, sessionStart},
	{Hook{Event: "SubagentStart", Timeout: 30}, subagentStart},
	{Hook{Event: "SessionEnd", Timeout: 2}, sessionEnd},
	{Hook{Event: "PreCompact", Timeout: 30}, preCompact},
	{Hook{Event: "SubagentStop", Timeout: 30}, subagentStop},
	{Hook{Event: "PostToolUse", Matcher: "Bash", If: "Bash(git commit*)", Timeout: 30}, postToolUse},
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
		if e.Event == event {
			return e.run
		}
	}
	return nil
}
