package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/confine"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/worktree"
)

// recorded returns the first recorded payload of event (and tool, when
// not ""), as a map to change.
func recorded(t *testing.T, event, tool string) map[string]any {
	t.Helper()
	return recordedWhere(t, event+" "+tool, func(p map[string]any) bool {
		if p["hook_event_name"] != event || tool != "" && p["tool_name"] != tool {
			return false
		}
		_, sub := p["agent_id"]
		return tool != "Agent" || !sub
	})
}

// recordedWhere returns the first recorded payload that keep accepts, as a
// map to change; what names it in the failure.
func recordedWhere(t *testing.T, what string, keep func(map[string]any) bool) map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "internal", "hooks", "testdata", "hook-payloads-2.1.328.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var fx struct {
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &fx); err != nil {
			t.Fatal(err)
		}
		if keep(fx.Payload) {
			return fx.Payload
		}
	}
	t.Fatalf("no recorded %s payload", what)
	return nil
}

// execProject is a repository with the example plan, a Go runner in its
// standards, the plan's check passed and stored, and the tasks started
// (task → role).
func execProject(t *testing.T, tasks map[string]string) string {
	t.Helper()
	dir := uncheckedProject(t, tasks)
	mustOK(t, bin(t, dir, "", "plan", "check"))
	return dir
}

// uncheckedProject is execProject before the plan's check.
func uncheckedProject(t *testing.T, tasks map[string]string) string {
	t.Helper()
	dir := goPlanRepo(t, goRunner)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse.go"), []byte("package strutil\n\nfunc Reverse(s string) string { return s }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse_test.go"), []byte("package strutil\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	for task, role := range tasks {
		mustOK(t, bin(t, dir, "", "task", "start", task, "--role", role, "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**"))
	}
	return dir
}

type hostDecision struct {
	kind, reason string
}

// hookCall runs the built binary as the plugin does (`hook`, or `hook
// --gate`) on payload p, from dir, and returns its decision. It fails the
// test unless the exit code is 0 and stdout is empty or one JSON object
// naming the event.
func hookCall(t *testing.T, dir string, p map[string]any, args ...string) hostDecision {
	t.Helper()
	in, _ := json.Marshal(p)
	r := runBin(t, dir, string(in), append([]string{"hook"}, args...)...)
	ev, _ := p["hook_event_name"].(string)
	checkHostOutput(t, ev, r, ev)
	return decisionIn(t, r.out)
}

func decisionIn(t *testing.T, out string) hostDecision {
	t.Helper()
	if out == "" {
		return hostDecision{}
	}
	var m struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		HSO      struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if m.HSO.PermissionDecision != "" {
		return hostDecision{m.HSO.PermissionDecision, m.HSO.PermissionDecisionReason}
	}
	return hostDecision{m.Decision, m.Reason}
}

func with(p map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// session is one recorded session's payload shapes pointed at a project.
type session struct {
	t          *testing.T
	dir        string
	transcript string
	agentTool  map[string]any // PreToolUse(Agent) in the main session
	subTool    map[string]any // PreToolUse(Bash) inside a sub-agent
	subStop    map[string]any // SubagentStop
	mainTool   map[string]any // PreToolUse(Bash) in the main session
}

func newSession(t *testing.T, dir string) *session {
	tr := filepath.Join(t.TempDir(), "projects", "3b311f76-4634-48ab-b822-33299bd463ef.jsonl")
	os.MkdirAll(filepath.Dir(tr), 0o755)
	s := &session{t: t, dir: dir, transcript: tr,
		agentTool: recorded(t, "PreToolUse", "Agent"), subTool: nil, subStop: nil, mainTool: recorded(t, "PreToolUse", "Bash")}
	for _, p := range []map[string]any{recorded(t, "SubagentStop", "")} {
		s.subStop = p
	}
	// The first PreToolUse inside the sub-agent.
	f, _ := os.Open(filepath.Join("..", "..", "internal", "hooks", "testdata", "hook-payloads-2.1.328.jsonl"))
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var fx struct {
			Payload map[string]any `json:"payload"`
		}
		json.Unmarshal(sc.Bytes(), &fx)
		if fx.Payload["hook_event_name"] == "PreToolUse" && fx.Payload["agent_id"] != nil && s.subTool == nil {
			s.subTool = fx.Payload
		}
		if fx.Payload["hook_event_name"] == "SubagentStop" && fx.Payload["agent_type"] != "" && fx.Payload["agent_type"] != nil {
			s.subStop = fx.Payload
		}
	}
	if s.subTool == nil {
		t.Fatal("no sub-agent PreToolUse in the recording")
	}
	return s
}

// dispatch is the main session's Agent call of role with prompt.
func (s *session) dispatch(toolUse, role, prompt string, extra ...any) hostDecision {
	ti := map[string]any{"description": "Work the task", "prompt": prompt, "subagent_type": "git-ideate:" + role}
	for i := 0; i+1 < len(extra); i += 2 {
		ti[extra[i].(string)] = extra[i+1]
	}
	return hookCall(s.t, s.dir, with(s.agentTool, "cwd", s.dir, "transcript_path", s.transcript, "tool_use_id", toolUse, "tool_input", ti))
}

