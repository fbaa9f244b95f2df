package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/worktree"
)

const standardsMD = "---\ntype: standards\nsprint: 1\n---\n\n# Standards\n\n## Detected stack\n\n- Go — go.mod.\n\n" +
	"## Test runners\n\n### go\n\n- Extensions: `.go`\n- Test files: `**/*_test.go`\n- Run: `go test -json -count=1 -run '{go_regex}' {packages}`\n- Format: `go-test-json`\n"

// fakeGate answers from the command of a tool or the task of a stop:
// "unfinished" FAIL, "unsure" UNVERIFIABLE, "broken" an error, anything
// else PASS. It keeps every input it was given.
type fakeGate struct {
	mu   sync.Mutex
	seen []gates.Input
}

func (g *fakeGate) Run(_ context.Context, in gates.Input) (gates.Verdict, error) {
	g.mu.Lock()
	g.seen = append(g.seen, in)
	g.mu.Unlock()
	if in.Guard != nil && in.Guard.Dispatch != nil {
		return gates.Guard.Run(context.Background(), in) // a dispatch: the real guard's facts
	}
	text := in.Command + " " + in.Task + " " + strings.Join(in.Paths, " ")
	switch {
	case strings.Contains(text, "unfinished"):
		return gates.Verdict{Result: gates.FAIL, Reasons: []gates.Reason{{Class: "NOT_DONE", Detail: "the item is not done", Paths: []string{"a.go"}}}}, nil
	case strings.Contains(text, "unsure"):
		return gates.Verdict{Result: gates.UNVERIFIABLE, Reasons: []gates.Reason{{Class: "UNKNOWN_FORMAT", Detail: "the runner output could not be read"}}}, nil
	case strings.Contains(text, "broken"):
		return gates.Verdict{}, errors.New("gate broke")
	case strings.Contains(text, "hollow"):
		return gates.Verdict{Result: gates.FAIL, Reasons: []gates.Reason{{Class: gates.ClassUnpinned, Detail: "Len returns its zero value and every declared test passes", Paths: []string{"q.go"}},
			{Class: "pin_cost", Severity: gates.SevInfo, Detail: "1 mutant"}}}, nil
	case strings.Contains(text, "mixed"):
		return gates.Verdict{Result: gates.FAIL, Reasons: []gates.Reason{{Class: gates.ClassUnpinned, Detail: "Len is unpinned"}, {Class: "FAIL_ASSERT", Detail: "a declared test fails"}}}, nil
	}
	return gates.Verdict{Result: gates.PASS}, nil
}

func (g *fakeGate) last(t *testing.T) gates.Input {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.seen) == 0 {
		t.Fatal("the gate was never asked")
	}
	return g.seen[len(g.seen)-1]
}

