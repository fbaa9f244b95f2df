package record

import (
	"context"
	"fmt"
	"strings"
)

// SessionOutcome is what is known of a session that ended, in the host's
// terms translated to ours: the host package fills it from its own payload
// and transcript.
type SessionOutcome struct {
	SessionID string // "" when the host named none
	Reason    string // why it ended, as the host put it ("" when unknown)
	Anchor    string // where the session's own log can be checked (a transcript path), or ""
	// Activity summarizes the session's log; nil when there was no
	// readable log.
	Activity *SessionActivity
}

// SessionActivity is a summary of what a session did.
type SessionActivity struct {
	// Prompts counts what the user typed; UserTurns counts every
	// user-side entry of the log, tool results included. A record says
	// "N user turns" for Prompts.
	UserTurns, Prompts, AssistantTurns int
	ToolCalls                          int
	Tools                              string   // per-tool counts as one phrase ("Edit (2x), Bash (1x)"), "" for none
	Files                              []string // files touched, relative to the session's directory where inside it
	Dirs                               []string // their directories, the record's scope
	LastAssistantText                  string
	Truncated                          bool // the log was longer than the summary read
}

// Input is the session-outcome record of o.
func (o SessionOutcome) Input() AppendInput {
	sid := o.SessionID
	if sid == "" {
		sid = "(unknown session)"
	}
	reason := o.Reason
	if reason == "" {
		reason = "unspecified"
	}
	in := AppendInput{
		Kind:               "session-outcome",
		VerificationAnchor: o.Anchor,
		Source:             Source{CapturePoint: "session-end", SessionID: o.SessionID},
	}
	sum := o.Activity
	if sum == nil {
		in.Claim = fmt.Sprintf("Session %s ended (%s).", sid, reason)
		in.Content = fmt.Sprintf("Session %s ended with reason %q. No readable transcript was available, so no activity summary was captured.", sid, reason)
		return in
	}
	in.Claim = fmt.Sprintf("Session %s ended (%s) after %d user and %d assistant turns.", sid, reason, sum.Prompts, sum.AssistantTurns)
	in.Scope = strings.Join(sum.Dirs, ", ")
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s ended with reason %q.\n", sid, reason)
	fmt.Fprintf(&b, "Turns: %d user (prompts typed), %d assistant; %d user-side log entries in all, tool results included.\n", sum.Prompts, sum.AssistantTurns, sum.UserTurns)
	if sum.Tools != "" {
		fmt.Fprintf(&b, "Tool calls (%d): %s.\n", sum.ToolCalls, sum.Tools)
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

// OutcomeLookback is how many of the newest records AppendSessionOutcome
// looks through for an earlier outcome of the same session.
const OutcomeLookback = 2000

// AppendSessionOutcome appends the session-outcome record of o. A session
// has one current outcome: a session that was resumed (`claude
// --continue`, `--resume`) ends again under the same id, and its log then
// covers both runs, so the new record supersedes the session's previous
// outcome (found among the newest OutcomeLookback records) rather than
// standing beside it. The record stays append-only; readers see the older
// one marked superseded.
func (s *Store) AppendSessionOutcome(ctx context.Context, o SessionOutcome) (*AppendResult, error) {
	in := o.Input()
	if o.SessionID != "" {
		prev, err := s.lastOutcome(o.SessionID)
		if err != nil {
			return nil, err
		}
		in.Supersedes = prev
	}
	return s.Append(ctx, in)
}

// lastOutcome is the id of the newest session-outcome record of session
// among the newest OutcomeLookback records, or "".
func (s *Store) lastOutcome(session string) (string, error) {
	sn, err := s.Snapshot()
	if err != nil {
		return "", err
	}
	found, seen := "", 0
	err = sn.Walk("", func(r *Record) (bool, error) {
		seen++
		if r.Kind == "session-outcome" && r.Source.SessionID == session {
			found = r.ID
			return false, nil
		}
		return seen < OutcomeLookback, nil
	})
	return found, err
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
func (s *Store) Decision(ctx context.Context, in DecisionInput) (*AppendResult, error) {
	return s.Append(ctx, AppendInput{
		Kind: "decision", Claim: in.Claim, VerificationAnchor: in.VerificationAnchor, Scope: in.Scope,
		Source: in.Source, References: in.References, Supersedes: in.Supersedes,
		Content: DecisionBody(in.Claim, in.Rationale),
	})
}