// meta writes the host's meta file of agent, as the host does from the
// sub-agent's first tool call on.
func (s *session) meta(agent, role, toolUse string) {
	p := filepath.Join(strings.TrimSuffix(s.transcript, ".jsonl"), "subagents", "agent-"+agent+".meta.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	b, _ := json.Marshal(map[string]any{"agentType": "git-ideate:" + role, "isBuiltIn": false, "description": "Work the task",
		"toolUseId": toolUse, "spawnDepth": 1, "requestShape": "foreground"})
	if err := os.WriteFile(p, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// tool is a sub-agent's tool call from cwd.
func (s *session) tool(agent, role, cwd, tool string, input map[string]any) hostDecision {
	return hookCall(s.t, cwd, with(s.subTool, "cwd", cwd, "transcript_path", s.transcript, "agent_id", agent,
		"agent_type", "git-ideate:"+role, "tool_name", tool, "tool_input", input))
}

func (s *session) bash(agent, role, cwd, command string) hostDecision {
	return s.tool(agent, role, cwd, "Bash", map[string]any{"command": command, "description": "run"})
}

func wantDeny(t *testing.T, what string, d hostDecision, substr string) {
	t.Helper()
	if d.kind != "deny" || !strings.Contains(d.reason, substr) {
		t.Errorf("%s: %+v, want a deny saying %q", what, d, substr)
	}
}

func wantAllow(t *testing.T, what string, d hostDecision) {
	t.Helper()
	if d.kind != "" {
		t.Errorf("%s: %+v, want no decision", what, d)
	}
}

// Every path of the dispatch binding and the role guard, through the
// built binary with payloads shaped like the recorded ones.
// The planning→execution gate through the binary: an execution
// agent's dispatch is denied before a PASS of the plan's check is stored,
// allowed after, denied again after an edit to the plan, and while the
// stored check of the current plan is a FAIL.
func TestHookGate_Binary_PlanGate(t *testing.T) {
	dir := uncheckedProject(t, map[string]string{"S1-01/T1": "red-worker"})
	s := newSession(t, dir)
	wantDeny(t, "before a check", s.dispatch("toolu_p1", "red-worker", "ideate-task: S1-01/T1"), "plan_unchecked")
	wantAllow(t, "a non-execution agent", s.dispatch("toolu_p2", "worker", "Do the next item."))
	mustOK(t, bin(t, dir, "", "plan", "check"))
	wantAllow(t, "after a PASS", s.dispatch("toolu_p3", "red-worker", "ideate-task: S1-01/T1"))
	stories := filepath.Join(dir, "docs", "agents", "sprint1", "stories.md")
	raw, _ := os.ReadFile(stories)
	os.WriteFile(stories, append(raw, "\nEdited after the check.\n"...), 0o644)
	wantDeny(t, "after an edit", s.dispatch("toolu_p4", "red-worker", "ideate-task: S1-01/T1"), "plan_unchecked")
	os.WriteFile(stories, []byte(strings.Replace(string(raw), "**Connections", "**Links", 1)), 0o644)
	if r := bin(t, dir, "", "plan", "check"); r.code != 3 || !strings.Contains(r.out, "verdict stored: exec ") {
		t.Fatalf("check of a failing plan: %+v", r)
	}
	wantDeny(t, "after a FAIL", s.dispatch("toolu_p5", "red-worker", "ideate-task: S1-01/T1"), "plan_failed")
	os.WriteFile(stories, raw, 0o644)
	wantAllow(t, "the checked plan again", s.dispatch("toolu_p6", "red-worker", "ideate-task: S1-01/T1"))
}

func TestHookGate_Binary_BindingAndGuard(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker", "S1-01/T2": "green-worker"})
	s := newSession(t, dir)
	redWT := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	greenWT := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T2")

	// Dispatches.
	wantDeny(t, "no ideate-task line", s.dispatch("toolu_01", "red-worker", "Write the failing test."), "names no task")
	wantDeny(t, "no contract", s.dispatch("toolu_02", "red-worker", "ideate-task: S1-09/T9"), "task S1-09/T9 has no contract")
	wantDeny(t, "role mismatch", s.dispatch("toolu_03", "green-worker", "ideate-task: S1-01/T1"), "open for a red-worker, not a green-worker")
	wantDeny(t, "isolation", s.dispatch("toolu_04", "red-worker", "ideate-task: S1-01/T1", "isolation", "worktree"), "without isolation")
	wantDeny(t, "two tasks", s.dispatch("toolu_05", "red-worker", "ideate-task: S1-01/T1\nideate-task: S1-01/T2"), "two tasks")
	wantAllow(t, "a non-execution agent", s.dispatch("toolu_06", "worker", "Do the next item."))
	wantAllow(t, "red dispatch", s.dispatch("toolu_red", "red-worker", "Write the failing test.\n\nideate-task: S1-01/T1\n"))
	wantAllow(t, "green dispatch", s.dispatch("toolu_green", "green-worker", "ideate-task: `S1-01/T2`"))
	if _, err := os.Stat(filepath.Join(dir, ".git", "ideate", "dispatch", "pending", "toolu_red.json")); err != nil {
		t.Fatalf("no pending dispatch: %v", err)
	}

	// An unbound execution agent: every call denied, saying what is missing.
	wantDeny(t, "unbound Write", s.tool("a0", "red-worker", redWT, "Write", map[string]any{"file_path": "strutil/x_test.go", "content": "package strutil"}), "bound to no task")
	wantDeny(t, "unbound Bash", s.bash("a0", "red-worker", redWT, "ls"), "meta file")
	// A meta file naming a dispatch that was never approved.
	s.meta("a9", "red-worker", "toolu_01")
	wantDeny(t, "unapproved dispatch", s.bash("a9", "red-worker", redWT, "ls"), "was not approved")

	// The red-worker, bound through the meta file on its first call.
	s.meta("ared", "red-worker", "toolu_red")
	wantAllow(t, "red writes a test", s.tool("ared", "red-worker", redWT, "Write", map[string]any{"file_path": filepath.Join(redWT, "strutil", "reverse_test.go"), "content": "package strutil\n"}))
	b, err := os.ReadFile(filepath.Join(dir, ".git", "ideate", "dispatch", "agents", "ared.json"))
	if err != nil || !strings.Contains(string(b), `"task":"S1-01/T1"`) || !strings.Contains(string(b), `"via":"meta"`) {
		t.Fatalf("binding: %s %v", b, err)
	}
	wantDeny(t, "red writes production", s.tool("ared", "red-worker", redWT, "Write", map[string]any{"file_path": "strutil/reverse.go", "content": "package strutil\n"}), "not_a_test")
	wantAllow(t, "red writes a shim", s.tool("ared", "red-worker", redWT, "Write", map[string]any{"file_path": "strutil/shim.go", "content": "package strutil // agentic:shim\n"}))
	wantDeny(t, "red edits outside", s.tool("ared", "red-worker", redWT, "Edit", map[string]any{"file_path": filepath.Join(dir, "strutil", "reverse_test.go"), "old_string": "a", "new_string": "b"}), "outside_worktree")
	wantDeny(t, "red climbs out", s.tool("ared", "red-worker", redWT, "Write", map[string]any{"file_path": "../S1-01+T2/strutil/z_test.go", "content": ""}), "outside_worktree")
	wantDeny(t, "red echo > prod.go", s.bash("ared", "red-worker", redWT, "echo x > strutil/prod.go"), "not_a_test")
	wantAllow(t, "red tee a test", s.bash("ared", "red-worker", redWT, "printf 'package strutil\\n' | tee strutil/more_test.go"))
	// The cost gate: the whole module from a one-package task is denied
	// naming the package; the package passes; an override passes and is
	// logged.
	wantDeny(t, "red go test ./...", s.bash("ared", "red-worker", redWT, "go test ./... 2>&1 | tail -20"), "`go test ./strutil/`")
	wantAllow(t, "red go test", s.bash("ared", "red-worker", redWT, "go test ./strutil/ 2>&1 | tail -20"))
	wantAllow(t, "red go test override", s.bash("ared", "red-worker", redWT, "IDEATE_COST_OVERRIDE='the whole module on purpose' go test ./..."))
	if r := cli(t, dir, "", "exec", "log", "--phase", "cost"); strings.Count(r.out, "\n") != 2 || !strings.Contains(r.out, "result=PASS class=override") ||
		!strings.Contains(r.out, "result=FAIL class=too_wide") {
		t.Fatalf("cost entries in the exec log:\n%s", r.out)
	}
	wantAllow(t, "red git status", s.bash("ared", "red-worker", redWT, "git status --short && git diff && git log --oneline -3"))
	wantDeny(t, "red sed -i production", s.bash("ared", "red-worker", redWT, "sed -i 's/s/t/' strutil/reverse.go"), "not_a_test")
	wantDeny(t, "unparseable", s.bash("ared", "red-worker", redWT, `eval "$(cat cmd.txt)"`), "cannot tell what this command writes")
	wantDeny(t, "python -c", s.bash("ared", "red-worker", redWT, `python3 -c 'open("strutil/a.go","w").write("x")'`), "runs code")
	wantDeny(t, "plan edit", s.tool("ared", "red-worker", redWT, "Edit", map[string]any{"file_path": "docs/agents/sprint1/plan.md", "old_string": "a", "new_string": "b"}), "planning_artifact")
	wantDeny(t, "dispatch from a worker", s.tool("ared", "red-worker", redWT, "Agent", map[string]any{"prompt": "help", "subagent_type": "git-ideate:worker"}), "dispatches no agents")
	// MCP tools run in their server's process, unconfined: only this
	// repository's server's read-only tools are a worker's.
	wantDeny(t, "red MCP write", s.tool("ared", "red-worker", redWT, "mcp__plugin_git-ideate_ideate__task_complete", map[string]any{"task": "S1-01/T1"}), "mcp_tool")
	wantDeny(t, "red another server's MCP tool", s.tool("ared", "red-worker", redWT, "mcp__fs__write_file", map[string]any{"path": "strutil/a.go"}), "mcp_tool")
	wantDeny(t, "red a read-only name of another server", s.tool("ared", "red-worker", redWT, "mcp__evil__record_read", map[string]any{}), "mcp_tool")
	wantAllow(t, "red MCP read", s.tool("ared", "red-worker", redWT, "mcp__plugin_git-ideate_ideate__record_read", map[string]any{}))
	// The red binding does not make a green-worker of the same agent id.
	wantDeny(t, "role changed", s.bash("ared", "green-worker", redWT, "ls"), "bound as a red-worker")

	// The green-worker.
	s.meta("agreen", "green-worker", "toolu_green")
	wantAllow(t, "green edits production", s.tool("agreen", "green-worker", greenWT, "Edit", map[string]any{"file_path": "strutil/reverse.go", "old_string": "return s", "new_string": "return r"}))
	wantDeny(t, "green edits a test", s.tool("agreen", "green-worker", greenWT, "Edit", map[string]any{"file_path": "strutil/reverse_test.go", "old_string": "a", "new_string": "b"}), "test_changed")
	wantDeny(t, "green sed -i a test", s.bash("agreen", "green-worker", greenWT, "sed -i 's/a/b/' strutil/reverse_test.go"), "test_changed")
	wantDeny(t, "green tee a test", s.bash("agreen", "green-worker", greenWT, "echo x | tee -a strutil/reverse_test.go"), "test_changed")
	wantDeny(t, "green git checkout -- test", s.bash("agreen", "green-worker", greenWT, "git checkout -- strutil/reverse_test.go"), "test_changed")
	wantDeny(t, "green git restore", s.bash("agreen", "green-worker", greenWT, "git restore strutil/reverse_test.go"), "test_changed")
	wantDeny(t, "green rm a test", s.bash("agreen", "green-worker", greenWT, "rm strutil/reverse_test.go"), "test_changed")

	// Other sub-agents while tasks are open: they read, and write nothing
	// in the repository (main checkout and task worktrees).
	helper := func(cwd, agentType, tool string, input map[string]any) hostDecision {
		return hookCall(t, cwd, with(s.subTool, "cwd", cwd, "agent_id", "ahelp", "agent_type", agentType, "tool_name", tool, "tool_input", input))
	}
	wantDeny(t, "helper edits the plan", helper(dir, "general-purpose", "Write", map[string]any{"file_path": "docs/agents/sprint1/plan.md", "content": "x"}), "sprint_read_only")
	wantDeny(t, "helper writes source", helper(dir, "general-purpose", "Write", map[string]any{"file_path": filepath.Join(dir, "strutil", "reverse.go"), "content": "x"}), "sprint_read_only")
	wantDeny(t, "helper edits a frozen test", helper(greenWT, "Explore", "Edit", map[string]any{"file_path": "strutil/reverse_test.go", "old_string": "a", "new_string": "b"}), "sprint_read_only")
	wantDeny(t, "helper's shell writes", helper(greenWT, "other-plugin:coder", "Bash", map[string]any{"command": "echo x > strutil/reverse.go"}), "sprint_read_only")
	wantDeny(t, "helper's unreadable command", helper(dir, "general-purpose", "Bash", map[string]any{"command": `python3 -c 'open("strutil/a.go","w")'`}), "unknown_command")
	wantAllow(t, "helper runs a command", hookCall(t, dir, with(s.subTool, "cwd", dir)))
	wantAllow(t, "helper reads", helper(dir, "general-purpose", "Bash", map[string]any{"command": "git log --oneline -3 && grep -rn Reverse strutil"}))
	wantAllow(t, "helper writes outside", helper(dir, "general-purpose", "Write", map[string]any{"file_path": filepath.Join(t.TempDir(), "notes.md"), "content": "x"}))
	wantDeny(t, "helper's MCP write", helper(dir, "general-purpose", "mcp__ideate__task_abandon", map[string]any{"task": "S1-01/T1"}), "mcp_tool")
	wantAllow(t, "helper's MCP read", helper(dir, "general-purpose", "mcp__ideate__exec_log", map[string]any{}))
	wantDeny(t, "helper dispatches a worker", helper(dir, "general-purpose", "Agent", map[string]any{"prompt": "ideate-task: S1-09/T9", "subagent_type": "red-worker"}), "no_contract")
	// Reviewers are bound at their dispatch to the task (or sprint) they
	// review, write nothing at all, and run the gates; one bound to
	// nothing is refused every call.
	wantDeny(t, "reviewer dispatch without a task", s.dispatch("toolu_rv0", "structural-reviewer", "Review the diff."), "dispatch_no_task")
	wantDeny(t, "reviewer dispatch of a task never started", s.dispatch("toolu_rv1", "structural-reviewer", "ideate-task: S1-09/T9"), "no_contract")
	wantDeny(t, "final-gate dispatch naming no sprint", s.dispatch("toolu_rv2", "final-gate", "ideate-sprint: one"), "not a sprint number")
	wantAllow(t, "reviewer dispatch of a task", s.dispatch("toolu_rv3", "structural-reviewer", "ideate-task: S1-01/T1"))
	wantAllow(t, "final-gate dispatch of a sprint", s.dispatch("toolu_rv4", "final-gate", "ideate-sprint: 1"))
	s.meta("arev", "structural-reviewer", "toolu_rv3")
	s.meta("afin", "final-gate", "toolu_rv4")
	s.meta("alone", "archivist", "toolu_none")
	wantDeny(t, "reviewer writes notes", s.bash("arev", "structural-reviewer", dir, "echo note > review-notes.txt"), "read_only")
	wantDeny(t, "reviewer writes outside", s.tool("afin", "final-gate", dir, "Write", map[string]any{"file_path": filepath.Join(t.TempDir(), "n.md"), "content": "x"}), "read_only")
	wantAllow(t, "reviewer runs a gate", s.bash("afin", "final-gate", dir, "git ideate exec log --phase green 2>/dev/null | head"))
	wantAllow(t, "reviewer reads", s.bash("arev", "structural-reviewer", dir, "git ideate gate structure --task S1-01/T1 2>&1 | tail"))
	wantDeny(t, "reviewer bound to nothing", s.bash("alone", "archivist", dir, "git ideate exec log"), "unbound")
	wantDeny(t, "reviewer bound to nothing, unprefixed", helper(dir, "final-gate", "Bash", map[string]any{"command": "ls"}), "unbound")
	if b, err := os.ReadFile(filepath.Join(dir, ".git", "ideate", "dispatch", "agents", "arev.json")); err != nil || !strings.Contains(string(b), `"task":"S1-01/T1"`) {
		t.Errorf("the structural-reviewer's binding: %s %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".git", "ideate", "dispatch", "agents", "afin.json")); err != nil || !strings.Contains(string(b), `"sprint":1`) {
		t.Errorf("the final-gate's binding: %s %v", b, err)
	}
	// Its outcome is on its task's account too.
	hookCall(t, dir, with(s.subStop, "cwd", dir, "transcript_path", s.transcript, "agent_id", "arev", "agent_type", "git-ideate:structural-reviewer"))
	if rec := gt.Git(t, dir, "log", "-1", "-p", "refs/ideate/record"); !strings.Contains(rec, "on task S1-01/T1") || !strings.Contains(rec, `task_id: "S1-01/T1"`) {
		t.Errorf("the reviewer's outcome record:\n%s", rec)
	}
	if r := cli(t, dir, "", "exec", "log", "--phase", "guard", "--json"); !strings.Contains(r.out, "role structural-reviewer (agent arev)") {
		t.Errorf("the reviewer's refusal is not on the log:\n%s", r.out)
	} else if i := strings.Index(r.out, "role structural-reviewer (agent arev)"); !strings.Contains(r.out[max(0, i-1500):i], `"task": "S1-01/T1"`) {
		t.Errorf("the reviewer's refusal is not on its task's account:\n%s", r.out)
	}
	// The plugin's agents without the plugin's prefix are the same roles.
	s.meta("abare", "red-worker", "toolu_none")
	wantDeny(t, "unprefixed red-worker, unbound", helper(redWT, "red-worker", "Bash", map[string]any{"command": "ls"}), "unbound")

	// The main session while the tasks are open: no production source.
	main := func(tool string, input map[string]any) hostDecision {
		return hookCall(t, dir, with(s.mainTool, "cwd", dir, "tool_name", tool, "tool_input", input))
	}
	wantDeny(t, "main writes source", main("Write", map[string]any{"file_path": filepath.Join(dir, "strutil", "reverse.go"), "content": "x"}), "production_source")
	wantDeny(t, "main echo > source", main("Bash", map[string]any{"command": "echo x >> strutil/reverse.go"}), "production_source")
	wantAllow(t, "main edits the plan", main("Edit", map[string]any{"file_path": filepath.Join(dir, "docs", "agents", "sprint1", "plan.md"), "old_string": "a", "new_string": "b"}))
	wantAllow(t, "main runs tests", main("Bash", map[string]any{"command": "go test ./..."}))

	// A closed task: its agent has nothing more to do; and with no task
	// open the main session writes what it likes.
	mustOK(t, bin(t, dir, "", "task", "release", "S1-01/T1"))
	// (its worktree is gone: the hook runs from the project, as the host's would.)
	wantDeny(t, "closed task", hookCall(t, dir, with(s.subTool, "cwd", redWT, "transcript_path", s.transcript, "agent_id", "ared",
		"agent_type", "git-ideate:red-worker", "tool_input", map[string]any{"command": "ls"})), "is released")
	mustOK(t, bin(t, dir, "", "task", "release", "S1-01/T2"))
	wantAllow(t, "main after the sprint", main("Write", map[string]any{"file_path": filepath.Join(dir, "strutil", "reverse.go"), "content": "x"}))
}

// Two sub-agents making their first calls at once, as real processes,
// each end up bound to their own task; so do the stop gates.
func TestHookGate_Binary_ConcurrentBinding(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker", "S1-01/T2": "red-worker"})
	s := newSession(t, dir)
	wantAllow(t, "dispatch 1", s.dispatch("toolu_a", "red-worker", "ideate-task: S1-01/T1"))
	wantAllow(t, "dispatch 2", s.dispatch("toolu_b", "red-worker", "ideate-task: S1-01/T2"))
	s.meta("agent1", "red-worker", "toolu_a")
	s.meta("agent2", "red-worker", "toolu_b")
	var wg sync.WaitGroup
	res := make([]hostDecision, 8)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent, task := "agent1", "S1-01+T1"
			if i%2 == 1 {
				agent, task = "agent2", "S1-01+T2"
			}
			wt := filepath.Join(dir, ".ideate", "worktrees", task)
			res[i] = s.tool(agent, "red-worker", wt, "Write", map[string]any{"file_path": "strutil/new_test.go", "content": "package strutil"})
		}()
	}
	wg.Wait()
	for i, r := range res {
		wantAllow(t, "concurrent first call", r)
		_ = i
	}
	for agent, task := range map[string]string{"agent1": "S1-01/T1", "agent2": "S1-01/T2"} {
		b, err := os.ReadFile(filepath.Join(dir, ".git", "ideate", "dispatch", "agents", agent+".json"))
		if err != nil || !strings.Contains(string(b), `"task":"`+task+`"`) {
			t.Errorf("%s: %s %v", agent, b, err)
		}
	}
	// Crossed: agent1 writing in agent2's worktree.
	wantDeny(t, "crossed", s.tool("agent1", "red-worker", filepath.Join(dir, ".ideate", "worktrees", "S1-01+T2"), "Write", map[string]any{"file_path": "strutil/new_test.go", "content": ""}), "outside_worktree")
}

