package hooks_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/transcripts"
)

// Failed and denied calls are in the transcripts too: a tool call that
// failed (PostToolUseFailure, any tool), one the host denied
// (PermissionDenied) and one the gates denied (PreToolUse, kept as
// PreToolUseDenied with the reason), each on the global log, secrets
// redacted.
func TestTranscripts_FailedAndDeniedCalls(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "red-worker"})
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, &fakeGate{})
	base := func(event, tool string, kv map[string]any) map[string]any {
		m := map[string]any{"hook_event_name": event, "session_id": "s1", "cwd": dir, "tool_name": tool, "tool_use_id": "toolu_" + event,
			"tool_input": map[string]any{"command": "cat unfinished.txt password=Hunter2Secret"}}
		for k, v := range kv {
			m[k] = v
		}
		return m
	}
	hook(t, reg, false, dir, base("PostToolUseFailure", "Edit", map[string]any{"tool_input": map[string]any{"file_path": "x/x.go", "old_string": "a", "new_string": "b"},
		"error": "String to replace not found in file."}))
	hook(t, reg, false, dir, base("PermissionDenied", "Bash", map[string]any{"reason": "auto mode classifier"}))
	out, _ := hook(t, reg, false, dir, base("PreToolUse", "Bash", nil))
	if kind, _ := decisionOf(t, out); kind != "deny" {
		t.Fatalf("the fake guard did not deny: %s", out)
	}
	lines := fileLines(t, filepath.Join(dir, ".git", "ideate", transcripts.Dir, transcripts.GlobalFile))
	got := map[string]map[string]any{}
	for _, l := range lines {
		var ev struct {
			Event   string         `json:"event"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		got[ev.Event] = ev.Payload
		if strings.Contains(l, "Hunter2Secret") {
			t.Errorf("a secret reached the log: %s", l)
		}
	}
	if p := got["PostToolUseFailure"]; p == nil || p["error"] != "String to replace not found in file." || p["tool_name"] != "Edit" {
		t.Errorf("failed call: %v", p)
	}
	if got["PermissionDenied"] == nil {
		t.Errorf("host-denied call missing: %q", lines)
	}
	if p := got["PreToolUseDenied"]; p == nil || !strings.Contains(p["ideate_denied"].(string), "the item is not done") {
		t.Errorf("gate-denied call: %v", p)
	}
}
