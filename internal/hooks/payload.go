package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// MaxPayload is the largest payload ReadPayload accepts. Hosts send a few
// kilobytes; a PostToolUse payload carries the tool's whole output, which
// can be large, but never this large.
const MaxPayload = 16 << 20

// ErrPayload is wrapped by every error of ReadPayload: the input is not a
// usable hook payload. The errors are *apperr.Error with code SCHEMA and a
// sentence fit for a one-line note on stderr.
var ErrPayload = errors.New("unusable hook payload")

// Payload is what the host sends on stdin. Every field is optional: a field
// that is missing, null or of an unexpected type reads as its zero value
// (a number where a string is expected reads as its literal text), and
// enumerations are kept as sent, so a newer host's values pass through.
// Fields holds every top-level field as it arrived, unknown ones included.
type Payload struct {
	// Common fields.
	SessionID      string
	TranscriptPath string
	Cwd            string
	HookEventName  string
	PermissionMode string
	AgentID        string // inside a subagent, and on SubagentStart/SubagentStop
	AgentType      string

	Source string // SessionStart: startup, resume, clear, compact, fork, …
	Model  string // SessionStart
	Reason string // SessionEnd: clear, resume, logout, prompt_input_exit, other, …

	Trigger            string // PreCompact, PostCompact: manual, auto
	CustomInstructions string // PreCompact: the user's /compact text (null reads as "")

	ToolName     string
	ToolUseID    string
	ToolInput    json.RawMessage // the tool's input object, as sent
	ToolResponse json.RawMessage // PostToolUse: the tool's structured output, as sent

	StopHookActive       bool   // Stop, SubagentStop
	AgentTranscriptPath  string // SubagentStop
	LastAssistantMessage string // Stop, SubagentStop

	TaskID          string // TaskCreated, TaskCompleted
	TaskSubject     string
	TaskDescription string
	TeammateName    string
	TeamName        string

	Prompt string // UserPromptSubmit

	Fields map[string]json.RawMessage
}

// ReadPayload reads one hook payload from r: a single JSON object of at
// most MaxPayload bytes. Empty input, anything but an object, and input
// that does not parse are errors wrapping ErrPayload.
func ReadPayload(r io.Reader) (*Payload, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return nil, apperr.Wrap(apperr.Schema, ErrPayload, "cannot read the hook payload: %v", err)
	}
	if len(data) > MaxPayload {
		return nil, apperr.Wrap(apperr.Schema, ErrPayload, "the hook payload is larger than %d MiB", MaxPayload>>20)
	}
	return ParsePayload(data)
}

// ParsePayload is ReadPayload over bytes already read.
func ParsePayload(data []byte) (*Payload, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, apperr.Wrap(apperr.Schema, ErrPayload, "the hook payload is empty")
	}
	if trimmed[0] != '{' {
		return nil, apperr.Wrap(apperr.Schema, ErrPayload, "the hook payload is not a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil || fields == nil {
		return nil, apperr.Wrap(apperr.Schema, ErrPayload, "the hook payload is not valid JSON")
	}
	p := &Payload{Fields: fields}
	str := func(key string) string { return rawString(fields[key]) }
	p.SessionID = str("session_id")
	p.TranscriptPath = str("transcript_path")
	p.Cwd = str("cwd")
	p.HookEventName = str("hook_event_name")
	p.PermissionMode = str("permission_mode")
	p.AgentID = str("agent_id")
	p.AgentType = str("agent_type")
	p.Source = str("source")
	p.Model = str("model")
	p.Reason = str("reason")
	p.Trigger = str("trigger")
	p.CustomInstructions = str("custom_instructions")
	p.ToolName = str("tool_name")
	p.ToolUseID = str("tool_use_id")
	p.ToolInput = fields["tool_input"]
	p.ToolResponse = fields["tool_response"]
	p.StopHookActive = string(bytes.TrimSpace(fields["stop_hook_active"])) == "true"
	p.AgentTranscriptPath = str("agent_transcript_path")
	p.LastAssistantMessage = str("last_assistant_message")
	p.TaskID = str("task_id")
	p.TaskSubject = str("task_subject")
	p.TaskDescription = str("task_description")
	p.TeammateName = str("teammate_name")
	p.TeamName = str("team_name")
	p.Prompt = str("prompt")
	// Names and ids become record fields that must hold no control
	// character (a NUL there once reached a commit message): escaped here,
	// so that a hook records them instead of failing. Free text (messages,
	// instructions, paths) is kept as sent.
	for _, f := range []*string{&p.SessionID, &p.HookEventName, &p.PermissionMode, &p.AgentID, &p.AgentType,
		&p.Source, &p.Model, &p.Reason, &p.Trigger, &p.ToolName, &p.ToolUseID, &p.TaskID, &p.TeammateName, &p.TeamName} {
		*f = gitstore.EscapeControls(*f)
	}
	return p, nil
}

// rawString reads a JSON value as text: a string as its value, a number as
// its literal, anything else (null, bool, object, array, absent) as "".
func rawString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case c == '-' || c >= '0' && c <= '9':
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String()
		}
	}
	return ""
}

// lookup follows keys through nested objects of raw and returns the value
// found as text (see rawString); "" when any step is missing or not an
// object.
func lookup(raw json.RawMessage, keys ...string) string {
	for _, k := range keys {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			return ""
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		raw = m[k]
	}
	return rawString(raw)
}