// The stop gate entry through the binary: a bound red-worker's stop asks
// the red gate for its task and never lets the stop pass without a
// verdict; the catch-all entry only records.
func TestHookGate_Binary_SubagentStop(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker"})
	s := newSession(t, dir)
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	wantAllow(t, "dispatch", s.dispatch("toolu_r", "red-worker", "ideate-task: S1-01/T1"))
	s.meta("ared", "red-worker", "toolu_r")
	stop := with(s.subStop, "cwd", wt, "transcript_path", s.transcript, "agent_id", "ared", "agent_type", "git-ideate:red-worker", "stop_hook_active", false)
	d := hookCall(t, wt, stop, "--gate")
	if d.kind != "block" || !strings.Contains(d.reason, "git ideate gate red: ") || !strings.Contains(d.reason, "task S1-01/T1") {
		t.Fatalf("red stop: %+v", d)
	}
	// The catch-all entry records the outcome and decides nothing.
	if d := hookCall(t, wt, stop); d.kind != "" {
		t.Fatalf("catch-all: %+v", d)
	}
	// An unbound red-worker: blocked once with the reason, then let go.
	un := with(stop, "agent_id", "anone")
	if d := hookCall(t, wt, un, "--gate"); d.kind != "block" || !strings.Contains(d.reason, "bound to no task") {
		t.Fatalf("unbound: %+v", d)
	}
	if d := hookCall(t, wt, with(un, "stop_hook_active", true), "--gate"); d.kind != "" {
		t.Fatalf("unbound again: %+v", d)
	}
}

