package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/plan/plantest"
)

// scriptedAPI answers the Messages API with scripted turns: one queue for
// the main session, one for sub-agents (the host marks their requests
// with x-claude-code-agent-id); a request without tools (titles, topics)
// gets a short text, and an empty queue ends the turn.
type scriptedAPI struct {
	mu        sync.Mutex
	main, sub []map[string]any // content blocks of one reply each
	n         int
}

func toolUse(name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "name": name, "input": input}
}

func (a *scriptedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/v1/messages" {
		io.WriteString(w, `{"input_tokens":100}`) // count_tokens, telemetry, anything else
		return
	}
	var body struct {
		Model  string            `json:"model"`
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&body)
	a.mu.Lock()
	a.n++
	id := fmt.Sprintf("toolu_host%04d", a.n)
	var block map[string]any
	q := &a.main
	if r.Header.Get("x-claude-code-agent-id") != "" {
		q = &a.sub
	}
	if len(body.Tools) > 0 && len(*q) > 0 {
		block, *q = (*q)[0], (*q)[1:]
	}
	a.mu.Unlock()
	stop := "end_turn"
	if block == nil {
		block = map[string]any{"type": "text", "text": "Done."}
	} else {
		block["id"] = id
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10}
	if !body.Stream {
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant", "model": body.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant",
		"model": body.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if block["type"] == "text" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	} else {
		input, _ := json.Marshal(block["input"])
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": id, "name": block["name"], "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	}
	ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

// The real Claude Code host, the plugin's hooks and the built binary: a
// general-purpose sub-agent dispatched while a sprint executes has its
// Write and its shell write denied, nothing changes on disk, and both
// refusals are on the execution log. Skips without claude on PATH (or
// $CLAUDE_BIN).
func TestHost_UnboundSubagentWritesNothingDuringASprint(t *testing.T) {
	claude := os.Getenv("CLAUDE_BIN")
	if claude == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			t.Skip("claude (Claude Code) is not installed: the real-host test skips (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
		}
		claude = p
	}
	if testing.Short() {
		t.Skip("runs the real host")
	}
	src := repoRoot(t)
	manifest, err := os.ReadFile(filepath.Join(src, ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pm struct{ Version string }
	json.Unmarshal(manifest, &pm)
	// The plugin: the launcher, its manifest and hooks; the binary of this
	// version on PATH, which the launcher takes first.
	plugin, bin := t.TempDir(), t.TempDir()
	for _, f := range []string{"bin/git-ideate", ".claude-plugin/plugin.json", "hooks/hooks.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(plugin, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(plugin, f), b, 0o755)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "git-ideate"),
		"-ldflags", "-X github.com/ideate/git-ideate/internal/corecmd.version="+pm.Version, "./cmd/git-ideate")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	path := bin + string(os.PathListSeparator) + filepath.Dir(gitPath) + string(os.PathListSeparator) + "/usr/bin:/bin"

	// A repository whose sprint executes: the example plan, checked, one
	// task started.
	repo := t.TempDir()
	sh := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "PATH="+path, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v %s", name, args, err, out)
		}
	}
	sh("git", "init", "-q")
	if err := plantest.CopyExample(repo); err != nil {
		t.Fatal(err)
	}
	std := filepath.Join(repo, "docs", "agents", "sprint1", "standards.md")
	b, _ := os.ReadFile(std)
	os.WriteFile(std, append(b, "\n## Test runners\n\n### go\n\n- Extensions: `.go`\n- Test files: `**/*_test.go`\n- Run: `go test -json -count=1 -run '{go_regex}' {packages}`\n- Format: `go-test-json`\n"...), 0o644)
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "strutil"), 0o755)
	os.WriteFile(filepath.Join(repo, "strutil", "doc.go"), []byte("package strutil\n"), 0o644)
	sh("git", "add", "-A")
	sh("git", "commit", "-q", "-m", "base")
	sh(filepath.Join(bin, "git-ideate"), "plan", "check")
	sh(filepath.Join(bin, "git-ideate"), "task", "start", "S1-01/T1", "--role", "red-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**")

	written, shelled := filepath.Join(repo, "strutil", "helper.go"), filepath.Join(repo, "strutil", "shell.go")
	api := &scriptedAPI{
		main: []map[string]any{toolUse("Agent", map[string]any{"description": "helper", "prompt": "Tidy the package.", "subagent_type": "general-purpose"})},
		sub: []map[string]any{
			toolUse("Write", map[string]any{"file_path": written, "content": "package strutil\n"}),
			toolUse("Bash", map[string]any{"command": "echo x > " + shelled, "description": "write"}),
		},
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Go.", "--plugin-dir", plugin, "--dangerously-skip-permissions", "--output-format", "json")
	cmd.Dir = repo
	cmd.Env = []string{"HOME=" + home, "PATH=" + path, "ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=" + srv.URL,
		"IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_MAX_RETRIES=1", "GIT_IDEATE_NO_DOWNLOAD=1", "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	for _, f := range []string{written, shelled} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	api.mu.Lock()
	left := len(api.main) + len(api.sub)
	api.mu.Unlock()
	if left != 0 {
		t.Fatalf("the host did not play the script (%d turns left):\n%s", left, out)
	}
	log := exec.Command(filepath.Join(bin, "git-ideate"), "exec", "log", "--phase", "guard")
	log.Dir = repo
	got, _ := log.CombinedOutput()
	if strings.Count(string(got), "class=sprint_read_only") != 2 {
		t.Fatalf("the guard's refusals on the exec log:\n%s\nclaude:\n%s", got, out)
	}
}
