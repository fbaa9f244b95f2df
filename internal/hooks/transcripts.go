package hooks

import (
	"encoding/json"
	"path/filepath"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/transcripts"
)

// The transcript capture (package transcripts holds the store): every
// UserPromptSubmit, PostToolUse, PostToolUseFailure and PermissionDenied
// payload, and every PreToolUse call the gates denied (as
// PreToolUseDenied, with the reason), goes whole to the global log,
// and to its task's log when the agent is bound to a task; Stop copies the
// session's transcript, SubagentStop the agent's (into its task's slice
// when bound), SessionEnd the session's tail. SubagentStart stages the
// task's slice read-only into the task's worktree; the agent's catch-all
// SubagentStop removes it again (a stop its gate refuses is staged again
// at the agent's next tool call).

// transcriptStore is the store of the repository the payload names.
func (c *call) transcriptStore() (*Stores, *transcripts.Store, error) {
	st, err := c.stores()
	if err != nil {
		return nil, nil, err
	}
	if st.StateDir == "" {
		return st, nil, nil
	}
	ts := transcripts.Open(st.StateDir)
	ts.Now = c.d.Now
	return st, ts, nil
}

// stateDir is the clone's state directory for the payload's repository:
// through Dispatcher.StateDir when set and the stores are not open yet
// (a capture needs no store), else from the stores.
func (c *call) stateDir() (string, error) {
	if c.opened || c.d.StateDir == nil {
		st, err := c.stores()
		if err != nil {
			return "", err
		}
		return st.StateDir, nil
	}
	return c.d.StateDir(c.d.RepoDir(c.p))
}

// binding is the payload's agent's binding when one was made.
func (c *call) binding(state string) *bindingRec {
	if c.p.AgentID == "" || state == "" || !idRe().MatchString(c.p.AgentID) {
		return nil
	}
	var b bindingRec
	if ok, err := readJSON(dispatchPath(state, "agents", c.p.AgentID+".json"), &b); err == nil && ok {
		return &b
	}
	return nil
}

// boundTask is the binding of the payload's agent when it has one (an
// execution agent is bound on its first call, here if not before), nil
// for the main session and other agents.
func (c *call) boundTask(st *Stores) *bindingRec {
	if b := c.binding(st.StateDir); b != nil {
		return b
	}
	role := ExecutionRole(c.p.AgentType)
	if role == "" || st.Tasks == nil || st.StateDir == "" {
		return nil
	}
	if b, _ := c.bind(st, role); b != nil {
		return b
	}
	return nil
}

// captureEvent writes the payload, whole and redacted, to the global log
// and its task's log; an execution agent's worktree gets its task's
// slice staged again when a refused stop removed it. Only an execution
// agent not bound yet opens the stores (to bind it).
func captureEvent(c *call) error {
	state, err := c.stateDir()
	if err != nil || state == "" {
		return err
	}
	p := c.p
	b := c.binding(state)
	if b == nil && ExecutionRole(p.AgentType) != "" {
		if st, err := c.stores(); err == nil {
			b = c.boundTask(st)
		}
	}
	raw, err := json.Marshal(p.Fields)
	if err != nil {
		return err
	}
	ts := transcripts.Open(state)
	ts.Now = c.d.Now
	ev := transcripts.Event{Event: c.event, Session: p.SessionID, Agent: p.AgentID, AgentType: p.AgentType, Tool: p.ToolName, Payload: raw}
	if b != nil {
		ev.Task = b.Task
	}
	if _, err := ts.Append(ev); err != nil {
		return err
	}
	if b != nil && b.Worktree != "" && !transcripts.Staged(b.Worktree) {
		c.stage(ts, b)
	}
	return nil
}

// captureDenied captures a PreToolUse call the gates denied, as event
// "PreToolUseDenied" whose payload is the call's with the denial's reason
// under "ideate_denied".
func captureDenied(c *call, reason string) error {
	fields := make(map[string]json.RawMessage, len(c.p.Fields)+1)
	for k, v := range c.p.Fields {
		fields[k] = v
	}
	r, _ := json.Marshal(reason)
	fields["ideate_denied"] = r
	saved, savedEvent := c.p.Fields, c.event
	c.p.Fields, c.event = fields, "PreToolUseDenied"
	defer func() { c.p.Fields, c.event = saved, savedEvent }()
	return captureEvent(c)
}

// userPromptSubmit captures the prompt.
func userPromptSubmit(c *call) (Response, error) {
	return Response{}, captureEvent(c)
}

// stage copies the task's slice into its worktree.
func (c *call) stage(ts *transcripts.Store, b *bindingRec) {
	if _, err := ts.Stage(c.ctx, b.Task, b.Worktree); err != nil {
		c.d.warn("transcripts of task %s not staged: %s", b.Task, errText(err))
	}
}

// stageIn stages the task's slice for an execution agent that starts.
func stageIn(c *call, st *Stores) {
	if ExecutionRole(c.p.AgentType) == "" {
		return
	}
	_, ts, err := c.transcriptStore()
	if err != nil || ts == nil {
		return
	}
	if b := c.boundTask(st); b != nil && b.Worktree != "" {
		c.stage(ts, b)
	}
}

// copyTranscript copies the transcript at src into dest of the store,
// noting what could not be done.
func (c *call) copyTranscript(ts *transcripts.Store, src, dest string) {
	if src == "" {
		return
	}
	// No transcript (yet) is no news: the host may not have written one.
	if _, err := ts.Copy(c.ctx, src, dest); err != nil && !apperr.Is(err, apperr.NotFound) {
		c.d.warn("transcript %s not copied: %s", filepath.Base(src), errText(err))
	}
}

// stop copies the main session's transcript.
func stop(c *call) (Response, error) {
	_, ts, err := c.transcriptStore()
	if err != nil || ts == nil {
		return Response{}, err
	}
	sessionCopy(c, ts)
	return Response{}, nil
}

func sessionCopy(c *call, ts *transcripts.Store) {
	dest, err := transcripts.SessionCopy(c.p.SessionID, "")
	if err != nil {
		if c.p.TranscriptPath != "" {
			c.d.warn("transcript not copied: %s", errText(err))
		}
		return
	}
	c.copyTranscript(ts, c.p.TranscriptPath, dest)
}

// agentCopy copies a stopping agent's transcript into its task's slice
// (or beside its session's) and removes its task's stage.
func agentCopy(c *call) {
	st, ts, err := c.transcriptStore()
	if err != nil || ts == nil || c.p.AgentID == "" {
		return
	}
	name := "agent-" + c.p.AgentID
	b := c.boundTask(st)
	var dest string
	if b != nil {
		dest, err = transcripts.TaskCopy(b.Task, name)
	} else {
		dest, err = transcripts.SessionCopy(c.p.SessionID, name)
	}
	if err != nil {
		c.d.warn("agent transcript not copied: %s", errText(err))
	} else {
		c.copyTranscript(ts, c.p.AgentTranscriptPath, dest)
	}
	if b != nil && b.Worktree != "" {
		if err := transcripts.Unstage(b.Worktree); err != nil {
			c.d.warn("transcripts of task %s not unstaged: %s", b.Task, errText(err))
		}
	}
}
