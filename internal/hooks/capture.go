package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// Lengths the capture handlers cut payload text to, in characters.
const (
	MaxReport       = 2000 // a subagent's final report, a compaction summary
	MaxLastText     = 240  // the last assistant text in a compaction snapshot
	MaxInstructions = 500  // the user's /compact instructions
	MaxTaskSubject  = 160
	MaxTaskDesc     = 300
)

// capture appends one record; capture handlers return no Response.
func (c *call) capture(in record.AppendInput) (Response, error) {
	st, err := c.stores()
	if err != nil {
		return Response{}, err
	}
	in.Source.SessionID = c.p.SessionID
	_, err = st.Record.Append(c.ctx, in)
	return Response{}, err
}

// preCompact captures the compaction-snapshot of the session — what it
// had done when its context was about to be compacted — and keeps it
// aside until the host shows that the compaction happened (see
// compactionDone). The host can still abandon it after PreCompact
// (another PreCompact hook blocked it, the summarizer failed); it then
// sends neither SessionStart with source "compact" nor PostCompact, and
// an abandoned compaction is not recorded.
func preCompact(c *call) (Response, error) {
	p := c.p
	sid := sessionLabel(p)
	trigger := textfmt.OneLine(p.Trigger)
	if trigger == "" {
		trigger = "unspecified"
	}
	trigger = textfmt.Fit(trigger, 40)
	sum := summarize(p.TranscriptPath, p.Cwd, MaxLastText)
	in := record.AppendInput{Kind: "compaction-snapshot", VerificationAnchor: p.TranscriptPath,
		Source: record.Source{CapturePoint: "pre-compact"}}
	var b strings.Builder
	if sum == nil {
		in.Claim = fmt.Sprintf("Session %s hit %s context compaction.", sid, trigger)
		fmt.Fprintf(&b, "Session %s hit %s context compaction. No readable transcript was available, so no activity summary was captured.\n", sid, trigger)
	} else {
		in.Claim = fmt.Sprintf("Session %s hit %s context compaction after %d user and %d assistant turns.", sid, trigger, sum.Prompts, sum.AssistantTurns)
		in.Scope = strings.Join(sum.Dirs, ", ")
		if tl := sum.ToolList(); tl != "" {
			fmt.Fprintf(&b, "Tool calls before compaction: %d (%s).\n", sum.ToolCalls, tl)
		} else {
			b.WriteString("Tool calls before compaction: none.\n")
		}
		if sum.LastAssistantText != "" {
			fmt.Fprintf(&b, "Last assistant message: %s\n", sum.LastAssistantText)
		}
	}
	if ci := strings.TrimSpace(p.CustomInstructions); ci != "" {
		fmt.Fprintf(&b, "Compaction instructions from the user: %s\n", textfmt.Fit(ci, MaxInstructions))
	}
	in.Content = strings.TrimSuffix(b.String(), "\n")
	in.Source.SessionID = p.SessionID
	// Nothing unredacted waits in the file either.
	secretgate.Fields(&in.Claim, &in.Scope, &in.VerificationAnchor, &in.Content)
	data, err := json.Marshal(in)
	if err != nil {
		return Response{}, err
	}
	st, err := c.stores()
	if err != nil {
		return Response{}, err
	}
	return Response{}, st.Record.Git().PutState(pendingCompaction(p.SessionID), data)
}

// pendingCompaction names the state file that holds a session's captured
// compaction-snapshot until its compaction is seen through.
func pendingCompaction(session string) string {
	sum := sha256.Sum256([]byte(session))
	return "compaction-" + hex.EncodeToString(sum[:16])
}

// compactionDone runs when the host starts the session again after a
// compaction (SessionStart, source "compact"): the snapshot captured at
// PreCompact is written as the compaction-snapshot record. A session that
// ends (dropCompaction) or compacts again first drops what an abandoned
// compaction left.
func compactionDone(c *call, st *Stores) {
	data, err := st.Record.Git().TakeState(pendingCompaction(c.p.SessionID))
	if err != nil || data == nil {
		if err != nil {
			c.d.warn("compaction snapshot: %s", errText(err))
		}
		return
	}
	var in record.AppendInput
	if err := json.Unmarshal(data, &in); err != nil {
		c.d.warn("compaction snapshot: %s", err)
		return
	}
	if _, err := st.Record.Append(c.ctx, in); err != nil {
		c.d.warn("compaction snapshot: %s", errText(err))
	}
}

// dropCompaction forgets a snapshot whose compaction the host abandoned.
func dropCompaction(c *call, st *Stores) {
	if _, err := st.Record.Git().TakeState(pendingCompaction(c.p.SessionID)); err != nil {
		c.d.warn("compaction snapshot: %s", errText(err))
	}
}

