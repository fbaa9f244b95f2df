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
	// bodies are the request bodies it was sent, main session's and
	// sub-agents' apart: what the model was shown.
	mainBodies, subBodies []string
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
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	json.Unmarshal(raw, &body)
	a.mu.Lock()
	a.n++
	id := fmt.Sprintf("toolu_host%04d", a.n)
	var block map[string]any
	q, bodies := &a.main, &a.mainBodies
	if r.Header.Get("x-claude-code-agent-id") != "" {
		q, bodies = &a.sub, &a.subBodies
	}
	*bodies = append(*bodies, string(raw))
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

// host is the real Claude Code host with the plugin (its launcher,
// manifest, hooks and agents) and, in bin, the binary of the plugin's version,
// which the launcher takes from PATH when bin is on it.
type host struct {
	claude, plugin, bin, gitDir, goBin string
	goEnv                              []string
}

// newHost finds claude (skipping without it: $CLAUDE_BIN, else PATH) and
// builds the binary.
func newHost(t *testing.T) *host {
	t.Helper()
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
	h := &host{claude: claude, plugin: t.TempDir(), bin: t.TempDir()}
	files := []string{"bin/git-ideate", ".claude-plugin/plugin.json", "hooks/hooks.json", ".mcp.json"}
	agents, _ := filepath.Glob(filepath.Join(src, "agents", "*.md"))
	for _, a := range agents {
		files = append(files, filepath.Join("agents", filepath.Base(a)))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(h.plugin, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(h.plugin, f), b, 0o755)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(h.bin, "git-ideate"),
		"-ldflags", "-X github.com/ideate/git-ideate/internal/corecmd.version="+pm.Version, "./cmd/git-ideate")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	h.gitDir = filepath.Dir(gitPath)
	// The gates' test runs share this machine's Go caches.
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOROOT").Output(); err == nil {
		v := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(v) == 3 {
			h.goEnv = []string{"GOCACHE=" + v[0], "GOMODCACHE=" + v[1], "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"}
			h.goBin = filepath.Join(v[2], "bin")
		}
	}
	return h
}

// path is the PATH of a run: git, the system's directories, Go's, and
// the binary's directory when withBinary.
func (h *host) path(withBinary bool) string {
	p := h.gitDir + string(os.PathListSeparator) + "/usr/bin:/bin"
	if h.goBin != "" {
		p += string(os.PathListSeparator) + h.goBin
	}
	if withBinary {
		p = h.bin + string(os.PathListSeparator) + p
	}
	return p
}

// sprintRepo is a repository whose sprint executes: planRepo's plan,
// checked, and S1-01/T1 started for a red-worker.
func (h *host) sprintRepo(t *testing.T) string {
	t.Helper()
	repo := h.planRepo(t)
	h.sh(t, repo, filepath.Join(h.bin, "git-ideate"), "plan", "check")
	h.sh(t, repo, filepath.Join(h.bin, "git-ideate"), "task", "start", "S1-01/T1", "--role", "red-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**")
	return repo
}

// sh runs a command in repo and fails the test when it fails.
func (h *host) sh(t *testing.T, repo, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PATH="+h.path(true), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v %s", name, args, err, out)
	}
	return string(out)
}

// planRepo is a repository holding the example plan with a Go runner,
// committed: nothing checked, imported or started yet.
func (h *host) planRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	sh := func(name string, args ...string) { t.Helper(); h.sh(t, repo, name, args...) }
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
	return repo
}

