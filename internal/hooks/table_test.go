package hooks_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/hooks"
)

// hooks/hooks.json (the plugin's, at the repository root) holds exactly
// the hook table.
func TestHooks_MatchPluginHooksJSON(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				If      string `json:"if"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	const cmd = `sh "${CLAUDE_PLUGIN_ROOT}/bin/git-ideate" hook`
	table := hooks.Hooks()
	var got []hooks.Hook
	seen := map[string]bool{}
	for _, h := range table {
		if seen[h.Event] {
			continue
		}
		seen[h.Event] = true
		for _, g := range file.Hooks[h.Event] {
			if len(g.Hooks) != 1 {
				t.Fatalf("%s: want one handler per group, got %+v", h.Event, g)
			}
			hh := g.Hooks[0]
			gate := hh.Command == cmd+" "+hooks.GateFlag
			if hh.Type != "command" || hh.Command != cmd && !gate {
				t.Fatalf("%s: handler %+v", h.Event, hh)
			}
			got = append(got, hooks.Hook{Event: h.Event, Matcher: g.Matcher, If: hh.If, Timeout: hh.Timeout, Gate: gate})
		}
	}
	if diff := cmp.Diff(table, got); diff != "" {
		t.Fatalf("hooks/hooks.json differs from the hook table (-table +plugin):\n%s", diff)
	}
	if len(file.Hooks) != len(seen) {
		t.Fatalf("hooks/hooks.json has %d events, the table %d", len(file.Hooks), len(seen))
	}
	// The stop gates are anchored on the plugin's agent types (prefixed or not) and have
	// the time of a test run; the tool guard is quick.
	for _, h := range table {
		switch {
		case h.Gate && (h.Event != "SubagentStop" || !strings.HasPrefix(h.Matcher, "^(git-ideate:)?") || !strings.HasSuffix(h.Matcher, "$") || h.Timeout < 300):
			t.Errorf("gate entry %+v", h)
		case h.Event == "PreToolUse" && (h.Matcher != hooks.ToolMatcher || h.Timeout > 15):
			t.Errorf("PreToolUse entry %+v", h)
		}
	}
}

// events is the distinct events of the hook table.
func events() int {
	seen := map[string]bool{}
	for _, h := range hooks.Hooks() {
		seen[h.Event] = true
	}
	return len(seen)
}

func TestMergeSettings(t *testing.T) {
	const cmd = "git-ideate hook"
	older := hooks.OlderHookCommands
	// From nothing: every event, in table order, one group each.
	out, added, replaced, err := hooks.MergeSettings(nil, cmd, older)
	if err != nil || len(added) != events() || replaced != nil {
		t.Fatalf("fresh: %v %v %v", added, replaced, err)
	}
	var doc struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Hooks) != len(added) || len(doc.Hooks["SubagentStop"]) != 5 || !strings.HasSuffix(string(out), "}\n") {
		t.Fatalf("fresh document %s: %v", out, err)
	}
	if want := `{"hooks":[{"type":"command","command":"git-ideate hook","timeout":30}]}`; string(compact(t, doc.Hooks["PostToolUse"][0])) != want {
		t.Fatalf("PostToolUse group %s", doc.Hooks["PostToolUse"][0])
	}
	// Merging again adds nothing.
	if again, added, replaced, err := hooks.MergeSettings(out, cmd, older); again != nil || added != nil || replaced != nil || err != nil {
		t.Fatalf("second merge: %s %v %v %v", again, added, replaced, err)
	}
	// The user's keys, their order and text, and their own edit of our
	// entry stay; only missing events are added. Their entry of an older
	// command now runs ours, its timeout kept.
	user := `{"z":1, "hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"}]}],"SessionEnd":[{"hooks":[{"type":"command","command":"git-ideate-full  hook","timeout":9}]}]},"a":"<&>"}`
	out, added, replaced, err = hooks.MergeSettings([]byte(user), cmd, older)
	if err != nil || strings.Contains(strings.Join(added, " "), "SessionEnd") || len(added) != events()-1 || strings.Join(replaced, " ") != "SessionEnd" {
		t.Fatalf("merge into the user's: %v %v %v", added, replaced, err)
	}
	s := string(out)
	if strings.Index(s, `"z"`) > strings.Index(s, `"hooks"`) || strings.Index(s, `"hooks"`) > strings.Index(s, `"a"`) ||
		!strings.Contains(s, `"<&>"`) || !strings.Contains(s, `"mine"`) || !strings.Contains(s, `"timeout": 9`) || strings.Contains(s, "git-ideate-full  hook") {
		t.Fatalf("merged:\n%s", s)
	}
	// Wrong shapes: a typed error naming the value, nothing returned.
	for doc, want := range map[string]string{
		`{"hooks":[]}`:                `"hooks" is not a JSON object`,
		`{"hooks":{"SessionEnd":{}}}`: `"hooks.SessionEnd" is not a JSON array`,
		`[1]`:                         "the top level is not a JSON object",
	} {
		out, added, replaced, err := hooks.MergeSettings([]byte(doc), cmd, older)
		if out != nil || added != nil || replaced != nil || apperr.CodeOf(err) != apperr.Schema || apperr.Message(err) != want {
			t.Errorf("%s: %s %v %v", doc, out, added, err)
		}
	}
}

// TestMergeSettings_OlderSetUpNowRunsTheOneBinary: a settings file an
// older init wrote (`git ideate hook` everywhere, gates included) comes
// out as a fresh one would, every event among the replaced and none
// added; a gate entry of an older command under another matcher is not
// ours, and is left beside the one added.
func TestMergeSettings_OlderSetUpNowRunsTheOneBinary(t *testing.T) {
	const cmd = "git-ideate hook"
	old, _, _, err := hooks.MergeSettings(nil, "git ideate hook", nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, _, _ := hooks.MergeSettings(nil, cmd, nil)
	out, added, replaced, err := hooks.MergeSettings(old, cmd, hooks.OlderHookCommands)
	if err != nil || added != nil || len(replaced) != events() || !bytes.Equal(out, fresh) {
		t.Fatalf("added %v, replaced %v (%v):\n%s\nwant\n%s", added, replaced, err, out, fresh)
	}
	other := `{"hooks":{"SubagentStop":[{"matcher":"^mine$","hooks":[{"type":"command","command":"git ideate hook --gate"}]}]}}`
	out, added, replaced, err = hooks.MergeSettings([]byte(other), cmd, hooks.OlderHookCommands)
	if err != nil || strings.Contains(strings.Join(replaced, " "), "SubagentStop") || !strings.Contains(string(out), `"command": "git ideate hook --gate"`) {
		t.Fatalf("a gate under another matcher: added %v, replaced %v (%v):\n%s", added, replaced, err, out)
	}
}

func TestMergeMCPServer(t *testing.T) {
	out, replaced, differs, err := hooks.MergeMCPServer([]byte(`{"x":true}`), "ideate", "git", []string{"ideate", "mcp"}, nil)
	if err != nil || differs || replaced || string(out) != "{\n  \"x\": true,\n  \"mcpServers\": {\n    \"ideate\": {\n      \"command\": \"git\",\n      \"args\": [\n        \"ideate\",\n        \"mcp\"\n      ]\n    }\n  }\n}\n" {
		t.Fatalf("merge: %q %v %v", out, differs, err)
	}
	if again, replaced, differs, err := hooks.MergeMCPServer(out, "ideate", "git", []string{"ideate", "mcp"}, nil); again != nil || replaced || differs || err != nil {
		t.Fatalf("again: %s %v %v", again, differs, err)
	}
	if again, replaced, differs, err := hooks.MergeMCPServer(out, "ideate", "sh", nil, nil); again != nil || replaced || !differs || err != nil {
		t.Fatalf("a different server: %s %v %v", again, differs, err)
	}
	// An older init's entry becomes ours; the rest of the file stays.
	up, replaced, differs, err := hooks.MergeMCPServer(out, "ideate", "git-ideate", []string{"mcp"}, hooks.OlderMCPServers)
	if err != nil || !replaced || differs || !strings.Contains(string(up), `"command": "git-ideate"`) || !strings.Contains(string(up), `"x": true`) || strings.Contains(string(up), `"ideate",`) {
		t.Fatalf("older entry: %s %v %v %v", up, replaced, differs, err)
	}
	// One with a key of the user's own is theirs, left as is.
	mine := `{"mcpServers":{"ideate":{"command":"git","args":["ideate","mcp"],"env":{"A":"1"}}}}`
	if again, replaced, differs, err := hooks.MergeMCPServer([]byte(mine), "ideate", "git-ideate", []string{"mcp"}, hooks.OlderMCPServers); again != nil || replaced || !differs || err != nil {
		t.Fatalf("the user's own entry: %s %v %v %v", again, replaced, differs, err)
	}
	if _, _, _, err := hooks.MergeMCPServer([]byte(`{"mcpServers":1}`), "ideate", "git", nil, nil); apperr.CodeOf(err) != apperr.Schema {
		t.Fatalf("bad shape: %v", err)
	}
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
