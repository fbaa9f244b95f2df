// Command git-ideate is git ideate: a process record, a delegation board
// and an execution discipline for coding agents, stored in refs/ideate/*
// of the repository. Installed on PATH as git-ideate, it runs as
// `git ideate …`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/release"
	"github.com/ideate/git-ideate/internal/secretgate"
)

// version and commit are set with -ldflags "-X main.version=… -X
// main.commit=…"; otherwise they come from the build info: the module
// version and the vcs.revision go build stamps when it builds from a git
// checkout (go install ./cmd/git-ideate does).
var version, commit = "", ""

func versionString() string {
	v, c, dirty := version, commit, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if c == "" {
					c = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		// A build from source without a stamped version: this tree's
		// version, marked as a development build.
		v = release.Version + "-devel"
	}
	switch {
	case c == "":
		c = "commit unknown: built without VCS stamping"
	case dirty:
		c = "commit " + c + " with uncommitted changes"
	default:
		c = "commit " + c
	}
	return "git-ideate " + v + " (" + c + "; record format " + strconv.Itoa(record.FormatVersion) + ")"
}

// CLI is the command tree.
type CLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
	Chdir   string           `short:"C" name:"chdir" placeholder:"DIR" help:"Run as if started in DIR."`

	Record      RecordCmd      `cmd:"" help:"The append-only process record on refs/ideate/record."`
	Work        WorkCmd        `cmd:"" help:"The delegation board: work items with leased claims on refs/ideate/board/items/*."`
	Steering    SteeringCmd    `cmd:"" help:"Steering items (project principles) on refs/ideate/steering; gated off unless enabled."`
	Telemetry   TelemetryCmd   `cmd:"" help:"Print this clone's telemetry counters."`
	Mcp         McpCmd         `cmd:"" name:"mcp" help:"Serve the record, board and steering tools over MCP on stdio."`
	Hook        HookCmd        `cmd:"" help:"Handle one Claude Code hook event: its JSON payload on stdin (always exits 0)."`
	Sync        SyncCmd        `cmd:"" help:"Share the record, board, steering and notes through a git remote (fetch, merge, push with leases)."`
	Test        TestCmd        `cmd:"" help:"Classify test runner output into one outcome per test (PASS, FAIL_ASSERT, FAIL_STUB, BUILD_FAIL, …)."`
	Init        InitCmd        `cmd:"" help:"Wire this repository for git ideate without the plugin: Claude Code hooks and MCP server in .claude/settings.json and .mcp.json, fetch refspecs, .ideate.json."`
	Man         ManCmd         `cmd:"" help:"Print the git-ideate(1) manual page, or install it where man (and so git ideate --help) finds it."`
	Plan        PlanCmd        `cmd:"" help:"The playbook's planning artifacts under docs/agents/sprint<N>/: check them (the planning→execution gate) or show them."`
	Task        TaskCmd        `cmd:"" help:"Tasks' worktrees: start (claim + a linked worktree at the task's base), list, scope, complete, release, abandon."`
	Exec        ExecCmd        `cmd:"" help:"The execution log on refs/ideate/exec: print it as the playbook's execution.log, or export the file."`
	Escalations EscalationsCmd `cmd:"" help:"List the escalations on the execution log (halted chains, collected failures, scope defects, stalls), newest first; --check-wave N runs the no-progress guard first."`
	Scaffold    ScaffoldCmd    `cmd:"" help:"The post-RED scaffold step for a task's worktree: delete the RED shims, write one stub per symbol they or the plan declare (the body fails with SUB-AGENT-TODO), never touch a symbol with a body; each action on the execution log; commits nothing."`
	Symbols     SymbolsCmd     `cmd:"" help:"Symbol look-ups by qualified identity over the working tree (Go, Python, JavaScript, TypeScript, Rust): find a name, list a file's definitions."`
	Gate        GateCmd        `cmd:"" help:"Judge a task's committed worktree with a gate (red, scaffold, green, structure, final), store the verdict in the execution log and print it; exit 0 PASS, 3 FAIL, 4 UNVERIFIABLE."`
	Memory      MemoryCmd      `cmd:"" help:"The team's retrospective memory in docs/agents/memory.md: role-scoped lessons (add, list, check); never one that relaxes an invariant."`
	Transcripts TranscriptsCmd `cmd:"" help:"The clone's capture of prompts, tool calls and transcripts under .git/ideate/transcripts: its size (du) and the manual cut (prune)."`
	Retro       RetroCmd       `cmd:"" help:"The retrospective's input: failed verdicts by reason class, escalations, feedback and sync conflicts since the last planning, grouped into patterns with counts and evidence, recurring ones first."`
	Fsmonitor   FsmonitorCmd   `cmd:"" hidden:"" help:"Serve a task worktree's file-system monitor (task start runs it, detached)."`
}