// run runs `claude -p` in repo against api, with the binary on PATH or
// not, and fails the test when the host did not play the whole script.
func (h *host) run(t *testing.T, repo string, api *scriptedAPI, withBinary bool, env ...string) string {
	t.Helper()
	srv := httptest.NewServer(api)
	defer srv.Close()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.claude, "-p", "Go.", "--plugin-dir", h.plugin, "--dangerously-skip-permissions", "--output-format", "json")
	cmd.Dir = repo
	cmd.Env = append(append([]string{"HOME=" + home, "PATH=" + h.path(withBinary), "ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=" + srv.URL,
		"IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_MAX_RETRIES=1", "GIT_IDEATE_NO_DOWNLOAD=1", "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e"}, h.goEnv...), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	api.mu.Lock()
	left := len(api.main) + len(api.sub)
	shown := toolResults(strings.Join(api.mainBodies, "\n")) + toolResults(strings.Join(api.subBodies, "\n"))
	api.mu.Unlock()
	if left != 0 {
		t.Fatalf("the host did not play the script (%d turns left); the tool results:\n%s\nclaude:\n%s", left, shown, out)
	}
	return string(out)
}

// cli runs the binary in repo.
func (h *host) cli(t *testing.T, repo string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(h.bin, "git-ideate"), args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PATH="+h.path(true))
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// The real Claude Code host, the plugin's hooks and the built binary: a
// general-purpose sub-agent dispatched while a sprint executes has its
// Write, its shell write, its commit and its board write through the CLI
// denied, nothing changes on disk, on the branch or on the board, and the
// refusals are on the execution log; its read of the board runs. Skips
// without claude on PATH (or $CLAUDE_BIN).
func TestHost_UnboundSubagentWritesNothingDuringASprint(t *testing.T) {
	h := newHost(t)
	repo := h.sprintRepo(t)
	head := h.sh(t, repo, "git", "rev-parse", "HEAD")
	written, shelled := filepath.Join(repo, "strutil", "helper.go"), filepath.Join(repo, "strutil", "shell.go")
	api := &scriptedAPI{
		main: []map[string]any{toolUse("Agent", map[string]any{"description": "helper", "prompt": "Tidy the package.", "subagent_type": "general-purpose"})},
		sub: []map[string]any{
			toolUse("Write", map[string]any{"file_path": written, "content": "package strutil\n"}),
			toolUse("Bash", map[string]any{"command": "echo x > " + shelled, "description": "write"}),
			toolUse("Bash", map[string]any{"command": "git commit -q --allow-empty -m sneaked", "description": "commit"}),
			toolUse("Bash", map[string]any{"command": "git ideate work create --title 'sneaked in' --spec 'Add it.' --human h --spec-format text/markdown", "description": "file"}),
			toolUse("Bash", map[string]any{"command": "git ideate task list", "description": "look"}),
		},
	}
	out := h.run(t, repo, api, true)
	for _, f := range []string{written, shelled} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if now := h.sh(t, repo, "git", "rev-parse", "HEAD"); now != head {
		t.Errorf("the branch moved: %s", h.sh(t, repo, "git", "log", "--format=%h %s", "-2"))
	}
	if got := h.cli(t, repo, "work", "list"); strings.Contains(got, "sneaked in") {
		t.Errorf("the board holds the sub-agent's item:\n%s", got)
	}
	api.mu.Lock()
	shown := toolResults(strings.Join(api.subBodies, "\n"))
	api.mu.Unlock()
	if !strings.Contains(shown, "attempt 1 red-worker") {
		t.Errorf("the sub-agent's read of the tasks did not run; it was shown:\n%s", shown)
	}
	if got := h.cli(t, repo, "exec", "log", "--phase", "guard"); strings.Count(got, "class=sprint_read_only") != 4 {
		t.Fatalf("the guard's refusals on the exec log:\n%s\nclaude:\n%s", got, out)
	}
}

// The real host on a first launch: while the launcher has no binary
// (none on PATH, none to download, no sources to build), a red-worker's
// dispatch is denied with the launcher's reason and no sub-agent starts;
// once the binary is there, the same dispatch goes through and its agent
// runs.
func TestHost_FirstLaunchDeniesADispatchUntilTheBinaryExists(t *testing.T) {
	h := newHost(t)
	repo := h.sprintRepo(t)
	dispatch := func() *scriptedAPI {
		return &scriptedAPI{
			main: []map[string]any{toolUse("Agent", map[string]any{"description": "red", "prompt": "ideate-task: S1-01/T1\nWrite the failing test.",
				"subagent_type": "git-ideate:red-worker", "run_in_background": false})},
			sub: []map[string]any{toolUse("Bash", map[string]any{"command": "git status --short", "description": "look"})},
		}
	}
	api := dispatch()
	api.sub = nil
	h.run(t, repo, api, false, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1")
	api.mu.Lock()
	subs, mains := len(api.subBodies), strings.Join(api.mainBodies, "\n")
	api.mu.Unlock()
	if shown := toolResults(mains); subs != 0 || !strings.Contains(shown, "PreToolUse:Agent hook error: git ideate ") || !strings.Contains(shown, " installed") {
		t.Fatalf("without the binary: %d sub-agent request(s); the main session was shown:\n%s", subs, shown)
	}
	api = dispatch()
	h.run(t, repo, api, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1")
	api.mu.Lock()
	subs, mains = len(api.subBodies), strings.Join(api.mainBodies, "\n")
	api.mu.Unlock()
	if subs == 0 {
		t.Fatalf("with the binary the red-worker did not start; the main session was shown:\n%s", toolResults(mains))
	}
	if b, err := os.ReadDir(filepath.Join(repo, ".git", "ideate", "dispatch", "agents")); err != nil || len(b) != 1 {
		t.Fatalf("the red-worker is not bound: %v %v", b, err)
	}
}

// The real host, a confined red-worker: its Bash calls run under the
// confining entry (updatedInput), so `timeout 5 touch` of a production
// file in its worktree is put back and one in the main checkout is
// refused by the kernel; nothing changes. It writes its failing test and
// shim, commits, and its stop is judged: the execution log holds the RED
// PASS and the confinement's refusal, and no guard refusal.
func TestHost_ConfinedRedWorkerChangesNothingAndIsJudged(t *testing.T) {
	h, repo, wt := confinedSprint(t)
	mainProd := filepath.Join(repo, "strutil", "prod.go")
	api := &scriptedAPI{
		main: []map[string]any{redDispatch()},
		sub: []map[string]any{
			toolUse("Bash", map[string]any{"command": "timeout 5 touch strutil/prod.go", "description": "touch"}),
			toolUse("Bash", map[string]any{"command": "timeout 5 touch " + mainProd, "description": "touch"}),
			toolUse("Write", map[string]any{"file_path": filepath.Join(wt, "strutil", "reverse_test.go"),
				"content": "package strutil\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) {\n\tif got := Reverse(\"ab\"); got != \"ba\" {\n\t\tt.Fatalf(\"Reverse(ab) = %q, want ba\", got)\n\t}\n}\n"}),
			toolUse("Write", map[string]any{"file_path": filepath.Join(wt, "strutil", "reverse.go"),
				"content": "package strutil\n\n// Reverse is a shim until GREEN. agentic:shim\nfunc Reverse(s string) string { return \"\" }\n"}),
			toolUse("Bash", map[string]any{"command": "git add -A && git commit -q -m 'red: TestReverse'", "description": "commit"}),
		},
	}
	out := h.run(t, repo, api, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2")
	for _, f := range []string{filepath.Join(wt, "strutil", "prod.go"), mainProd} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	api.mu.Lock()
	subs := strings.Join(api.subBodies, "\n")
	api.mu.Unlock()
	if shown := toolResults(subs); !strings.Contains(shown, "may not change these, so they were put back") {
		t.Errorf("the red-worker was not told what was put back:\n%s", shown)
	}
	if got := h.cli(t, repo, "exec", "log", "--phase", "red"); !strings.Contains(got, "red S1-01 verdict task=T1 attempt=1 result=PASS") {
		t.Fatalf("no RED PASS on the exec log:\n%s\nclaude:\n%s", got, out)
	}
	if got := h.cli(t, repo, "exec", "log", "--phase", "confine"); !strings.Contains(got, "confine_refused") {
		t.Errorf("the confinement's refusal is not on the exec log:\n%s", got)
	}
	if got := h.cli(t, repo, "exec", "log", "--phase", "guard"); strings.Contains(got, "task=T1") {
		t.Errorf("the guard refused a confined worker's call:\n%s", got)
	}
	// The main checkout changed in its planning artifacts only (the RED
	// PASS writes the task's plan-ready.md).
	st, err := exec.Command("git", "-C", repo, "status", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(st)), "\n") {
		if l != "" && !strings.HasPrefix(l[3:], "docs/agents/") {
			t.Errorf("the main checkout changed: %q", st)
		}
	}
	if out, err := exec.Command("git", "-C", repo, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v %s", err, out)
	}
}

// toolResults are the tool results a request body shows the model.
func toolResults(bodies string) string {
	var b strings.Builder
	for _, body := range strings.Split(bodies, "\n") {
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal([]byte(body), &req)
		for _, m := range req.Messages {
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) == nil {
				for _, x := range blocks {
					if x.Type == "tool_result" {
						b.Write(x.Content)
						b.WriteString("\n")
					}
				}
			}
		}
	}
	return b.String()
}

// The real host, a reviewer: a structural-reviewer dispatched for a task
// is bound to it; its shell write is refused as read_only on that task's
// account, and its reads run. One dispatched naming no task never starts.
func TestHost_ReviewerIsBoundAndReadOnly(t *testing.T) {
	h := newHost(t)
	repo := h.sprintRepo(t)
	notes := filepath.Join(repo, "review-notes.txt")
	api := &scriptedAPI{
		main: []map[string]any{
			toolUse("Agent", map[string]any{"description": "review", "prompt": "Review the diff.", "subagent_type": "git-ideate:structural-reviewer", "run_in_background": false}),
			toolUse("Agent", map[string]any{"description": "review", "prompt": "ideate-task: S1-01/T1\nReview the task's diff.", "subagent_type": "git-ideate:structural-reviewer", "run_in_background": false}),
		},
		sub: []map[string]any{
			toolUse("Bash", map[string]any{"command": "echo note > " + notes, "description": "note"}),
			toolUse("Bash", map[string]any{"command": "ls strutil", "description": "look"}),
		},
	}
	out := h.run(t, repo, api, true)
	if _, err := os.Stat(notes); err == nil {
		t.Errorf("%s was written", notes)
	}
	api.mu.Lock()
	mains, subs := toolResults(strings.Join(api.mainBodies, "\n")), toolResults(strings.Join(api.subBodies, "\n"))
	api.mu.Unlock()
	if !strings.Contains(mains, "dispatch_no_task") {
		t.Errorf("the reviewer's dispatch naming no task was not denied; the main session was shown:\n%s", mains)
	}
	if !strings.Contains(subs, "doc.go") {
		t.Errorf("the bound reviewer's read did not run; it was shown:\n%s", subs)
	}
	got := h.cli(t, repo, "exec", "log", "--phase", "guard")
	readOnly := ""
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "class=read_only") {
			readOnly = l
		}
	}
	if !strings.Contains(readOnly, "S1-01 verdict phase=guard task=T1") || !strings.Contains(got, "class=dispatch_no_task") {
		t.Fatalf("the guard's refusals on the exec log:\n%s\nclaude:\n%s", got, out)
	}
	if b, err := os.ReadDir(filepath.Join(repo, ".git", "ideate", "dispatch", "agents")); err != nil || len(b) != 1 {
		t.Fatalf("the reviewer is not bound: %v %v", b, err)
	}
}

