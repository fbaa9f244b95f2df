package record

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/transcript"
)

// SessionEndPayload is the part of the host's SessionEnd hook payload a
// session-outcome record is made from.
type SessionEndPayload struct {
	SessionID      string `json:"session_id"`
	Reason         string `json:"reason"`
	Cwd            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
}

// ParseSessionEnd decodes a SessionEnd payload. Empty or non-object input
// is apperr.Schema.
func ParseSessionEnd(data []byte) (SessionEndPayload, error) {
	var p SessionEndPayload
	if len(strings.TrimSpace(string(data))) == 0 {
		return p, apperr.New(apperr.Schema, "the SessionEnd payload is empty")
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, apperr.New(apperr.Schema, "the SessionEnd payload is not a JSON object")
	}
	return p, nil
}

// SessionOutcome builds the session-outcome record of a session from its
// payload and, when the transcript could be read, its summary (sum nil
// otherwise).
func SessionOutcome(p SessionEndPayload, sum *transcript.Summary) AppendInput {
	sid := p.SessionID
	if sid == "" {
		sid = "(unknown session)"
	}
	reason := p.Reason
	if reason == "" {
		reason = "unspecified"
	}
	in := AppendInput{
		Kind:               "session-outcome",
		VerificationAnchor: p.TranscriptPath,
		Source:             Source{CapturePoint: "session-end", SessionID: p.SessionID},
	}
	if sum == nil {
		in.Claim = fmt.Sprintf("Session %s ended (%s).", sid, reason)
		in.Content = fmt.Sprintf("Session %s ended with reason %q. No readable transcript was available, so no activity summary was captured.", sid, reason)
		return in
	}
	in.Claim = fmt.Sprintf("Session %s ended (%s) after %d user and %d assistant turns.", sid, reason, sum.UserTurns, sum.AssistantTurns)
	in.Scope = strings.Join(sum.Dirs, ", ")
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s ended with reason %q.\n", sid, reason)
	fmt.Fprintf(&b, "Turns: %d user (%d prompts), %d assistant.\n", sum.UserTurns, sum.Prompts, sum.AssistantTurns)
	if tl := sum.ToolList(); tl != "" {
		fmt.Fprintf(&b, "Tool calls (%d): %s.\n", sum.ToolCalls, tl)
	} else {
		b.WriteString("Tool calls: none.\n")
	}
	if len(sum.Files) > 0 {
		fmt.Fprintf(&b, "Files touched: %s.\n", strings.Join(sum.Files, ", "))
	}
	if sum.LastAssistantText != "" {
		fmt.Fprintf(&b, "Last assistant message: %s\n", sum.LastAssistantText)
	}
	if sum.Truncated {
		b.WriteString("(The transcript was longer than the scan limit; counts cover its beginning.)\n")
	}
	in.Content = strings.TrimSuffix(b.String(), "\n")
	return in
}

// SessionEnd reads a SessionEnd payload, summarizes its transcript when it
// can, and appends the session-outcome record.
func (s *Store) SessionEnd(payload []byte) (*AppendResult, error) {
	p, err := ParseSessionEnd(payload)
	if err != nil {
		return nil, err
	}
	var sum *transcript.Summary
	if p.TranscriptPath != "" {
		if got, err := transcript.Summarize(p.TranscriptPath, transcript.Options{Cwd: p.Cwd}); err == nil {
			sum = &got
		}
	}
	return s.Append(SessionOutcome(p, sum))
}

// DecisionInput is the sugar for a decision record.
type DecisionInput struct {
	Claim, Rationale, VerificationAnchor, Scope string
	Source                                      Source
	References                                  []Reference
	Supersedes                                  string
}

// DecisionBody is the body of a decision record: "Decision: <claim>", then
// "\n\nRationale: <rationale>" when there is one.
func DecisionBody(claim, rationale string) string {
	body := "Decision: " + claim
	if strings.TrimSpace(rationale) != "" {
		body += "\n\nRationale: " + rationale
	}
	return body
}

// Decision appends a decision record.
func (s *Store) Decision(in DecisionInput) (*AppendResult, error) {
	return s.Append(AppendInput{
		Kind: "decision", Claim: in.Claim, VerificationAnchor: in.VerificationAnchor, Scope: in.Scope,
		Source: in.Source, References: in.References, Supersedes: in.Supersedes,
		Content: DecisionBody(in.Claim, in.Rationale),
	})
}