// hookPath commands must never fail their caller: they exit 0 whatever
// happens and report problems on stderr.
type hookPath interface{ alwaysZero() }

func main() {
	if versionOnly(os.Args[1:]) {
		// Answered from the binary alone, so it sets up nothing (issue 19).
		os.Stdout.WriteString(versionString() + "\n")
		os.Exit(exitOK)
	}
	// A CLI call lives for milliseconds: collecting garbage costs more than
	// it frees. The soft limit keeps a long export or the MCP server sane.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(128 << 20)
	ctx, sig := newSignals()
	if eagerSignals(os.Args[1:]) {
		sig.watch()
	}
	osproc.SetBeforeGroup(sig.watch)
	code := run(ctx, os.Args[1:], &Env{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, exiting: true})
	sig.close()
	os.Exit(code)
}

// signals is the root context's signal handling. Once it watches, SIGINT
// or SIGTERM cancel ctx, which kills the processes in flight (each runs in
// a process group of its own, so a terminal's ^C reaches only this
// process) and ends waits for locks. The first signal also restores the
// default handling, so a second one ends the process at once, as does the
// first one when the command has not returned after signalGrace (a step
// that neither waits nor runs a process, such as a long export, does not
// watch ctx).
//
// It watches from the first process the call starts in a group of its own
// (osproc.Group calls watch), or from the start for the long-lived
// commands (eagerSignals). Until then a signal has its default effect: the
// process ends at once, as after kill -9, which the store is built to
// survive (a ref lock left behind is broken by the next writer once it has
// been unheld for a second; see gitstore.LockPolicy). Watching costs
// os/signal's loop and its locked thread, and a CLI record append, work
// claim or work list starts no process: without it an append took 7 % less
// wall and 10 % less CPU time, a work list 11 % less of each, a PreToolUse
// hook 4 % and 7 % (issue 19; medians of 200 interleaved calls).
type signals struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
}

// newSignals returns the root context and its signal handling, not yet
// watching.
func newSignals() (context.Context, *signals) {
	ctx, cancel := context.WithCancel(context.Background())
	return ctx, &signals{cancel: cancel, done: make(chan struct{})}
}

// watch starts watching for SIGINT and SIGTERM, once; it may be called
// from any goroutine.
func (s *signals) watch() {
	s.once.Do(func() {
		sctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		go func() {
			defer stop()
			select {
			case <-sctx.Done():
			case <-s.done:
				return
			}
			s.cancel()
			stop()
			select {
			case <-time.After(signalGrace):
				os.Exit(exitInterrupted)
			case <-s.done:
			}
		}()
	})
}

// close ends the watching, or keeps it from starting.
func (s *signals) close() {
	s.once.Do(func() {})
	close(s.done)
}

// eagerSignals reports whether args name a long-lived command, which
// watches for signals from its start: the MCP server and a worktree's
// monitor end cleanly on SIGTERM.
func eagerSignals(args []string) bool {
	w := commandWords(args)
	return len(w) > 0 && (w[0] == "mcp" || w[0] == "fsmonitor")
}

// signalGrace is how long a signalled command has to return on its own.
const signalGrace = 3 * time.Second

// run parses args, runs the command under ctx and returns the exit code.
func run(ctx context.Context, args []string, env *Env) int {
	defer env.Close()
	args, handled := helpWords(args, env)
	if handled {
		return 0
	}
	if versionOnly(args) {
		// What kong's version flag prints, without building kong's model
		// (the start-up cost of this call, issue 19).
		fmt.Fprintln(env.Out, versionString())
		return exitOK
	}
	if cmd, path, chdir, ok := fastParse(args); ok {
		_, hook := cmd.(hookPath)
		return runCommand(env, chdir, path, hook, func() error { return cmd.Run(ctx, env) })
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
		return exitInternal
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
			if kctx != nil && isHookPath(kctx) || hookWords[strings.Join(commandWords(args), " ")] {
				return exitOK, true // a hook path never fails its caller, not even on a bad flag
			}
			return exitUsage, true
		}
		return runCommand(env, chdirOf(cli), commandPath(kctx), isHookPath(kctx), func() error { return kctx.Run(env) }), true
	}()
	if done {
		return code
	}
	return exitOK
}

type exitPanic struct{}