// The real host: a sub-agent bound to no task, while a sprint executes,
// calls the plugin's MCP tools. One that writes (work_create) is denied
// by the guard and creates nothing; a read-only one (record_read) runs.
func TestHost_UnboundSubagentUsesOnlyReadOnlyMCPTools(t *testing.T) {
	h := newHost(t)
	repo := h.sprintRepo(t)
	const server = "mcp__plugin_git-ideate_ideate__"
	api := &scriptedAPI{
		main: []map[string]any{
			// On a first launch the launcher answers MCP with no tools
			// until the binary is in place, then announces them; a
			// sub-agent gets the tools the session has when it starts.
			toolUse("Bash", map[string]any{"command": "sleep 3", "description": "wait"}),
			toolUse("Agent", map[string]any{"description": "helper", "prompt": "File a follow-up.", "subagent_type": "general-purpose"}),
		},
		sub: []map[string]any{
			toolUse("ToolSearch", map[string]any{"query": "select:" + server + "work_create", "max_results": 5}),
			toolUse("ToolSearch", map[string]any{"query": "select:" + server + "record_read", "max_results": 5}),
			toolUse(server+"work_create", map[string]any{"title": "sneaked in", "spec": "Add it."}),
			toolUse(server+"record_read", map[string]any{}),
		},
	}
	out := h.run(t, repo, api, true)
	if got := h.cli(t, repo, "work", "list"); strings.Contains(got, "sneaked in") {
		t.Errorf("the denied MCP call created an item:\n%s", got)
	}
	api.mu.Lock()
	subs := toolResults(strings.Join(api.subBodies, "\n"))
	api.mu.Unlock()
	if strings.Contains(subs, "No such tool available: "+server+"work_create") {
		// Seen in about one session of three, with the server connected:
		// the host offered the sub-agent none of its tools, so the call
		// never reached the hook and there is nothing to judge.
		t.Skip("the host did not offer the plugin's MCP tools to the sub-agent in this session")
	}
	if !strings.Contains(subs, "mcp_tool") {
		t.Errorf("the sub-agent was not told of the refusal; it was shown:\n%s\nclaude:\n%s", subs, out)
	}
	if got := h.cli(t, repo, "exec", "log", "--phase", "guard"); strings.Count(got, "class=mcp_tool") != 1 {
		t.Fatalf("the guard's refusals on the exec log:\n%s\nclaude:\n%s", got, out)
	}
}