// execRepo is a repository with a plan's standards and open tasks
// (task → role), each in its worktree.
func execRepo(t *testing.T, tasks map[string]string) string {
	t.Helper()
	dir := gt.NewRepo(t)
	commitFiles(t, dir, "plan", map[string]string{"docs/agents/sprint1/standards.md": standardsMD, "go.mod": "module m\n", "x/x.go": "package x\n"})
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	m := worktree.Open(g)
	for task, role := range tasks {
		if _, err := m.Start(context.Background(), worktree.StartInput{Task: task, Role: role, Scope: []string{"x/**"}, Tests: []string{"x/x_test.go::TestX"}}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func worktreeOf(dir, task string) string {
	return filepath.Join(dir, ".ideate", "worktrees", strings.ReplaceAll(task, "/", "+"))
}

// hook runs one payload through a dispatcher with reg.
func hook(t *testing.T, reg *gates.Registry, gateOnly bool, cwd string, p map[string]any) (string, []string) {
	t.Helper()
	b, _ := json.Marshal(p)
	var out bytes.Buffer
	var notes []string
	d := &hooks.Dispatcher{Dir: cwd, Open: opener(t), Gates: reg, GateOnly: gateOnly, Getenv: func(string) string { return "" },
		Warn: func(m string) { notes = append(notes, m) }}
	d.Run(context.Background(), bytes.NewReader(b), &out, "")
	return out.String(), notes
}

func decisionOf(t *testing.T, out string) (kind, reason string) {
	t.Helper()
	if out == "" {
		return "", ""
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
		t.Fatalf("output %q: %v", out, err)
	}
	if m.HSO.PermissionDecision != "" {
		return m.HSO.PermissionDecision, m.HSO.PermissionDecisionReason
	}
	return m.Decision, m.Reason
}

// dispatchAndBind approves a dispatch of role for task and binds agent to
// it through the host's meta file.
func dispatchAndBind(t *testing.T, reg *gates.Registry, dir, transcript, task, role, toolUse, agent string) {
	t.Helper()
	out, notes := hook(t, reg, false, dir, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": transcript, "cwd": dir,
		"tool_name": "Agent", "tool_use_id": toolUse, "tool_input": map[string]any{"description": "d", "prompt": "Do it.\nideate-task: " + task + "\n", "subagent_type": "git-ideate:" + role}})
	if out != "" {
		t.Fatalf("dispatch of %s: %s %q", task, out, notes)
	}
	meta := filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "subagents", "agent-"+agent+".meta.json")
	os.MkdirAll(filepath.Dir(meta), 0o755)
	b, _ := json.Marshal(map[string]any{"agentType": "git-ideate:" + role, "toolUseId": toolUse, "description": "d"})
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Which gates a hook asks: the guard before tools; the role's gate on an
// execution agent's stop, in the gate entries only; nothing on Stop.
func TestGate_AsksTheGateOfThePointAndRole(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "red-worker", "S1-01/unfinished": "red-worker", "S1-01/unsure": "red-worker", "S1-01/broken": "red-worker",
		"S1-01/hollow": "green-worker", "S1-01/mixed": "green-worker"})
	guard, red, green := &fakeGate{}, &fakeGate{}, &fakeGate{}
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, guard)
	reg.Register("red", red)
	reg.Register("green", green)
	tr := filepath.Join(t.TempDir(), "session.jsonl")

	// PreToolUse in the main session: the guard only, with its facts.
	for _, tc := range []struct{ command, want string }{
		{"unfinished", "git ideate gate guard: FAIL: NOT_DONE: the item is not done (a.go)"},
		{"unsure", "git ideate gate guard: UNVERIFIABLE: UNKNOWN_FORMAT: the runner output could not be read"},
		{"broken", "git ideate gate guard: UNVERIFIABLE: error: the gate could not run: gate broke"},
		{"go test ./...", ""},
	} {
		out, _ := hook(t, reg, false, dir, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash", "tool_input": map[string]any{"command": tc.command}, "cwd": dir})
		kind, reason := decisionOf(t, out)
		if tc.want == "" && out != "" || tc.want != "" && (kind != "deny" || reason != tc.want) {
			t.Fatalf("PreToolUse %q: %s", tc.command, out)
		}
	}
	in := guard.last(t)
	if in.Point != gates.BeforeTool || in.Tool != "Bash" || in.Guard == nil || !in.Guard.Sprint || in.Guard.Subagent || len(red.seen)+len(green.seen) != 0 {
		t.Fatalf("guard input %+v facts %+v", in, in.Guard)
	}
	// Tools the guard does not look at do not ask it.
	n := len(guard.seen)
	hook(t, reg, false, dir, map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": "x"}, "cwd": dir})
	if len(guard.seen) != n {
		t.Fatal("a Read asked the guard")
	}

	// A bound red-worker: the guard learns its task and worktree.
	dispatchAndBind(t, reg, dir, tr, "S1-01/T1", "red-worker", "toolu_1", "a1")
	wt := worktreeOf(dir, "S1-01/T1")
	out, notes := hook(t, reg, false, wt, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": tr, "cwd": wt,
		"agent_id": "a1", "agent_type": "git-ideate:red-worker", "tool_name": "Write", "tool_input": map[string]any{"file_path": "x/x_test.go", "content": "package x"}})
	in = guard.last(t)
	if out != "" || in.Task != "S1-01/T1" || in.Attempt != 1 || in.Role != "red-worker" || !in.Guard.Bound || in.Guard.Worktree != wt ||
		strings.Join(in.Guard.TestGlobs, " ") != "**/*_test.go" || !in.Guard.HasContent || in.Guard.Content != "package x" {
		t.Fatalf("bound guard: %s %q %+v %+v", out, notes, in, in.Guard)
	}

	stop := func(agent, role string, active bool) map[string]any {
		return map[string]any{"hook_event_name": "SubagentStop", "session_id": "s1", "transcript_path": tr, "cwd": wt, "agent_id": agent,
			"agent_type": "git-ideate:" + role, "stop_hook_active": active, "last_assistant_message": "done"}
	}
	// The catch-all SubagentStop entry asks no gate, and leaves a gated
	// role's outcome to the gate entry.
	if out, _ := hook(t, reg, false, wt, stop("a1", "red-worker", false)); out != "" || len(red.seen) != 0 || len(records(t, dir)) != 0 {
		t.Fatalf("catch-all: %s, red asked %d times, %d records", out, len(red.seen), len(records(t, dir)))
	}
	// The gate entry asks the red gate for the bound task and, the stop
	// let through, records the outcome.
	if out, notes := hook(t, reg, true, wt, stop("a1", "red-worker", false)); out != "" {
		t.Fatalf("red PASS: %s %q", out, notes)
	}
	in = red.last(t)
	if in.Point != gates.AgentStop || in.Task != "S1-01/T1" || in.Role != "red-worker" || in.Agent != "a1" || in.Dir != wt || len(records(t, dir)) != 1 {
		t.Fatalf("red input %+v", in)
	}
	// Another agent's catch-all is recorded as before.
	if hook(t, reg, false, wt, stop("w1", "worker", false)); len(records(t, dir)) != 2 {
		t.Fatalf("a plain subagent's stop: %d records", len(records(t, dir)))
	}
	// FAIL and UNVERIFIABLE block with the verdict; blocks are counted
	// per agent while stop_hook_active holds, and the cap is named.
	for i, task := range []string{"S1-01/unfinished", "S1-01/unsure", "S1-01/broken"} {
		agent := "b" + string(rune('1'+i))
		dispatchAndBind(t, reg, dir, tr, task, "red-worker", "toolu_b"+string(rune('1'+i)), agent)
		var want string
		switch i {
		case 0:
			want = "git ideate gate red: FAIL: NOT_DONE: the item is not done (a.go) (stop 1 of 8 refused; task S1-01/unfinished)"
		case 1:
			want = "git ideate gate red: UNVERIFIABLE: UNKNOWN_FORMAT: the runner output could not be read (stop 1 of 8 refused; task S1-01/unsure)"
		case 2:
			want = "git ideate gate red: UNVERIFIABLE: error: the gate could not run: gate broke (stop 1 of 8 refused; task S1-01/broken)"
		}
		out, _ := hook(t, reg, true, wt, stop(agent, "red-worker", false))
		if kind, reason := decisionOf(t, out); kind != "block" || reason != want {
			t.Fatalf("%s: %s", task, out)
		}
	}
	// A refused stop is no outcome: no record for any of them.
	if n := len(records(t, dir)); n != 2 {
		t.Fatalf("refused stops left %d records, want 2", n)
	}
	// The host honours 8 blocks and ends the agent at its 9th stop.
	for n := 2; n <= 8; n++ {
		out, _ := hook(t, reg, true, wt, stop("b1", "red-worker", true))
		_, reason := decisionOf(t, out)
		if !strings.Contains(reason, "(stop "+string(rune('0'+n))+" of 8 refused") || n == 8 != strings.Contains(reason, "at the agent's next stop the host ends it") ||
			strings.Contains(reason, "ends the agent now") {
			t.Fatalf("block %d: %s", n, reason)
		}
	}
	if n := len(records(t, dir)); n != 2 {
		t.Fatalf("refused stops left %d records, want 2", n)
	}
	out, _ = hook(t, reg, true, wt, stop("b1", "red-worker", true))
	if _, reason := decisionOf(t, out); !strings.Contains(reason, "(stop 9, past the host's cap of 8 blocks: the host ends the agent now") {
		t.Fatalf("stop 9: %s", reason)
	}
	if recs := records(t, dir); len(recs) != 3 || !strings.Contains(recs[len(recs)-1].Claim+recs[0].Claim, "ended by the host after 8 refused stops") {
		t.Fatalf("the agent the host ended: %d records", len(recs))
	}
	// A new stop (not after a block) counts from 1 again.
	if out, _ := hook(t, reg, true, wt, stop("b1", "red-worker", false)); !strings.Contains(out, "stop 1 of 8") {
		t.Fatalf("restart of the count: %s", out)
	}
	// An unbound execution agent is blocked once, with what is missing,
	// and let go the second time (its verdict is missing).
	out, _ = hook(t, reg, true, wt, stop("zz", "green-worker", false))
	if kind, reason := decisionOf(t, out); kind != "block" || !strings.Contains(reason, "bound to no task") || !strings.Contains(reason, "no green verdict") {
		t.Fatalf("unbound stop: %s", out)
	}
	if out, notes := hook(t, reg, true, wt, stop("zz", "green-worker", true)); out != "" || len(notes) != 1 || len(green.seen) != 0 {
		t.Fatalf("unbound second stop: %s %q", out, notes)
	}
	// A GREEN that fails only on unpinned symbols is let stop (its worker
	// may not mend tests; the task goes back to RED), its outcome says
	// so; one that fails on anything else as well is refused.
	before := len(records(t, dir))
	dispatchAndBind(t, reg, dir, tr, "S1-01/hollow", "green-worker", "toolu_h1", "h1")
	if out, _ := hook(t, reg, true, wt, stop("h1", "green-worker", false)); out != "" {
		t.Fatalf("unpinned-only GREEN stop: %s", out)
	}
	if recs := records(t, dir); len(recs) != before+1 || !strings.Contains(recs[len(recs)-1].Claim+recs[0].Claim, "back to RED") {
		t.Fatalf("unpinned-only GREEN outcome: %d records", len(recs))
	}
	dispatchAndBind(t, reg, dir, tr, "S1-01/mixed", "green-worker", "toolu_m1", "m1")
	if out, _ := hook(t, reg, true, wt, stop("m1", "green-worker", false)); !strings.Contains(out, "FAIL_ASSERT") {
		t.Fatalf("GREEN failing on a test as well: %s", out)
	}

	// Other agents' stops and the main session's Stop ask nothing.
	n = len(red.seen) + len(guard.seen)
	hook(t, reg, true, wt, stop("c1", "worker", false))
	hook(t, reg, false, dir, map[string]any{"hook_event_name": "Stop", "session_id": "s1", "cwd": dir})
	if len(red.seen)+len(guard.seen) != n {
		t.Fatal("a gate was asked on a non-execution stop")
	}
	// Without a registry nothing is gated.
	if out, _ := hook(t, nil, true, wt, stop("b1", "red-worker", false)); out != "" {
		t.Fatalf("no registry: %s", out)
	}
	// A stop gate that is not registered cannot pass.
	dispatchAndBind(t, reg, dir, tr, "S1-01/T1", "red-worker", "toolu_9", "a9")
	only := gates.NewRegistry()
	only.Register(gates.GuardName, guard)
	if out, _ := hook(t, only, true, wt, stop("a9", "red-worker", false)); !strings.Contains(out, `no gate named \"red\"`) {
		t.Fatalf("unregistered red: %s", out)
	}
	if tip(t, dir, record.RefName) == "" {
		t.Fatal("no capture at all")
	}
}