// Garbage never blocks the host by accident (exit 0, no decision) and
// never leaves a binding or a dispatch behind; a tool call whose payload
// cannot be read (a PreToolUse cut short, or with a NUL between its
// values) is denied, never let through unjudged.
func TestHookGate_Binary_Garbage(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker"})
	s := newSession(t, dir)
	good, _ := json.Marshal(with(s.agentTool, "cwd", dir, "tool_use_id", "toolu_g", "tool_input", map[string]any{"prompt": "ideate-task: S1-01/T1", "subagent_type": "git-ideate:red-worker"}))
	big := strings.Repeat("x", 1<<20)
	for name, in := range map[string]string{
		"truncated":        string(good[:len(good)/2]),
		"empty":            "",
		"array":            "[1,2]",
		"string":           `"PreToolUse"`,
		"NUL":              "{\"hook_event_name\":\"PreToolUse\"\x00}",
		"NUL in a field":   `{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":"` + dir + `","tool_input":{"file_path":"a\u0000b"}}`,
		"wrong types":      `{"hook_event_name":"PreToolUse","tool_name":["Write"],"tool_input":"x","cwd":7}`,
		"1 MB cwd":         `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"` + big + `"}`,
		"1 MB command":     `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo ` + big + `"},"cwd":"` + dir + `"}`,
		"stop, truncated":  `{"hook_event_name":"SubagentStop","agent_type":"git-ideate:red-worker","agent_id":"a`,
		"agent, no prompt": `{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":7,"cwd":"` + dir + `"}`,
	} {
		for _, args := range [][]string{{"hook"}, {"hook", "--gate"}} {
			r := runBin(t, dir, in, args...)
			if r.code != 0 {
				t.Errorf("%s %v: exit %d", name, args, r.code)
			}
			want := ""
			if name == "truncated" || name == "NUL" {
				want = "deny"
			}
			if d := decisionIn(t, r.out); d.kind != want {
				t.Errorf("%s %v: decision %+v, want %q", name, args, d, want)
			}
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, ".git", "ideate", "dispatch", "agents"))
	pend, _ := os.ReadDir(filepath.Join(dir, ".git", "ideate", "dispatch", "pending"))
	if len(ents)+len(pend) != 0 {
		t.Fatalf("garbage left %d bindings and %d dispatches", len(ents), len(pend))
	}
}