// subagentStop writes a subagent-outcome record with the subagent's final
// report. The host also fires SubagentStop for the summarizer it runs at
// compaction, with an empty agent_type and no SubagentStart; that one is
// recorded as a compaction-summary instead. An agent whose role has a
// stop gate is recorded by the gate's entry, and only for a stop it lets
// through (outcome): a refused stop is no outcome.
func subagentStop(c *call) (Response, error) {
	agentCopy(c)
	if StopGates[ExecutionRole(c.p.AgentType)] != "" {
		return Response{}, nil
	}
	return c.outcome("finished")
}

// outcome records how the subagent ended ("finished", or how the host
// ended it).
func (c *call) outcome(how string) (Response, error) {
	p := c.p
	sid := sessionLabel(p)
	anchor := p.AgentTranscriptPath
	if anchor == "" {
		anchor = p.TranscriptPath
	}
	msg := strings.TrimSpace(p.LastAssistantMessage)
	in := record.AppendInput{VerificationAnchor: anchor, Source: record.Source{CapturePoint: "subagent-stop"}}
	agentType := strings.TrimSpace(p.AgentType)
	if agentType == "" {
		in.Kind = "compaction-summary"
		in.Claim = fmt.Sprintf("Session %s compacted its context; the summary follows.", sid)
		in.Content = textfmt.Fit(msg, MaxReport)
		if in.Content == "" {
			in.Content = fmt.Sprintf("Session %s compacted its context; the host passed no summary text.", sid)
		}
		return c.capture(in)
	}
	id := textfmt.Fit(textfmt.OneLine(p.AgentID), 80)
	if id == "" {
		id = "(unknown id)"
	}
	in.Kind = "subagent-outcome"
	in.Scope = agentType
	on := ""
	if b := c.boundTo(); b != nil {
		// A bound agent's outcome is on its task's (or sprint's) account.
		in.Source.TaskID = b.Task
		on = " on " + gatesSubject(b.Task, b.Sprint)
	}
	in.Claim = fmt.Sprintf("Subagent %s (%s) %s%s in session %s.", id, textfmt.Fit(textfmt.OneLine(agentType), 80), how, on, sid)
	if msg == "" {
		// Hosts before 2.1.47 send no last_assistant_message: read the
		// subagent's own transcript for its last words.
		if sum := summarize(p.AgentTranscriptPath, p.Cwd, MaxReport); sum != nil {
			msg = sum.LastAssistantText
		}
	}
	in.Content = textfmt.Fit(msg, MaxReport)
	if in.Content == "" {
		in.Content = fmt.Sprintf("Subagent %s (%s) %s in session %s without a final message.", id, agentType, how, sid)
	}
	return c.capture(in)
}

// boundTo is the binding of the payload's agent when it has one (an
// execution or reviewer role bound at its first call), else nil.
func (c *call) boundTo() *bindingRec {
	if !idRe().MatchString(c.p.AgentID) {
		return nil
	}
	st, err := c.stores()
	if err != nil || st.StateDir == "" {
		return nil
	}
	var b bindingRec
	if ok, err := readJSON(dispatchPath(st.StateDir, "agents", c.p.AgentID+".json"), &b); !ok || err != nil {
		return nil
	}
	return &b
}

// taskCompleted writes a native-task-completion record for a task the
// host's task list marked done.
func taskCompleted(c *call) (Response, error) {
	p := c.p
	sid := sessionLabel(p)
	id := textfmt.Fit(textfmt.OneLine(p.TaskID), 80)
	label := id
	if label == "" {
		label = "(unknown id)"
	}
	in := record.AppendInput{Kind: "native-task-completion", VerificationAnchor: p.TranscriptPath,
		Source: record.Source{CapturePoint: "task-completed", TaskID: id}}
	subject := textfmt.Fit(textfmt.OneLine(p.TaskSubject), MaxTaskSubject)
	if subject != "" {
		in.Claim = fmt.Sprintf("Task %s completed in session %s: %s", label, sid, subject)
	} else {
		in.Claim = fmt.Sprintf("Task %s completed in session %s.", label, sid)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s was marked completed in session %s.\n", label, sid)
	if subject != "" {
		fmt.Fprintf(&b, "Subject: %s\n", subject)
	}
	if d := strings.TrimSpace(p.TaskDescription); d != "" {
		fmt.Fprintf(&b, "Description: %s\n", textfmt.Fit(d, MaxTaskDesc))
	}
	if t := textfmt.OneLine(p.TeammateName); t != "" {
		fmt.Fprintf(&b, "Teammate: %s\n", textfmt.Fit(t, 80))
	}
	if t := textfmt.OneLine(p.TeamName); t != "" {
		fmt.Fprintf(&b, "Team: %s\n", textfmt.Fit(t, 80))
	}
	in.Content = strings.TrimSuffix(b.String(), "\n")
	return c.capture(in)
}
