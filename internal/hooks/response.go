package hooks

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
)

// MaxContext is the longest additionalContext Render passes on, in UTF-16
// code units (the host measures strings as JavaScript does and moves
// longer output to a file). Handlers aim far lower; this is the backstop.
const MaxContext = 9900

// Decision is a gate's verdict on the action an event announces. Block
// false means no opinion: Render prints nothing for it, so a gate can
// never wave an action past the host's own permission rules.
type Decision struct {
	Block  bool
	Reason string // shown to the model (PreToolUse, Stop, SubagentStop) or the user; required when blocking
	// UpdatedInput, on PreToolUse without Block, allows the call with this
	// tool input in place of the model's (a Bash command run confined).
	UpdatedInput json.RawMessage
}

// Response is what a hook hands back to the host: context to add to the
// conversation, and a decision when a gate ran. The zero Response prints
// nothing.
type Response struct {
	Event             string // the canonical event name; Render needs it
	AdditionalContext string
	Decision          *Decision
}

// blocksAtTop are the events whose blocking form is the top-level
// {"decision":"block","reason":…}.
var blocksAtTop = map[string]bool{
	"Stop": true, "SubagentStop": true, "PostToolUse": true, "UserPromptSubmit": true, "PreCompact": true,
}

// takesContext are the events whose hookSpecificOutput carries
// additionalContext.
var takesContext = map[string]bool{
	"SessionStart": true, "SubagentStart": true, "UserPromptSubmit": true, "PreToolUse": true,
	"PostToolUse": true, "PostToolUseFailure": true, "Stop": true, "SubagentStop": true,
}

type specificOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	AdditionalContext        string          `json:"additionalContext,omitempty"`
}

type output struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput"`
}

// Render is the host's output for r: one JSON object and a newline, or nil
// when there is nothing to say. Every object names its event in
// hookSpecificOutput.hookEventName. A blocking decision becomes
// permissionDecision "deny" on PreToolUse (an allowing one with
// UpdatedInput, "allow" and the new input) and the top-level
// decision "block" with its reason on Stop, SubagentStop, PostToolUse,
// UserPromptSubmit and PreCompact; on events that cannot block it is
// dropped. Context is passed only on events that take it, cut to
// MaxContext.
func (r Response) Render() []byte {
	if r.Event == "" {
		return nil
	}
	so := &specificOutput{HookEventName: r.Event}
	out := output{HookSpecificOutput: so}
	said := false
	if takesContext[r.Event] && r.AdditionalContext != "" {
		so.AdditionalContext = cutUTF16(r.AdditionalContext, MaxContext)
		said = true
	}
	if d := r.Decision; d != nil && !d.Block && d.UpdatedInput != nil && r.Event == "PreToolUse" {
		so.PermissionDecision, so.UpdatedInput = "allow", d.UpdatedInput
		so.PermissionDecisionReason = d.Reason
		said = true
	}
	if d := r.Decision; d != nil && d.Block {
		reason := d.Reason
		if reason == "" {
			reason = "Blocked by a git ideate gate."
		}
		switch {
		case r.Event == "PreToolUse":
			so.PermissionDecision, so.PermissionDecisionReason = "deny", reason
			said = true
		case blocksAtTop[r.Event]:
			out.Decision, out.Reason = "block", reason
			said = true
		}
	}
	if !said {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil
	}
	return b.Bytes()
}

// cutUTF16 cuts s to at most max UTF-16 code units, ending in "…" when it
// cut.
func cutUTF16(s string, max int) string {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	if n <= max {
		return s
	}
	n = 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > max-1 {
			return s[:i] + "…"
		}
		n += w
	}
	return s
}