// Parallel first calls of two sub-agents, bound through their transcripts
// only, each get their own dispatch; two agents naming the same single
// dispatch: one gets it.
func TestGate_BindingFromTranscripts(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "red-worker", "S1-01/T2": "red-worker"})
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, gates.Guard)
	tr := filepath.Join(t.TempDir(), "session.jsonl")
	for i, task := range []string{"S1-01/T1", "S1-01/T2"} {
		out, _ := hook(t, reg, false, dir, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": tr, "cwd": dir,
			"tool_name": "Agent", "tool_use_id": "toolu_" + string(rune('a'+i)), "tool_input": map[string]any{"prompt": "ideate-task: " + task, "subagent_type": "git-ideate:red-worker"}})
		if out != "" {
			t.Fatal(out)
		}
	}
	writeAgentTranscript := func(agent, task string) {
		p := filepath.Join(strings.TrimSuffix(tr, ".jsonl"), "subagents", "agent-"+agent+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		line, _ := json.Marshal(map[string]any{"agentId": agent, "message": map[string]any{"role": "user", "content": "Write the test.\nideate-task: " + task + "\n"}})
		os.WriteFile(p, append(line, '\n'), 0o644)
	}
	writeAgentTranscript("x1", "S1-01/T2")
	writeAgentTranscript("x2", "S1-01/T1")
	writeAgentTranscript("x3", "S1-01/T1")
	call := func(agent, task string) string {
		wt := worktreeOf(dir, task)
		out, _ := hook(t, reg, false, wt, map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": tr, "cwd": wt,
			"agent_id": agent, "agent_type": "git-ideate:red-worker", "tool_name": "Write", "tool_input": map[string]any{"file_path": "x/x_test.go", "content": "package x"}})
		return out
	}
	var wg sync.WaitGroup
	outs := make([]string, 3)
	for i, a := range [][2]string{{"x1", "S1-01/T2"}, {"x2", "S1-01/T1"}, {"x3", "S1-01/T1"}} {
		wg.Add(1)
		go func() { defer wg.Done(); outs[i] = call(a[0], a[1]) }()
	}
	wg.Wait()
	if outs[0] != "" {
		t.Fatalf("x1: %s", outs[0])
	}
	if (outs[1] == "") == (outs[2] == "") {
		t.Fatalf("x2 and x3 both %q / %q: one dispatch, one agent", outs[1], outs[2])
	}
	loser := outs[1] + outs[2]
	if !strings.Contains(loser, "bound to another agent") {
		t.Fatalf("loser: %s", loser)
	}
}

