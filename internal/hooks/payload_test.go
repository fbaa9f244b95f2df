package hooks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/hooks"
)

func TestReadPayload_Tolerant(t *testing.T) {
	in := `{"session_id":"s1","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null,
		"task_id":42,"agent_type":false,"stop_hook_active":true,"cwd":{"odd":1},"new_field":[1,2],
		"tool_input":{"command":"git commit -m x"},"tool_response":[{"type":"text","text":"t"}],
		"source":"a-source-from-2030","last_assistant_message":"bad \ud800 surrogate"}`
	p, err := hooks.ReadPayload(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if p.SessionID != "s1" || p.HookEventName != "PreCompact" || p.Trigger != "auto" || p.CustomInstructions != "" {
		t.Errorf("strings: %+v", p)
	}
	if p.TaskID != "42" || p.AgentType != "" || !p.StopHookActive || p.Cwd != "" || p.Source != "a-source-from-2030" {
		t.Errorf("mistyped fields: task %q agent %q stop %v cwd %q source %q", p.TaskID, p.AgentType, p.StopHookActive, p.Cwd, p.Source)
	}
	if _, ok := p.Fields["new_field"]; !ok {
		t.Error("an unknown field is not kept in Fields")
	}
	if !json.Valid(p.ToolInput) || !strings.Contains(string(p.ToolInput), "git commit") || !strings.HasPrefix(string(p.ToolResponse), "[") {
		t.Errorf("raw fields: %s %s", p.ToolInput, p.ToolResponse)
	}
	if !strings.HasPrefix(p.LastAssistantMessage, "bad ") {
		t.Errorf("last_assistant_message = %q", p.LastAssistantMessage)
	}
}

func TestReadPayload_Fixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		b, _ := json.Marshal(f.Payload)
		p, err := hooks.ReadPayload(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("line %d: %v", f.Line, err)
		}
		if p.SessionID != fixtureSession || p.HookEventName != f.event() || p.Cwd != "/home/dev/project" {
			t.Errorf("line %d: %+v", f.Line, p)
		}
	}
}

func TestReadPayload_Refused(t *testing.T) {
	for name, in := range map[string]string{
		"empty": "", "blank": " \n\t ", "array": `[{"hook_event_name":"SessionStart"}]`, "null": "null",
		"string": `"SessionStart"`, "number": "7", "garbage": "not json at all", "truncated": `{"session_id":"s`,
		"trailing": `{"session_id":"s"} {"x":1}`, "binary": "\x00\xff\xfe{",
	} {
		p, err := hooks.ReadPayload(strings.NewReader(in))
		if err == nil || p != nil {
			t.Errorf("%s: ReadPayload = %+v, %v", name, p, err)
			continue
		}
		if !errors.Is(err, hooks.ErrPayload) || !apperr.Is(err, apperr.Schema) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q is not a one-line SCHEMA error wrapping ErrPayload", name, err)
		}
	}
}

func TestReadPayload_SizeCap(t *testing.T) {
	big := `{"session_id":"s","prompt":"` + strings.Repeat("x", hooks.MaxPayload) + `"}`
	if _, err := hooks.ReadPayload(strings.NewReader(big)); !errors.Is(err, hooks.ErrPayload) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized payload: %v", err)
	}
	// Right at the cap still parses.
	pad := hooks.MaxPayload - len(`{"session_id":"s","prompt":""}`)
	ok := `{"session_id":"s","prompt":"` + strings.Repeat("y", pad) + `"}`
	if p, err := hooks.ReadPayload(strings.NewReader(ok)); err != nil || len(p.Prompt) != pad {
		t.Fatalf("payload of exactly MaxPayload bytes: %v", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestReadPayload_ReadError(t *testing.T) {
	if _, err := hooks.ReadPayload(failingReader{}); !errors.Is(err, hooks.ErrPayload) {
		t.Fatalf("read error: %v", err)
	}
}

func FuzzReadPayload(f *testing.F) {
	if data, err := os.ReadFile(fixtureFile); err == nil {
		for _, line := range bytes.Split(data, []byte("\n")) {
			var fx fixture
			if json.Unmarshal(line, &fx) == nil {
				b, _ := json.Marshal(fx.Payload)
				f.Add(b)
			}
		}
	}
	for _, s := range []string{"", "{}", "[]", "null", `{"a":`, `{"session_id":1e999}`, `{"tool_input":{"command":"git -C 'a b' commit"}}`,
		`{"custom_instructions":null,"task_id":-0.5e3}`, "\xef\xbb\xbf{}", `{"hook_event_name":"session-start"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := hooks.ReadPayload(bytes.NewReader(data))
		if err != nil {
			if p != nil || !errors.Is(err, hooks.ErrPayload) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q with payload %v", err, p)
			}
			return
		}
		if p.Fields == nil || !json.Valid(bytes.TrimSpace(data)) || bytes.TrimSpace(data)[0] != '{' {
			t.Fatalf("accepted %q", data)
		}
		// Whatever arrived, the rest of the pipeline holds: the command
		// reader and the renderer never panic, and output stays one object.
		hooks.GitCommitDir(p.Prompt)
		hooks.GitCommitDir(string(p.ToolInput))
		out := hooks.Response{Event: hooks.CanonicalEvent(p.HookEventName), AdditionalContext: p.Prompt + p.LastAssistantMessage,
			Decision: &hooks.Decision{Block: p.StopHookActive, Reason: p.Reason}}.Render()
		if out != nil && (!json.Valid(out) || bytes.Count(out, []byte("\n")) != 1) {
			t.Fatalf("Render gave %q", out)
		}
	})
}
