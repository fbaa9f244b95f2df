package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ideate/git-ideate/internal/corecmd"
	"github.com/ideate/git-ideate/internal/mcpserver"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/plan"
)

// HookCmd is `git ideate hook [EVENT]`, the one command every Claude Code
// hook runs: the payload arrives on stdin, the event is its
// hook_event_name (EVENT names it when the payload does not), and stdout
// carries at most one JSON object for the host.
type HookCmd struct {
	// Args is the event and nothing else; it takes whatever follows so
	// that a stray flag or word after the event is a note, not a failure.
	Args []string `arg:"" optional:"" passthrough:"partial" name:"event" help:"The event, when the payload does not name it (SessionStart, session-start, …)."`
	// Gate marks the plugin's stop gate entries (anchored SubagentStop
	// matchers): they run the stopping agent's gate and capture nothing.
	Gate bool `name:"gate" help:"Run the stopping execution agent's gate only (the plugin's anchored SubagentStop entries)."`
}

func (*HookCmd) AlwaysZero() {}

// Run handles the event; every problem is one line on stderr and the exit
// code is 0.
func (c *HookCmd) Run(ctx context.Context, env *Env) error {
	warn := func(msg string) { fmt.Fprintln(env.Err, "git ideate hook: "+msg) }
	var args []string
	for _, a := range c.Args {
		if a == hooks.GateFlag { // after the event, kong passes it through
			c.Gate = true
		} else {
			args = append(args, a)
		}
	}
	c.Args = args
	if len(c.Args) > 1 {
		warn(fmt.Sprintf("%s: unexpected arguments %q after the event; nothing done", apperr.Schema, c.Args[1:]))
		return nil
	}
	event := ""
	if len(c.Args) == 1 {
		event = c.Args[0]
	}
	if stdinIsTerminal(env.In) {
		warn("stdin is a terminal, not a hook payload; nothing to do (the host pipes the event's JSON in)")
		return nil
	}
	d := &hooks.Dispatcher{
		Dir:      env.Dir,
		Warn:     warn,
		Open:     func(dir, session string) (*hooks.Stores, error) { return hookStoresFor(env, dir, session) },
		StateDir: hookStateDir,
		Gates:    hookGates(env),
		GateOnly: c.Gate,
		Now:      corecmd.Now,
		Confine:  confineCommand,
		// Only this repository's own server, under the names the plugin
		// and git ideate init give it, is vouched for.
		ReadOnlyTool: func(name string) bool {
			for _, server := range []string{"mcp__plugin_git-ideate_" + initMCPServer + "__", hooks.MCPPermission + "__"} {
				if t, ok := strings.CutPrefix(name, server); ok {
					return mcpserver.ReadOnly(t)
				}
			}
			return false
		},
	}
	d.Judge = hookJudge(env, d.Gates)
	d.Run(ctx, env.In, env.Out, event)
	return nil
}

// hookStateDir is the state directory of the repository containing dir,
// found without opening it (the capture hooks' fast path).
func hookStateDir(dir string) (string, error) {
	r, err := gitstore.Discover(dir)
	if err != nil {
		return "", err
	}
	return r.StateDir(), nil
}

// stdinIsTerminal reports whether in is a character device other than
// /dev/null (which reads as an empty payload instead).
func stdinIsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok || !corecmd.IsTerminal(f) {
		return false
	}
	fi, err := f.Stat()
	null, nerr := os.Stat(os.DevNull)
	return err != nil || nerr != nil || !os.SameFile(fi, null)
}