// A green-worker may not touch what the verified RED commit changed
// (fixtures that match no test glob included), but may replace its shims.
func TestGate_GreenFrozenByTheRedCommit(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T3": "green-worker"})
	wt := worktreeOf(dir, "S1-01/T3")
	red := commitFiles(t, wt, "red", map[string]string{"x/testdata/in.txt": "abc\n", "x/x_test.go": "package x\n", "x/shim.go": "package x // agentic:shim\n"})
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, gates.Guard)
	tr := filepath.Join(t.TempDir(), "session.jsonl")
	open := opener(t)
	var asked []string
	run := func(p map[string]any, cwd string) string {
		b, _ := json.Marshal(p)
		var out bytes.Buffer
		d := &hooks.Dispatcher{Dir: cwd, Gates: reg, Getenv: func(string) string { return "" }, Open: func(dir, session string) (*hooks.Stores, error) {
			st, err := open(dir, session)
			if err == nil {
				st.Git, err = gitstore.Open(dir)
				t.Cleanup(func() { st.Git.Close() })
				st.RedCommit = func(_ context.Context, task string) (string, bool, error) {
					asked = append(asked, task)
					return red, true, nil
				}
			}
			return st, err
		}}
		d.Run(context.Background(), bytes.NewReader(b), &out, "")
		return out.String()
	}
	if out := run(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": tr, "cwd": dir, "tool_name": "Agent", "tool_use_id": "toolu_g",
		"tool_input": map[string]any{"prompt": "ideate-task: S1-01/T3", "subagent_type": "git-ideate:green-worker"}}, dir); out != "" || strings.Join(asked, " ") != "S1-01/T3" {
		t.Fatalf("dispatch: %s, asked %v", out, asked)
	}
	meta := filepath.Join(strings.TrimSuffix(tr, ".jsonl"), "subagents", "agent-g1.meta.json")
	os.MkdirAll(filepath.Dir(meta), 0o755)
	os.WriteFile(meta, []byte(`{"agentType":"git-ideate:green-worker","toolUseId":"toolu_g"}`), 0o644)
	edit := func(path string) string {
		return run(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": tr, "cwd": wt, "agent_id": "g1",
			"agent_type": "git-ideate:green-worker", "tool_name": "Edit", "tool_input": map[string]any{"file_path": path, "old_string": "a", "new_string": "b"}}, wt)
	}
	for path, denied := range map[string]bool{"x/testdata/in.txt": true, "x/x_test.go": true, "x/shim.go": false, "x/x.go": false} {
		out := edit(path)
		if kind, reason := decisionOf(t, out); denied != (kind == "deny") || denied && !strings.Contains(reason, "test_changed") {
			t.Errorf("%s: %s", path, out)
		}
	}
}