// The stop gate entry runs the real red gate for the agent's task: a RED
// commit whose declared test fails by assertion lets the red-worker go and
// leaves a stored red PASS on the judged commit; one whose test already
// passes is blocked with the verdict. A green-worker dispatched afterwards
// carries what that verified RED commit changed as frozen files.
func TestHookGate_Binary_RealRedGate(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker", "S1-01/T2": "red-worker"})
	s := newSession(t, dir)
	wt := func(task string) string {
		return filepath.Join(dir, ".ideate", "worktrees", strings.ReplaceAll(task, "/", "+"))
	}
	for task, want := range map[string]string{
		"S1-01/T1": `if Reverse("abc") != "cba" { t.Fatal("Reverse(abc) != cba") }`,
		"S1-01/T2": `if Reverse("") != "" { t.Fatal("Reverse of nothing") }`,
	} {
		os.WriteFile(filepath.Join(wt(task), "strutil", "reverse_test.go"), []byte("package strutil\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) {\n\t"+want+"\n}\n"), 0o644)
		gt.Git(t, wt(task), "add", "-A")
		gt.Git(t, wt(task), "commit", "-q", "-m", "red")
	}
	for i, task := range []string{"S1-01/T1", "S1-01/T2"} {
		tu, agent := "toolu_real"+string(rune('1'+i)), "areal"+string(rune('1'+i))
		wantAllow(t, "dispatch "+task, s.dispatch(tu, "red-worker", "ideate-task: "+task))
		s.meta(agent, "red-worker", tu)
		d := hookCall(t, wt(task), with(s.subStop, "cwd", wt(task), "transcript_path", s.transcript, "agent_id", agent,
			"agent_type", "git-ideate:red-worker", "stop_hook_active", false), "--gate")
		switch task {
		case "S1-01/T1":
			if d.kind != "" {
				t.Fatalf("red PASS blocked: %+v", d)
			}
			if n := gt.Git(t, wt(task), "log", "-1", "--notes=ideate", "--format=%N"); !strings.Contains(n, "red PASS S1-01/T1") {
				t.Fatalf("no stored red PASS on the judged commit: %q", n)
			}
		case "S1-01/T2":
			if d.kind != "block" || !strings.Contains(d.reason, "git ideate gate red: FAIL") || !strings.Contains(d.reason, "S1-01/T2") {
				t.Fatalf("red FAIL: %+v", d)
			}
		}
	}
	// GREEN on T1 after its verified RED.
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--role", "green-worker"))
	wantAllow(t, "green dispatch", s.dispatch("toolu_green1", "green-worker", "ideate-task: S1-01/T1"))
	s.meta("agreen1", "green-worker", "toolu_green1")
	edit := func(path string) hostDecision {
		return s.tool("agreen1", "green-worker", wt("S1-01/T1"), "Edit", map[string]any{"file_path": path, "old_string": "a", "new_string": "b"})
	}
	wantDeny(t, "green edits RED's test", edit("strutil/reverse_test.go"), "test_changed")
	wantAllow(t, "green edits the code", edit("strutil/reverse.go"))
	b, err := os.ReadFile(filepath.Join(dir, ".git", "ideate", "dispatch", "agents", "agreen1.json"))
	if err != nil || !strings.Contains(string(b), `"frozen":["strutil/reverse_test.go"]`) {
		t.Fatalf("green binding without RED's frozen files: %s %v", b, err)
	}
}

