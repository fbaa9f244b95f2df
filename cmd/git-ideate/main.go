// Command git-ideate is git ideate: the process record, the delegation
// board, the execution discipline (plans, tasks, gates, the revision loop),
// the MCP server and the hook handler, stored in refs/ideate/* of the
// repository. Installed on PATH as git-ideate, it runs as `git ideate …`;
// the plugin's launcher and hooks run it directly.
package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/secretgate"
)

// CLI is the command tree.
type CLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
	Chdir   string           `short:"C" name:"chdir" placeholder:"DIR" help:"Run as if started in DIR."`

	Record      RecordCmd            `cmd:"" help:"The append-only process record on refs/ideate/record."`
	Work        corecmd.WorkCmd      `cmd:"" help:"The delegation board: work items with leased claims on refs/ideate/board/items/*."`
	Steering    corecmd.SteeringCmd  `cmd:"" help:"Steering items (project principles) on refs/ideate/steering; gated off unless enabled."`
	Telemetry   corecmd.TelemetryCmd `cmd:"" help:"Print this clone's telemetry counters."`
	Mcp         McpCmd               `cmd:"" name:"mcp" help:"Serve the record, board and steering tools over MCP on stdio."`
	Hook        HookCmd              `cmd:"" help:"Handle one Claude Code hook event: its JSON payload on stdin (always exits 0)."`
	Sync        SyncCmd              `cmd:"" help:"Share the record, board, steering and notes through a git remote (fetch, merge, push with leases)."`
	Test        TestCmd              `cmd:"" help:"Classify test runner output into one outcome per test (PASS, FAIL_ASSERT, FAIL_STUB, BUILD_FAIL, …)."`
	Init        InitCmd              `cmd:"" help:"Wire this repository for git ideate without the plugin: Claude Code hooks and MCP server in .claude/settings.json and .mcp.json, fetch refspecs, .ideate.json."`
	Man         ManCmd               `cmd:"" help:"Print the git-ideate(1) manual page, or install it where man (and so git ideate --help) finds it."`
	Plan        PlanCmd              `cmd:"" help:"The playbook's planning artifacts under docs/agents/sprint<N>/: check them (the planning→execution gate) or show them."`
	Task        TaskCmd              `cmd:"" help:"Tasks' worktrees: start (claim + a linked worktree at the task's base), list, scope, complete, release, abandon."`
	Exec        ExecCmd              `cmd:"" help:"The execution log on refs/ideate/exec: print it as the playbook's execution.log, or export the file."`
	Escalations EscalationsCmd       `cmd:"" help:"List the escalations on the execution log (halted chains, collected failures, scope defects, stalls), newest first; --check-wave N runs the no-progress guard first."`
	Scaffold    ScaffoldCmd          `cmd:"" help:"The post-RED scaffold step for a task's worktree: delete the RED shims, write one stub per symbol they or the plan declare (the body fails with SUB-AGENT-TODO), never touch a symbol with a body; each action on the execution log; commits nothing."`
	Symbols     SymbolsCmd           `cmd:"" help:"Symbol look-ups by qualified identity over the working tree (Go, Python, JavaScript, TypeScript, Rust): find a name, list a file's definitions."`
	Gate        GateCmd              `cmd:"" help:"Judge a task's committed worktree with a gate (red, scaffold, green, structure, final), store the verdict in the execution log and print it; exit 0 PASS, 3 FAIL, 4 UNVERIFIABLE."`
	Memory      MemoryCmd            `cmd:"" help:"The team's retrospective memory in docs/agents/memory.md: role-scoped lessons (add, list, check); never one that relaxes an invariant."`
	Transcripts TranscriptsCmd       `cmd:"" help:"The clone's capture of prompts, tool calls and transcripts under .git/ideate/transcripts: its size (du) and the manual cut (prune)."`
	Serve       ServeCmd             `cmd:"" help:"Serve a read-only web page of the sprint on a loopback port: waves, task states, attempts, verdicts, the board, escalations, the retro's counts and the record, following new commits live."`
	Retro       RetroCmd             `cmd:"" help:"The retrospective's input: failed verdicts by reason class, escalations, feedback and sync conflicts since the last planning, grouped into patterns with counts and evidence, recurring ones first."`
	Doctor      DoctorCmd            `cmd:"" help:"Say how this system holds a bound worker's commands: Landlock confinement (its ABI), or the guard's reading of commands, the weaker mode."`
}