// The cost gate through the hook: a bound agent's Bash call over the whole
// module is denied naming its package; its own package passes; the main
// session and a Write are not asked; unreadable rules deny.
func TestGate_CostBeforeBash(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "green-worker"})
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, gates.Guard)
	reg.Register(gates.CostName, gates.Cost)
	tr := filepath.Join(t.TempDir(), "session.jsonl")
	dispatchAndBind(t, reg, dir, tr, "S1-01/T1", "green-worker", "toolu_c1", "c1")
	wt := worktreeOf(dir, "S1-01/T1")
	bash := func(cwd, agent, command string) (string, string) {
		p := map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": tr, "cwd": cwd,
			"tool_name": "Bash", "tool_input": map[string]any{"command": command}}
		if agent != "" {
			p["agent_id"], p["agent_type"] = agent, "git-ideate:green-worker"
		}
		out, _ := hook(t, reg, false, cwd, p)
		return decisionOf(t, out)
	}
	if kind, reason := bash(wt, "c1", "cd . && go test ./... -run TestX"); kind != "deny" || !strings.Contains(reason, "gate cost: FAIL: too_wide") || !strings.Contains(reason, "go test -run TestX ./x/") {
		t.Fatalf("whole module: %s %q", kind, reason)
	}
	if kind, reason := bash(wt, "c1", "go test -run TestX ./x/"); kind != "" {
		t.Fatalf("own package: %s %q", kind, reason)
	}
	if kind, reason := bash(dir, "", "go test ./..."); kind != "" {
		t.Fatalf("main session: %s %q", kind, reason)
	}
	// The policy cached at the dispatch holds the rules; a standards file
	// whose cost rules do not read is caught at the next dispatch.
	commitFiles(t, dir, "bad rules", map[string]string{"docs/agents/sprint1/standards.md": standardsMD + "\n## Cost rules\n\n- sometimes: `make`\n"})
	dispatchAndBind(t, reg, dir, tr, "S1-01/T1", "green-worker", "toolu_c2", "c2")
	if kind, reason := bash(wt, "c2", "ls"); kind != "deny" || !strings.Contains(reason, "cost: UNVERIFIABLE: rules_unreadable") || !strings.Contains(reason, "sometimes") {
		t.Fatalf("unreadable rules: %s %q", kind, reason)
	}
}