// The real host, while a sprint executes: writes that name a file only
// by where it lands. The main session copies production source into a
// package directory (cp's target a directory); a sub-agent bound to no
// task writes through programs whose output file is an operand (uniq,
// xxd) and claims a board item through a flag given a value
// (--claim=true). Nothing lands in the checkout and nothing is claimed.
func TestHost_WritesNamedByWhereTheyLandAreRefused(t *testing.T) {
	h := newHost(t)
	repo := h.sprintRepo(t)
	h.sh(t, repo, filepath.Join(h.bin, "git-ideate"), "work", "create", "--title", "claimable", "--spec", "s", "--human", "h", "--spec-format", "text/markdown")
	src := filepath.Join(t.TempDir(), "prod.go")
	os.WriteFile(src, []byte("package strutil\n"), 0o644)
	copied, uniq, xxd := filepath.Join(repo, "strutil", "prod.go"), filepath.Join(repo, "strutil", "uniq.go"), filepath.Join(repo, "strutil", "xxd.go")
	api := &scriptedAPI{
		main: []map[string]any{
			toolUse("Bash", map[string]any{"command": "cp " + src + " strutil/", "description": "copy"}),
			toolUse("Agent", map[string]any{"description": "helper", "prompt": "Tidy the package.", "subagent_type": "general-purpose"}),
		},
		sub: []map[string]any{
			toolUse("Bash", map[string]any{"command": "uniq " + src + " strutil/uniq.go", "description": "write"}),
			toolUse("Bash", map[string]any{"command": "xxd " + src + " strutil/xxd.go", "description": "write"}),
			toolUse("Bash", map[string]any{"command": "git ideate work ready --claim=true --human h", "description": "claim"}),
		},
	}
	out := h.run(t, repo, api, true)
	for _, f := range []string{copied, uniq, xxd} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if got := h.cli(t, repo, "work", "list"); !strings.Contains(got, "[open] claimable") {
		t.Errorf("the board item was claimed:\n%s\nclaude:\n%s", got, out)
	}
}