func main() {
	if corecmd.VersionOnly(os.Args[1:]) {
		// Answered from the binary alone, so it sets up nothing.
		os.Stdout.WriteString(corecmd.VersionString() + "\n")
		os.Exit(corecmd.ExitOK)
	}
	ctx, sig := corecmd.StartProcess()
	if len(os.Args) > 1 && os.Args[1] == "confine" {
		// The confining entry: its command's own exit status, and a
		// signal ends the command's group before the check runs.
		sig.Watch()
		code := runConfine(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		sig.Close()
		os.Exit(code)
	}
	if eagerSignals(os.Args[1:]) {
		sig.Watch()
	}
	code := run(ctx, os.Args[1:], &Env{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Exiting: true})
	sig.Close()
	os.Exit(code)
}

// eagerSignals reports whether args name a long-lived command, which
// watches for signals from its start: the MCP server, the sprint view and
// a worktree's monitor end cleanly on SIGTERM.
func eagerSignals(args []string) bool {
	w := corecmd.CommandWords(args)
	return len(w) > 0 && (w[0] == "mcp" || w[0] == "serve")
}

// run parses args, runs the command under ctx and returns the exit code.
func run(ctx context.Context, args []string, env *Env) int {
	defer env.Close()
	if h, ok := hookLine(args); ok {
		return corecmd.RunCommand(env, "", "hook", true, func() error { return h.Run(ctx, env) })
	}
	args, handled := helpWords(args, env)
	if handled {
		return 0
	}
	if corecmd.VersionOnly(args) {
		// What kong's version flag prints, without building kong's model.
		fmt.Fprintln(env.Out, corecmd.VersionString())
		return corecmd.ExitOK
	}
	cli := grammar(args)
	exited := -1
	parser, err := kong.New(cli, append(kongOptions(),
		kong.UsageOnError(),
		kong.Writers(env.Out, env.Err),
		kong.Exit(func(code int) { exited = code; panic(exitPanic{}) }),
		kong.Bind(env),
		kong.BindTo(ctx, (*context.Context)(nil)),
	)...)
	if err != nil {
		fmt.Fprintf(env.Err, "git ideate: %v\n", err)
		return corecmd.ExitInternal
	}
	code, done := func() (code int, done bool) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(exitPanic); ok {
					code, done = exited, true
					return
				}
				panic(r)
			}
		}()
		if len(args) == 0 {
			args = []string{"--help"}
		}
		kctx, err := parser.Parse(joinDashValues(parser.Model, args))
		if err != nil {
			msg, _ := secretgate.Scan(err.Error())
			fmt.Fprintf(env.Err, "git ideate: %s: %s\n", apperr.Schema, msg)
			if kctx != nil && isHookPath(kctx) || corecmd.HookLine(args) {
				return corecmd.ExitOK, true // a hook path never fails its caller, not even on a bad flag
			}
			return corecmd.ExitUsage, true
		}
		return corecmd.RunCommand(env, chdirOf(cli), commandPath(kctx), isHookPath(kctx), func() error { return kctx.Run(env) }), true
	}()
	if done {
		return code
	}
	return corecmd.ExitOK
}

type exitPanic struct{}

// hookLine recognises the two command lines the hook entries run,
// `hook` and `hook --gate` (hooks.Hook.Command), as the HookCmd kong
// would parse from them. The hook handler runs before and after every
// tool call of every agent, and kong's model of even the narrowed tree
// was a tenth of a bound worker's PreToolUse; any other line, with an
// event, -C or --help, is kong's to parse.
func hookLine(args []string) (*HookCmd, bool) {
	switch {
	case len(args) == 1 && args[0] == "hook":
		return &HookCmd{}, true
	case len(args) == 2 && args[0] == "hook" && args[1] == hooks.GateFlag:
		return &HookCmd{Gate: true}, true
	}
	return nil, false
}

// joinDashValues lets a flag that takes a value take one starting with
// "-" (a PEM block in --rationale, a negative number), as getopt does for
// an option with a required argument: `--flag -x` becomes `--flag=-x`
// for the flags of the named command and the root. Boolean flags are left
// alone, so `--json --limit 5` still reads as two flags.
func joinDashValues(app *kong.Application, args []string) []string {
	takes := map[string]bool{}
	node := app.Node
	add := func(n *kong.Node) {
		for _, f := range n.Flags {
			if f.IsBool() || f.IsCounter() {
				continue
			}
			takes["--"+f.Name] = true
			if f.Short != 0 {
				takes["-"+string(f.Short)] = true
			}
		}
	}
	add(node)
	for _, w := range corecmd.CommandWords(args) {
		var next *kong.Node
		for _, c := range node.Children {
			if c.Name == w {
				next = c
			}
		}
		if next == nil {
			break
		}
		node = next
		add(node)
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if takes[a] && i+1 < len(args) && strings.HasPrefix(args[i+1], "-") && args[i+1] != "-" {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// kongOptions are the options every parser of the command tree shares
// (the one run builds and the one the man page is generated from).
func kongOptions() []kong.Option {
	return []kong.Option{
		kong.Name("git ideate"),
		kong.Description("A process record and delegation board for coding agents, kept in refs/ideate/* of this repository.\n\n" + corecmd.ExitStatusHelp()),
		kong.Vars{"version": corecmd.VersionString()},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.ValueFormatter(helpValue),
	}
}

// helpValue is a flag's help text, marked "(required)" when it is.
func helpValue(v *kong.Value) string {
	h := kong.DefaultHelpValueFormatter(v)
	if v.Required {
		if h == "" {
			return "(required)"
		}
		return "(required) " + h
	}
	return h
}

// helpWords handles the words git users expect of a subcommand: `help`
// and `help <command…>` become `<command…> --help`, and `version` prints
// what --version prints. It returns the arguments to parse, or handled
// when it has answered.
func helpWords(args []string, env *Env) ([]string, bool) {
	words := corecmd.CommandWords(args)
	if len(words) == 0 {
		return args, false
	}
	switch words[0] {
	case "version":
		if len(words) == 1 {
			fmt.Fprintln(env.Out, corecmd.VersionString())
			return nil, true
		}
	case "help":
		var out []string
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a == "help" {
				out = append(out, args[i+1:]...)
				break
			}
			out = append(out, a)
		}
		return append(out, "--help"), false
	}
	return args, false
}

func isHookPath(ctx *kong.Context) bool {
	if ctx == nil || ctx.Selected() == nil {
		return false
	}
	_, ok := ctx.Selected().Target.Addr().Interface().(corecmd.HookPath)
	return ok
}

func commandPath(ctx *kong.Context) string {
	if ctx.Selected() == nil {
		return ""
	}
	return strings.TrimPrefix(ctx.Selected().Path(), "git ideate ")
}