// The playbook's post-planner is the scaffolder: bound, guarded and
// judged as one; the plugin's agents count with or without the plugin's
// prefix; other agent types are no execution role.
func TestExecutionRole_PostPlanner(t *testing.T) {
	for in, want := range map[string]string{"git-ideate:post-planner": gates.RoleScaffold, "git-ideate:scaffolder": gates.RoleScaffold,
		"git-ideate:green-worker": gates.RoleGreen, "git-ideate:archivist": "", "post-planner": gates.RoleScaffold, "red-worker": gates.RoleRed,
		"other:post-planner": "", "other:red-worker": "", "general-purpose": "", "Explore": ""} {
		if got := hooks.ExecutionRole(in); got != want {
			t.Errorf("ExecutionRole(%q) = %q, want %q", in, got, want)
		}
	}
}

// The main session's calls outside a sprint are not judged, and the
// repository's stores are not opened for them (which runs git): the
// executing marker alone says so. During a sprint they are judged.
func TestGate_MainSessionOutsideASprintOpensNothing(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "red-worker"})
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, gates.Guard)
	open := opener(t)
	opened := 0
	d := &hooks.Dispatcher{Dir: dir, Gates: reg, Getenv: func(string) string { return "" },
		StateDir: func(string) (string, error) { return filepath.Join(dir, ".git", "ideate"), nil },
		Open:     func(dir, session string) (*hooks.Stores, error) { opened++; return open(dir, session) }}
	write := map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": dir, "tool_name": "Write",
		"tool_input": map[string]any{"file_path": filepath.Join(dir, "strutil", "reverse.go"), "content": "package strutil\n"}}
	call := func() string {
		b, _ := json.Marshal(write)
		var out bytes.Buffer
		d.Run(context.Background(), bytes.NewReader(b), &out, "")
		return out.String()
	}
	if out := call(); decisionKind(t, out) != "deny" || opened != 1 {
		t.Fatalf("during a sprint: %q, stores opened %d time(s)", out, opened)
	}
	os.RemoveAll(filepath.Join(dir, ".git", "ideate", "executing"))
	if out := call(); out != "" || opened != 1 {
		t.Fatalf("outside a sprint: %q, stores opened %d time(s)", out, opened)
	}
}

func decisionKind(t *testing.T, out string) string {
	t.Helper()
	if out == "" {
		return ""
	}
	kind, _ := decisionOf(t, out)
	return kind
}

// Monitor runs its command as Bash does: during a sprint the main
// session's Monitor call is judged as its Bash call would be.
func TestGate_MainSessionMonitorIsJudgedAsBash(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "red-worker"})
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, gates.Guard)
	d := &hooks.Dispatcher{Dir: dir, Gates: reg, Getenv: func(string) string { return "" },
		StateDir: func(string) (string, error) { return filepath.Join(dir, ".git", "ideate"), nil },
		Open:     opener(t)}
	b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": dir, "tool_name": "Monitor",
		"tool_input": map[string]any{"command": "echo x > strutil/reverse.go", "description": "d", "timeout_ms": 1000}})
	var out bytes.Buffer
	d.Run(context.Background(), bytes.NewReader(b), &out, "")
	if decisionKind(t, out.String()) != "deny" || !strings.Contains(out.String(), "production_source") {
		t.Fatalf("during a sprint: %q", out.String())
	}
}
