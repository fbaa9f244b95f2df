package hooks

import (
	"context"

	"github.com/ideate/git-ideate/internal/gates"
)

// Gate asks every gate of d.Gates, in name order, to judge the action a
// Gated event announces, and returns the host decision for the first
// verdict that is not PASS: FAIL and UNVERIFIABLE both block (a gate that
// could not judge never lets an action through), and the verdict becomes
// the reason the host shows. It returns nil when every gate passed, when
// there are no gates, and on events that are not Gated. Gates are never
// answered with "ask": a headless host refuses the call then anyway.
func (d *Dispatcher) Gate(ctx context.Context, event string, p *Payload) *Decision {
	if d.Gates == nil || !Gated(event) {
		return nil
	}
	in := d.GateInput(event, p)
	for _, name := range d.Gates.Names() {
		v, err := d.Gates.Run(ctx, name, in)
		if err != nil { // only an unknown name, which Names cannot give
			v = gates.Verdict{Gate: name, Result: gates.UNVERIFIABLE, Reasons: []gates.Reason{{Class: "error", Detail: errText(err)}}}
		}
		if !v.Passed() {
			return &Decision{Block: true, Reason: "git ideate gate " + v.String()}
		}
	}
	return nil
}

// GateInput translates a payload into what a gate judges: the moment
// (PreToolUse → BeforeTool, Stop and SubagentStop → AgentStop), the agent
// (agent_type as the role, agent_id), the session, the directory the
// repository is looked for from (Dispatcher.RepoDir), and for a tool the
// tool's name, a Bash command, the file_path of Write, Edit and the like,
// and the subagent_type an Agent call would start.
func (d *Dispatcher) GateInput(event string, p *Payload) gates.Input {
	in := gates.Input{
		Role:    p.AgentType,
		Agent:   p.AgentID,
		Session: p.SessionID,
		Dir:     d.RepoDir(p),
	}
	switch event {
	case "PreToolUse":
		in.Point = gates.BeforeTool
		in.Tool = p.ToolName
		in.Command = lookup(p.ToolInput, "command")
		for _, k := range []string{"file_path", "notebook_path"} {
			if f := lookup(p.ToolInput, k); f != "" {
				in.Paths = append(in.Paths, f)
			}
		}
		in.Dispatch = lookup(p.ToolInput, "subagent_type")
	case "Stop", "SubagentStop":
		in.Point = gates.AgentStop
	}
	return in
}
