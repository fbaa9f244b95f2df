package hooks_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ideate/git-ideate/internal/hooks"
)

func TestResponse_Render(t *testing.T) {
	block := &hooks.Decision{Block: true, Reason: "run the tests first"}
	for _, c := range []struct {
		name string
		r    hooks.Response
		want string
	}{
		{"zero", hooks.Response{}, ""},
		{"no event", hooks.Response{AdditionalContext: "x"}, ""},
		{"nothing to say", hooks.Response{Event: "SessionStart"}, ""},
		{"session start context", hooks.Response{Event: "SessionStart", AdditionalContext: "a <b> & c"},
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"a <b> & c"}}`},
		{"subagent start context", hooks.Response{Event: "SubagentStart", AdditionalContext: "d"},
			`{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"d"}}`},
		{"context where the host takes none", hooks.Response{Event: "SessionEnd", AdditionalContext: "d"}, ""},
		{"pre tool use deny", hooks.Response{Event: "PreToolUse", Decision: block},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"run the tests first"}}`},
		{"stop block", hooks.Response{Event: "Stop", Decision: block},
			`{"decision":"block","reason":"run the tests first","hookSpecificOutput":{"hookEventName":"Stop"}}`},
		{"subagent stop block with context", hooks.Response{Event: "SubagentStop", Decision: block, AdditionalContext: "ctx"},
			`{"decision":"block","reason":"run the tests first","hookSpecificOutput":{"hookEventName":"SubagentStop","additionalContext":"ctx"}}`},
		{"block without a reason", hooks.Response{Event: "Stop", Decision: &hooks.Decision{Block: true}},
			`{"decision":"block","reason":"Blocked by a git ideate gate.","hookSpecificOutput":{"hookEventName":"Stop"}}`},
		{"no opinion", hooks.Response{Event: "PreToolUse", Decision: &hooks.Decision{Reason: "fine"}}, ""},
		{"block where nothing can block", hooks.Response{Event: "SessionStart", Decision: block}, ""},
		{"pre tool use allow with a new input", hooks.Response{Event: "PreToolUse", Decision: &hooks.Decision{Reason: "confined", UpdatedInput: []byte(`{"command":"x 'y'"}`)}},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"confined","updatedInput":{"command":"x 'y'"}}}`},
		{"a new input where none is taken", hooks.Response{Event: "Stop", Decision: &hooks.Decision{UpdatedInput: []byte(`{}`)}}, ""},
	} {
		got := string(c.r.Render())
		if c.want != "" {
			c.want += "\n"
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestResponse_Render_CutsLongContext(t *testing.T) {
	long := strings.Repeat("é😀", hooks.MaxContext) // 3 UTF-16 units per pair
	out := hooks.Response{Event: "SessionStart", AdditionalContext: long}.Render()
	var m struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	ctx := m.HookSpecificOutput.AdditionalContext
	if n := len(utf16.Encode([]rune(ctx))); n > hooks.MaxContext || n < hooks.MaxContext-3 || !strings.HasSuffix(ctx, "…") {
		t.Fatalf("cut context is %d UTF-16 units, ends %q", n, ctx[len(ctx)-8:])
	}
}

func TestCanonicalEvent(t *testing.T) {
	for in, want := range map[string]string{
		"SessionStart": "SessionStart", "session-start": "SessionStart", "SESSION_START": "SessionStart",
		" posttooluse ": "PostToolUse", "subagent-stop": "SubagentStop", "FutureEvent": "FutureEvent", "": "",
	} {
		if got := hooks.CanonicalEvent(in); got != want {
			t.Errorf("CanonicalEvent(%q) = %q, want %q", in, got, want)
		}
	}
}