// runCommand runs a parsed command (its path, for the error line) in the
// directory -C named, or ".", and returns its exit status: a hook path
// exits 0 whatever happens.
func runCommand(env *Env, chdir, path string, hook bool, run func() error) int {
	if chdir != "" {
		env.Dir = chdir
	}
	if env.Dir == "" {
		env.Dir = "."
	}
	if err := run(); err != nil {
		fmt.Fprintf(env.Err, "git ideate %s: %s\n", path, formatError(err))
		if hook {
			return exitOK
		}
		return exitStatus(err)
	}
	return exitOK
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
	for _, w := range commandWords(args) {
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
		kong.Description("A process record and delegation board for coding agents, kept in refs/ideate/* of this repository.\n\n" + exitStatusHelp()),
		kong.Vars{"version": versionString()},
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
	words := commandWords(args)
	if len(words) == 0 {
		return args, false
	}
	switch words[0] {
	case "version":
		if len(words) == 1 {
			fmt.Fprintln(env.Out, versionString())
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

// plainHook is the hook command as the plugin's hooks.json runs it on
// every hook event (`hook`, `hook --gate`), which fastParse takes without
// kong: the host runs this line on every tool call, and HookCmd's
// pass-through argument is not one of the flags fastParse reads in
// general. Any other hook line goes through kong
// (TestPlainHook_SameAsKong).
func plainHook(args []string) (*HookCmd, bool) {
	switch {
	case len(args) == 1 && args[0] == "hook":
		return &HookCmd{}, true
	case len(args) == 2 && args[0] == "hook" && args[1] == "--gate":
		return &HookCmd{Gate: true}, true
	}
	return nil, false
}

// hookWords are the commands hosts run as hooks; see hookPath.
var hookWords = map[string]bool{"record prime": true, "record session-end": true, "work sweep": true, "hook": true}

func isHookPath(ctx *kong.Context) bool {
	if ctx == nil || ctx.Selected() == nil {
		return false
	}
	_, ok := ctx.Selected().Target.Addr().Interface().(hookPath)
	return ok
}

func commandPath(ctx *kong.Context) string {
	if ctx.Selected() == nil {
		return ""
	}
	return strings.TrimPrefix(ctx.Selected().Path(), "git ideate ")
}

// formatError renders "CODE: sentence" for typed errors, through the
// secret gate: a sentence may quote a value the caller gave.
func formatError(err error) string {
	var e *apperr.Error
	s := string(apperr.Internal) + ": " + err.Error()
	if errors.As(err, &e) {
		s = e.Error()
	} else if errors.Is(err, context.Canceled) {
		return "CANCELED: interrupted by a signal; the git processes it had started were stopped"
	}
	s, _ = secretgate.Scan(s)
	return s
}

// Exit statuses: the one map from an outcome to the status the process
// exits with, listed by --help (exitStatusHelp) and in README.md. The
// hook-path commands (hookPath) exit 0 whatever happens.
const (
	exitOK      = 0
	exitFailure = 1 // a typed failure: "CODE: sentence" on stderr
	// A command line kong cannot parse (an unknown command, a bad or
	// missing flag) is reported as SCHEMA and exits 1, like any typed
	// failure: the reference contract fixes 1 for a bad flag and for an
	// unknown subcommand, and the golden transcripts hold it.
	exitUsage        = exitFailure
	exitGateFail     = 3 // a gate judged and its verdict is FAIL (apperr.GateFail)
	exitUnverifiable = 4 // a gate could not judge: UNVERIFIABLE (apperr.Unverifiable), never a pass
	exitInternal     = 5 // an untyped error or INTERNAL: a bug or an unexpected failure
	// SIGINT or SIGTERM cancelled the command (128 + SIGINT, as shells
	// report an interrupted command); also the status when a signalled
	// command does not return within signalGrace.
	exitInterrupted = 130
)

// exitStatus maps what a command returned to the exit status.
func exitStatus(err error) int {
	if errors.Is(err, context.Canceled) {
		return exitInterrupted // printed as CANCELED: sentence (formatError)
	}
	switch apperr.CodeOf(err) {
	case "":
		return exitOK
	case apperr.GateFail:
		return exitGateFail
	case apperr.Unverifiable:
		return exitUnverifiable
	case apperr.Internal:
		return exitInternal
	default:
		return exitFailure
	}
}

// exitStatuses is the table --help prints, in status order.
var exitStatuses = []struct {
	status  int
	meaning string
}{
	{exitOK, "success"},
	{exitFailure, "a typed failure or a malformed command line (CODE: sentence on stderr)"},
	{exitGateFail, "a gate's verdict is FAIL"},
	{exitUnverifiable, "a gate could not judge (UNVERIFIABLE)"},
	{exitInternal, "an internal error (INTERNAL)"},
	{exitInterrupted, "interrupted by SIGINT or SIGTERM (CANCELED)"},
}

func exitStatusHelp() string {
	var b strings.Builder
	b.WriteString("Exit status:")
	for _, e := range exitStatuses {
		fmt.Fprintf(&b, "\n  %d  %s", e.status, e.meaning)
	}
	b.WriteString("\nhook, record prime, record session-end and work sweep always exit 0.")
	return b.String()
}