// The real host, a confined red-worker whose Bash call runs in the
// background: it writes a production file, stages and commits it, and
// is still running while the worker's next calls start (each takes its
// own snapshot of the worktree) and when the host ends it at the
// worker's final answer. What it did is put back: the file is gone from
// the worktree and the index, its commit is off the task branch, and git
// fsck --strict is clean.
func TestHost_ConfinedBackgroundCallIsPutBack(t *testing.T) {
	h, repo, wt := confinedSprint(t)
	api := &scriptedAPI{
		main: []map[string]any{redDispatch()},
		sub: []map[string]any{
			toolUse("Bash", map[string]any{"command": "echo 'package strutil' > strutil/late.go && git add strutil/late.go && git commit -qm late; sleep 30",
				"description": "late", "run_in_background": true}),
			// Waits when the background commit is not made yet.
			toolUse("Bash", map[string]any{"command": "sleep 2", "description": "wait"}),
			toolUse("Write", map[string]any{"file_path": filepath.Join(wt, "strutil", "reverse_test.go"),
				"content": "package strutil\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) {\n\tif got := Reverse(\"ab\"); got != \"ba\" {\n\t\tt.Fatalf(\"Reverse(ab) = %q, want ba\", got)\n\t}\n}\n"}),
			toolUse("Bash", map[string]any{"command": "git add -A && git commit -q -m 'red: TestReverse'", "description": "commit"}),
		},
	}
	out := h.run(t, repo, api, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1")
	if _, err := os.Stat(filepath.Join(wt, "strutil", "late.go")); err == nil {
		t.Errorf("the background call's file is in the worktree: git status\n%s\nclaude:\n%s", h.sh(t, wt, "git", "status", "--short"), out)
	}
	if got := h.sh(t, wt, "git", "ls-files", "strutil/late.go"); got != "" {
		t.Errorf("the background call's file is in the index: %s", got)
	}
	if got := h.sh(t, repo, "git", "log", "--format=%s", "ideate/task/S1-01+T1"); strings.Contains(got, "late") {
		t.Errorf("the background call's commit is on the task branch:\n%s", got)
	}
	if out, err := exec.Command("git", "-C", repo, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v %s", err, out)
	}
}

// The real host, a confined red-worker that builds, in calls of its
// own, a git directory hidden under a path git status never shows
// (h/.git/…) whose ref directory is a link to the repository's .git,
// points its worktree's .git file there with the file tool (the path
// holds the shim marker), and then writes a hook of the repository. The
// call is refused: no hook is written and the repository is whole.
func TestHost_ConfinedWorkerCannotRedirectItsGitFile(t *testing.T) {
	h, repo, wt := confinedSprint(t)
	hid := filepath.Join(wt, "h", ".git")
	hook := filepath.Join(repo, ".git", "hooks", "post-commit")
	api := &scriptedAPI{
		main: []map[string]any{redDispatch()},
		sub: []map[string]any{
			toolUse("Bash", map[string]any{"command": "cd " + wt + " && mkdir -p 'h/.git/agentic:shim/a' h/.git/c/refs/heads && echo 'ref: refs/heads/z/b' > 'h/.git/agentic:shim/a/HEAD' && echo " +
				hid + "/c > 'h/.git/agentic:shim/a/commondir' && ln -s " + repo + "/.git/objects h/.git/c/objects && ln -s " + repo + "/.git h/.git/c/refs/heads/z", "description": "prepare"}),
			toolUse("Write", map[string]any{"file_path": filepath.Join(wt, ".git"), "content": "gitdir: " + hid + "/agentic:shim/a\n"}),
			toolUse("Bash", map[string]any{"command": "printf '#!/bin/sh\\necho hooked\\n' > " + hook + "; chmod +x " + hook, "description": "hook"}),
		},
	}
	out := h.run(t, repo, api, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1")
	if _, err := os.Stat(hook); err == nil {
		t.Errorf("the worker wrote the repository's hook %s", hook)
	}
	for _, d := range []string{"objects", "refs", "hooks", "worktrees"} {
		if _, err := os.Stat(filepath.Join(repo, ".git", d)); err != nil {
			t.Errorf("the repository's .git/%s is gone: %v\nclaude:\n%s", d, err, out)
		}
	}
	if out, err := exec.Command("git", "-C", repo, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v %s", err, out)
	}
}

// The real host, a red-worker writing git's own files of its worktree
// with the file tool: its .git file (the content holds the shim
// marker, which lets a red-worker's Write through) and a file under a
// directory named .git, which git status never shows. Both are refused
// and the .git file is what git wrote.
func TestHost_WorkerWritesNoGitFileWithTheFileTool(t *testing.T) {
	h := newHost(t)
	repo := h.sprintRepo(t)
	wt := filepath.Join(repo, ".ideate", "worktrees", "S1-01+T1")
	was, err := os.ReadFile(filepath.Join(wt, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(wt, "strutil", ".git", "x_test.go")
	api := &scriptedAPI{
		main: []map[string]any{redDispatch()},
		sub: []map[string]any{
			toolUse("Write", map[string]any{"file_path": filepath.Join(wt, ".git"), "content": "gitdir: " + filepath.Join(wt, "agentic:shim") + "\n"}),
			toolUse("Write", map[string]any{"file_path": hidden, "content": "package strutil\n"}),
		},
	}
	out := h.run(t, repo, api, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1")
	if now, _ := os.ReadFile(filepath.Join(wt, ".git")); string(now) != string(was) {
		t.Errorf("the worktree's .git file changed: %q\nclaude:\n%s", now, out)
	}
	if _, err := os.Stat(hidden); err == nil {
		t.Errorf("%s was written", hidden)
	}
}

// The real host, a confined red-worker that replaces its worktree's
// .ideate directory (where init.md lives) with a link to a package of
// the main checkout: the put-back of init.md, which runs outside
// confinement, does not follow it, and the main checkout gets no
// init.md.
func TestHost_ConfinedPutBackFollowsNoLink(t *testing.T) {
	h, repo, wt := confinedSprint(t)
	// An attempt's init.md, as the revision loop writes it.
	os.MkdirAll(filepath.Join(wt, ".ideate"), 0o755)
	if err := os.WriteFile(filepath.Join(wt, ".ideate", "init.md"), []byte("# Attempt 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	api := &scriptedAPI{
		main: []map[string]any{redDispatch()},
		sub: []map[string]any{
			toolUse("Bash", map[string]any{"command": "cd " + wt + " && mv .ideate .ideate-was && ln -s " + filepath.Join(repo, "strutil") + " .ideate", "description": "move"}),
		},
	}
	out := h.run(t, repo, api, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1")
	if _, err := os.Stat(filepath.Join(repo, "strutil", "init.md")); err == nil {
		t.Errorf("init.md was written into the main checkout\nclaude:\n%s", out)
	}
}

// confinedSprint is a sprint repository with S1-01/T1 started, and the
// worktree of that task, where the binary confines a worker's commands;
// the test skips where nothing confines.
func confinedSprint(t *testing.T) (h *host, repo, wt string) {
	t.Helper()
	h = newHost(t)
	repo = h.sprintRepo(t)
	if out := h.cli(t, repo, "doctor"); !strings.Contains(out, "mode: confined") {
		t.Skipf("no operating-system confinement here:\n%s", out)
	}
	return h, repo, filepath.Join(repo, ".ideate", "worktrees", "S1-01+T1")
}

// redDispatch is the main session's dispatch of a red-worker for
// S1-01/T1, in the foreground.
func redDispatch() map[string]any {
	return toolUse("Agent", map[string]any{"description": "red", "prompt": "ideate-task: S1-01/T1\nWrite the failing test.",
		"subagent_type": "git-ideate:red-worker", "run_in_background": false})
}