// hookGates is the registry the hooks ask: the role guard before tools,
// the planning→execution gate before an execution agent's dispatch; the
// stop gates by role (hooks.StopGates) when registered. The plan gate reads
// the repository the hook's stores were opened in (env, after HookStores).
func hookGates(env *Env) *gates.Registry {
	reg := gates.NewRegistry()
	_ = reg.Register(gates.GuardName, gates.Guard)
	_ = reg.Register(gates.CostName, gates.Cost)
	_ = reg.Register(gates.EscapeName, gates.Escape)
	_ = reg.Register(gates.PlanGateName, gates.PlanGate(func(ctx context.Context, _ gates.Input) (*execlog.Log, *plan.Sprint, error) {
		log, err := env.Exec()
		if err != nil {
			return nil, nil, err
		}
		s, err := loadPlan(ctx, env, planFlags{})
		return log, s, err
	}))
	return reg
}

// hookJudge asks the hooks' gates: a stop gate (red, scaffold, green)
// through the registry the gate command uses, storing its verdict on the
// execution log (gates.Judge); the per-call gates (guard, plan) through
// reg, storing nothing. It is called once the hook's stores are open, so
// env is in the payload's repository.
func hookJudge(env *Env, reg *gates.Registry) func(context.Context, gates.Name, gates.Input) (gates.Verdict, error) {
	stop := map[gates.Name]bool{}
	for _, n := range hooks.StopGates {
		stop[n] = true
	}
	return func(ctx context.Context, name gates.Name, in gates.Input) (gates.Verdict, error) {
		if name == gates.CostName || name == gates.GuardName || name == gates.EscapeName {
			v, err := reg.Run(ctx, name, in)
			if err == nil {
				logCall(ctx, env, v, in)
			}
			return v, err
		}
		if !stop[name] {
			return reg.Run(ctx, name, in)
		}
		full, log, err := gatesFor(env, planFlags{})
		if err != nil {
			return gates.Verdict{}, err
		}
		return gates.Judge(ctx, full, log, name, in)
	}
}

// logCall writes what a per-call gate (guard, cost) or the check after
// the fact (escape) refused, and a cost
// verdict that passed a command on an explicit override, to the execution
// log as a verdict of that gate: the task and attempt, the reasons, and
// in the detail the agent's role, the tool and a digest of the command
// (never its text, which can hold secrets). A reviewer then sees what a
// worker tried, and the retrospective counts it. Plain passes write
// nothing: a commit per call would double the hook's time. A failed write
// is a warning; the decision stands.
func logCall(ctx context.Context, env *Env, v gates.Verdict, in gates.Input) {
	override := false
	for _, r := range v.Reasons {
		if r.Class == "override" {
			override = true
		}
	}
	if v.Passed() && !override {
		return
	}
	x, err := env.Exec()
	if err != nil {
		env.Warn("the " + string(v.Gate) + " verdict could not be logged: " + apperr.Message(err))
		return
	}
	if v.Task == "" {
		v.Task, v.Attempt = in.Task, in.Attempt
	}
	// A refusal on a task's account is placed where the plan puts the
	// task (its sprint and wave); one the plan does not list stays
	// unplaced.
	if v.Task != "" && v.Sprint == 0 {
		if s, err := loadPlan(ctx, env, planFlags{}); err == nil {
			if wave, ok := gates.Place(s, v.Task); ok {
				v.Sprint, v.Wave = s.Number, wave
			}
		}
	}
	v.Reasons = append([]gates.Reason(nil), v.Reasons...) // the host's copy keeps the text
	for i := range v.Reasons {
		v.Reasons[i].Detail = gates.RedactCommand(v.Reasons[i].Detail, in.Command)
	}
	e := gates.Entry(v)
	if e.Phase == "" {
		e.Phase = string(gates.GuardName)
	}
	e.Actor = "git-ideate hook"
	e.Detail = gates.CallDetail(in)
	if _, err := x.Append(ctx, e); err != nil && e.Task != "" {
		// A task id the log refuses (a typo'd dispatch) is logged without it.
		e.Task, e.Story = "", ""
		_, err = x.Append(ctx, e)
		if err != nil {
			env.Warn("the " + e.Phase + " verdict could not be logged: " + apperr.Message(err))
		}
	} else if err != nil {
		env.Warn("the " + e.Phase + " verdict could not be logged: " + apperr.Message(err))
	}
}