// A dispatch waits for the task's dependencies (the plan's waves and
// `Depends on:`) to pass GREEN, however the task was started; every
// refusal is on the execution log with the role, task, tool and reason
// class, and without the command's text.
func TestHookGate_Binary_WaveOrderAndDenialLog(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker"})
	// S1-02/T1 is in wave 2 and depends on S1-01/T2: started without a
	// board item, it has a contract all the same.
	mustOK(t, bin(t, dir, "", "task", "start", "S1-02/T1", "--role", "red-worker", "--test", "strutil/slug_test.go::TestSlug", "--scope", "strutil/**"))
	// task start refuses a task the plan does not hold; the dispatch guard
	// refuses it too when a contract exists anyway (made before the task
	// left the plan: here through the library).
	if r := bin(t, dir, "", "task", "start", "S1-07/T1", "--role", "red-worker", "--test", "strutil/x_test.go::TestX", "--scope", "strutil/**"); r.code == 0 || !strings.Contains(r.err, "NOT_FOUND") {
		t.Fatalf("task start of a task outside the plan: %+v", r)
	}
	if g, err := gitstore.Open(dir); err != nil {
		t.Fatal(err)
	} else {
		_, err := worktree.Open(g).Start(context.Background(), worktree.StartInput{Task: "S1-07/T1", Role: "red-worker",
			Scope: []string{"strutil/**"}, Tests: []string{"strutil/x_test.go::TestX"}, Holder: "planner", Token: 1})
		g.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	s := newSession(t, dir)
	d := s.dispatch("toolu_w2", "red-worker", "ideate-task: S1-02/T1")
	wantDeny(t, "wave 2 before wave 1", d, "dependency_open")
	for _, want := range []string{"S1-01/T1", "S1-01/T2"} {
		if !strings.Contains(d.reason, want) {
			t.Errorf("the denial does not name %s: %s", want, d.reason)
		}
	}
	wantDeny(t, "a task outside the plan", s.dispatch("toolu_w3", "red-worker", "ideate-task: S1-07/T1"), "not_in_plan")
	wantAllow(t, "wave 1", s.dispatch("toolu_w1", "red-worker", "ideate-task: S1-01/T1"))

	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := execlog.Open(g)
	green := func(task, result string) {
		if _, err := log.Append(context.Background(), execlog.Entry{Task: task, Attempt: 1, Phase: "green", Event: execlog.EventVerdict, Result: result}); err != nil {
			t.Fatal(err)
		}
	}
	green("S1-01/T1", "PASS")
	green("S1-01/T2", "FAIL")
	g.Close()
	d = s.dispatch("toolu_w4", "red-worker", "ideate-task: S1-02/T1")
	wantDeny(t, "one dependency failed GREEN", d, "dependency_open")
	if strings.Contains(d.reason, "S1-01/T1,") || !strings.Contains(d.reason, "S1-01/T2") {
		t.Errorf("the denial names the wrong tasks: %s", d.reason)
	}
	g, _ = gitstore.Open(dir)
	log = execlog.Open(g)
	green("S1-01/T2", "PASS")
	g.Close()
	wantAllow(t, "every dependency passed GREEN", s.dispatch("toolu_w5", "red-worker", "ideate-task: S1-02/T1"))

	// A worker's refused calls are logged for the review and the retro.
	redWT := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	s.meta("ared", "red-worker", "toolu_w1")
	secret := `python3 -c 'open("strutil/a.go","w").write("TOKEN=hunter2")'`
	wantDeny(t, "red inline code", s.bash("ared", "red-worker", redWT, secret), "unknown_command")
	wantDeny(t, "red writes production", s.tool("ared", "red-worker", redWT, "Write", map[string]any{"file_path": "strutil/reverse.go", "content": "package strutil\n"}), "not_a_test")
	r := cli(t, dir, "", "exec", "log", "--phase", "guard", "--json")
	if wave2 := cli(t, dir, "", "exec", "log", "--phase", "guard").out; !strings.Contains(wave2, "wave-2 gate S1-02 verdict phase=guard task=T1") ||
		!strings.Contains(wave2, "wave-1 gate S1-01 verdict phase=guard task=T1") || !strings.Contains(wave2, "wave-0 gate S1-07 verdict phase=guard task=T1") {
		t.Errorf("the refusals are not placed in their sprint and wave (a task outside the plan in none):\n%s", wave2)
	}
	for _, want := range []string{`"class": "dependency_open"`, `"class": "not_in_plan"`, `"class": "unknown_command"`, `"class": "not_a_test"`,
		"role red-worker (agent ared); tool Bash; command sha256:", "tool Write; path strutil/reverse.go", `"task": "S1-01/T1"`, `"task": "S1-02/T1"`, "dispatch git-ideate:red-worker"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("the guard's log lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "hunter2") || strings.Contains(r.out, "open(") {
		t.Errorf("the command's text is in the log:\n%s", r.out)
	}
	if rr := cli(t, dir, "", "retro", "--json"); !strings.Contains(rr.out, "not_a_test") {
		t.Errorf("the retrospective does not count the refusals:\n%s", rr.out)
	}
	gt.Git(t, dir, "fsck", "--strict")
}

// The check after the fact: at a worker's stop, a change to the main
// checkout or an idle task's worktree since its dispatch, a symlink out of
// its worktree or a hard-linked file is FAIL escaped_write naming the
// paths; a GREEN link onto a test is FAIL link_to_test. What the main
// session's logged calls changed (and its planning edits), and what
// another task's agent's logged calls changed in its own worktree, are
// not the worker's doing; any other change anywhere is.
func TestHookGate_Binary_EscapedWrite(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker", "S1-01/T2": "green-worker"})
	s := newSession(t, dir)
	redWT := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	greenWT := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T2")
	// A tracked file and an untracked one the main session's Bash call
	// removes later.
	old := filepath.Join(dir, "OLD.txt")
	os.WriteFile(old, []byte("old\n"), 0o644)
	gt.Git(t, dir, "add", "OLD.txt")
	gt.Git(t, dir, "commit", "-q", "-m", "old")
	scratch := filepath.Join(dir, "SCRATCH.txt")
	os.WriteFile(scratch, []byte("scratch\n"), 0o644)
	wantAllow(t, "red dispatch", s.dispatch("toolu_r", "red-worker", "ideate-task: S1-01/T1"))
	s.meta("ared", "red-worker", "toolu_r")
	wantAllow(t, "green dispatch", s.dispatch("toolu_g", "green-worker", "ideate-task: S1-01/T2"))
	s.meta("agreen", "green-worker", "toolu_g")
	wantAllow(t, "green binds", s.bash("agreen", "green-worker", greenWT, "ls"))
	stop := func(agent, role, wt string) hostDecision {
		return hookCall(t, wt, with(s.subStop, "cwd", wt, "transcript_path", s.transcript, "agent_id", agent, "agent_type", role, "stop_hook_active", false), "--gate")
	}

	// Nothing escaped: the red gate itself judges.
	if d := stop("ared", "red-worker", redWT); d.kind != "block" || !strings.Contains(d.reason, "git ideate gate red: ") {
		t.Fatalf("clean stop: %+v", d)
	}
	// Writes no guard saw: one in the main checkout, one through a
	// symlink the worker left, one in the green-worker's worktree that
	// no logged call of the green-worker made, and a file the main session
	// wrote that changed again after. Not the red-worker's doing: a
	// planning edit of the main session, the main session's logged Write
	// and Bash changes, and the green-worker's own logged work.
	post := func(agent, agentType, cwd, tool, id string, input map[string]any) {
		p := with(s.mainTool, "hook_event_name", "PostToolUse", "cwd", cwd, "transcript_path", s.transcript, "tool_name", tool,
			"tool_use_id", id, "tool_input", input, "tool_response", map[string]any{"stdout": "", "stderr": ""})
		if agent != "" {
			p = with(p, "agent_id", agent, "agent_type", agentType)
		}
		hookCall(t, cwd, p)
	}
	escaped := filepath.Join(dir, "strutil", "escaped.go")
	os.WriteFile(escaped, []byte("package strutil\n"), 0o644)
	os.Symlink(filepath.Join(dir, "strutil", "reverse.go"), filepath.Join(redWT, "strutil", "out_test.go"))
	os.WriteFile(filepath.Join(dir, "docs", "agents", "sprint1", "notes.md"), []byte("a note\n"), 0o644)
	truncate := filepath.Join(greenWT, "strutil", "truncate.go")
	os.WriteFile(truncate, []byte("package strutil\n"), 0o644)
	post("agreen", "git-ideate:green-worker", greenWT, "Write", "toolu_gw", map[string]any{"file_path": "strutil/truncate.go", "content": "package strutil\n"})
	planted := filepath.Join(greenWT, "strutil", "planted.go")
	os.WriteFile(planted, []byte("package strutil\n"), 0o644)
	// The green-worker's confined Bash call: the confining entry logs
	// what its command changed (made.go), not what it only touched
	// (planted.go, which stays unaccounted for), and the hook then notes
	// no state of the worktree for the call.
	made := filepath.Join(greenWT, "strutil", "made.go")
	if confine.Available() {
		t.Setenv("IDEATE_CONFINE", "1")
		in, _ := json.Marshal(with(s.subTool, "cwd", greenWT, "transcript_path", s.transcript, "agent_id", "agreen",
			"agent_type", "git-ideate:green-worker", "tool_use_id", "toolu_gconf", "tool_input", map[string]any{"command": "ls"}))
		r := runBin(t, greenWT, string(in), "hook")
		t.Setenv("IDEATE_CONFINE", "0")
		if !strings.Contains(r.out, "updatedInput") {
			t.Fatalf("the green-worker's Bash is not confined: %+v", r)
		}
		if calls, _ := os.ReadFile(filepath.Join(dir, ".git", "ideate", "dispatch", "calls", "pending.jsonl")); strings.Contains(string(calls), "toolu_gconf") {
			t.Errorf("the hook noted the confined call's worktree: %s", calls)
		}
		if r := runBin(t, greenWT, "", "confine", "--task", "S1-01/T2", "--role", "green-worker", "--agent", "agreen", "--",
			"printf 'package strutil\\n' > strutil/made.go; touch strutil/planted.go"); r.code != 0 {
			t.Fatalf("the confined call: %+v", r)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, ".git", "ideate", "dispatch", "unlogged", "*")); len(m) > 0 {
			t.Errorf("the confined call's marker stayed: %v", m)
		}
		// A call made from a directory inside the worktree starts there.
		if r := runBin(t, filepath.Join(greenWT, "strutil"), "", "confine", "--task", "S1-01/T2", "--role", "green-worker", "--agent", "agreen", "--", "pwd"); r.code != 0 ||
			filepath.Base(strings.TrimSpace(r.out)) != "strutil" {
			t.Errorf("the confined pwd from strutil/: %+v", r)
		}
	}
	notes := filepath.Join(dir, "NOTES.txt")
	os.WriteFile(notes, []byte("supervisor notes\n"), 0o644)
	post("", "", dir, "Write", "toolu_mw", map[string]any{"file_path": notes, "content": "supervisor notes\n"})
	twice := filepath.Join(dir, "TWICE.txt")
	os.WriteFile(twice, []byte("the main session's\n"), 0o644)
	post("", "", dir, "Write", "toolu_mw2", map[string]any{"file_path": twice, "content": "the main session's\n"})
	os.WriteFile(twice, []byte("someone else's\n"), 0o644)
	// Before the main session's Bash call by more than the file system's
	// clock tick (4 ms at most on Linux), which cannot tell apart what
	// falls within one.
	time.Sleep(20 * time.Millisecond)
	wantAllow(t, "the main session's Bash", hookCall(t, dir, with(s.mainTool, "cwd", dir, "tool_use_id", "toolu_mb", "tool_input", map[string]any{"command": "make gen"})))
	generated := filepath.Join(dir, "gen", "out.txt")
	os.MkdirAll(filepath.Dir(generated), 0o755)
	os.WriteFile(generated, []byte("generated\n"), 0o644)
	gt.Git(t, dir, "rm", "-q", "OLD.txt")
	os.Remove(scratch)
	post("", "", dir, "Bash", "toolu_mb", map[string]any{"command": "make gen"})
	d := stop("ared", "git-ideate:red-worker", redWT)
	if d.kind != "block" || !strings.Contains(d.reason, "gate escape: FAIL: escaped_write") {
		t.Fatalf("escaped: %+v", d)
	}
	for _, p := range []string{escaped, "strutil/out_test.go", planted, twice} {
		if !strings.Contains(d.reason, p) {
			t.Errorf("the escape does not name %s: %s", p, d.reason)
		}
	}
	if strings.Contains(d.reason, "still running or was killed") {
		t.Errorf("the escape speaks of an unlogged call: %s", d.reason)
	}
	// A confining entry killed before it logged leaves its marker: the
	// changes stay blamed, and the reason says whose call may have made them.
	os.MkdirAll(filepath.Join(dir, ".git", "ideate", "dispatch", "unlogged"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "ideate", "dispatch", "unlogged", "agreen.99999"), []byte(greenWT), 0o644)
	d = stop("ared", "git-ideate:red-worker", redWT)
	if !strings.Contains(d.reason, planted) || !strings.Contains(d.reason, "agent agreen there is still running or was killed") {
		t.Errorf("with a killed call's marker: %s", d.reason)
	}
	for _, p := range []string{"notes.md", truncate, notes, generated, made, old, scratch} {
		if strings.Contains(d.reason, p) {
			t.Errorf("the escape blames the worker for %s: %s", p, d.reason)
		}
	}
	r := cli(t, dir, "", "exec", "log", "--phase", "escape", "--json")
	if !strings.Contains(r.out, `"class": "escaped_write"`) || !strings.Contains(r.out, `"task": "S1-01/T1"`) {
		t.Fatalf("the escape is not logged:\n%s", r.out)
	}
	// Undone, the stop goes on to the role's gate.
	os.Remove(escaped)
	os.Remove(filepath.Join(redWT, "strutil", "out_test.go"))
	os.Remove(planted)
	os.Remove(made)
	os.Remove(twice)
	if d := stop("ared", "red-worker", redWT); d.kind != "block" || strings.Contains(d.reason, "escape") {
		t.Fatalf("after undoing: %+v", d)
	}

	// GREEN: a production-named link onto a test, and a hard link.
	os.Symlink("reverse_test.go", filepath.Join(greenWT, "strutil", "alias.go"))
	if err := os.Link(filepath.Join(greenWT, "strutil", "reverse_test.go"), filepath.Join(greenWT, "strutil", "hard.go")); err != nil {
		t.Fatal(err)
	}
	d = stop("agreen", "git-ideate:green-worker", greenWT)
	if d.kind != "block" || !strings.Contains(d.reason, "link_to_test") || !strings.Contains(d.reason, "strutil/alias.go") ||
		!strings.Contains(d.reason, "hard links") || !strings.Contains(d.reason, "strutil/hard.go") {
		t.Fatalf("green links: %+v", d)
	}
	gt.Git(t, dir, "fsck", "--strict")
}
