package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/retro"
	"github.com/ideate/git-ideate/internal/transcripts"
)

const (
	tokenA = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"
	tokenB = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
)

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// A replayed session — the host's recorded payloads, a transcript file,
// and an execution agent bound to a task — leaves the global log (every
// prompt and tool call), the task's events, the session's and agents'
// transcript copies, all with their secrets redacted; the task's slice is
// staged read-only in its worktree while its agent runs, never reaches
// git, and is gone after the agent stops.
func TestTranscripts_ReplayedSession(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "red-worker"})
	reg := gates.NewRegistry()
	reg.Register(gates.GuardName, gates.Guard)
	tr := filepath.Join(t.TempDir(), fixtureSession+".jsonl")
	session := []string{
		`{"type":"user","message":{"role":"user","content":"Run the self-test."}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"GITHUB_TOKEN=` + tokenA + `"}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}}`,
	}
	os.WriteFile(tr, []byte(strings.Join(session, "\n")+"\n"), 0o644)
	agentTr := filepath.Join(t.TempDir(), "agent.jsonl")

	want := 0
	for _, f := range loadFixtures(t) {
		set := map[string]any{"cwd": dir}
		if _, ok := f.Payload["transcript_path"]; ok {
			set["transcript_path"] = tr
		}
		if _, ok := f.Payload["agent_transcript_path"]; ok {
			set["agent_transcript_path"] = agentTr
		}
		switch f.event() {
		case "UserPromptSubmit":
			set["prompt"] = "Deploy with " + tokenB + " please."
			want++
		case "PostToolUse":
			set["tool_response"] = map[string]any{"stdout": "export TOKEN=" + tokenA, "stderr": ""}
			want++
		}
		if res := runHook(t, dir, payload(t, f.Payload, set), ""); len(res.notes) != 0 {
			t.Fatalf("line %d (%s): notes %q", f.Line, f.Hook, res.notes)
		}
	}
	root := filepath.Join(dir, ".git", "ideate", transcripts.Dir)
	global := fileLines(t, filepath.Join(root, transcripts.GlobalFile))
	if len(global) != want {
		t.Fatalf("global log: %d lines, want %d (every prompt and tool call)", len(global), want)
	}
	var first struct {
		Event   string         `json:"event"`
		Session string         `json:"session"`
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal([]byte(global[0]), &first); err != nil || first.Event != "UserPromptSubmit" || first.Session != fixtureSession ||
		first.Payload["prompt"] != "Deploy with [REDACTED:anthropic-api-key] please." || first.Payload["permission_mode"] == nil {
		t.Fatalf("first event %s (%v)", global[0], err)
	}
	copyLines := fileLines(t, filepath.Join(root, "sessions", fixtureSession+".jsonl"))
	if len(copyLines) != 3 || copyLines[0] != session[0] || copyLines[2] != session[2] || !strings.Contains(copyLines[1], "GITHUB_TOKEN=[REDACTED:github-token]") {
		t.Fatalf("session copy %q", copyLines)
	}

	// An execution agent's first attempt on the task, then a second.
	wt := worktreeOf(dir, "S1-01/T1")
	agentRun := func(toolUse, agent string, check func()) {
		dispatchAndBind(t, reg, dir, tr, "S1-01/T1", "red-worker", toolUse, agent)
		base := map[string]any{"session_id": fixtureSession, "transcript_path": tr, "cwd": wt, "agent_id": agent, "agent_type": "git-ideate:red-worker"}
		with := func(kv map[string]any) map[string]any {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			for k, v := range kv {
				m[k] = v
			}
			return m
		}
		if _, notes := hook(t, reg, false, wt, with(map[string]any{"hook_event_name": "SubagentStart"})); len(notes) != 0 {
			t.Fatalf("SubagentStart: %q", notes)
		}
		if !transcripts.Staged(wt) {
			t.Fatalf("%s: nothing staged at SubagentStart", agent)
		}
		if _, notes := hook(t, reg, false, wt, with(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "r-" + agent,
			"tool_input": map[string]any{"file_path": wt + "/x/x.go"}, "tool_response": map[string]any{"content": "key " + tokenA}})); len(notes) != 0 {
			t.Fatalf("PostToolUse: %q", notes)
		}
		check()
		os.WriteFile(agentTr, []byte(`{"type":"user","message":{"content":"ideate-task: S1-01/T1 `+tokenB+`"}}`+"\n"), 0o644)
		if _, notes := hook(t, reg, false, wt, with(map[string]any{"hook_event_name": "SubagentStop", "agent_transcript_path": agentTr,
			"last_assistant_message": "done", "stop_hook_active": false})); len(notes) != 0 {
			t.Fatalf("SubagentStop: %q", notes)
		}
		if transcripts.Staged(wt) {
			t.Fatalf("%s: the stage outlived the agent's stop", agent)
		}
	}
	agentRun("toolu_1", "agent1", func() {})
	agentRun("toolu_2", "agent2", func() {
		stage := filepath.Join(wt, transcripts.StageDir)
		ents, _ := os.ReadDir(stage)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
			if fi, _ := e.Info(); fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("staged %s is writable (%v)", e.Name(), fi.Mode())
			}
		}
		// The first attempt's transcript and the task's events; never
		// the global log.
		if strings.Join(names, " ") != ".gitignore agent-agent1.jsonl events.jsonl" {
			t.Fatalf("stage holds %v", names)
		}
		if st := gt.Git(t, wt, "status", "--porcelain", "--ignored=no"); st != "" {
			t.Fatalf("git status in the worktree sees the stage:\n%s", st)
		}
		gt.Git(t, wt, "add", "-A")
		gt.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "work")
		if files := gt.Git(t, wt, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(files, ".transcripts") || strings.Contains(files, transcripts.GlobalFile) {
			t.Fatalf("a commit took the stage:\n%s", files)
		}
	})
	events := fileLines(t, filepath.Join(root, "tasks", "S1-01", "T1", transcripts.EventsFile))
	if len(events) != 2 || !strings.Contains(events[0], `"agent":"agent1"`) || !strings.Contains(events[0], `"task":"S1-01/T1"`) {
		t.Fatalf("task events %q", events)
	}
	if g := fileLines(t, filepath.Join(root, transcripts.GlobalFile)); len(g) != want+2 || g[want] != events[0] {
		t.Fatalf("the task's events are not in the global log too (%d lines)", len(g))
	}
	if a := fileLines(t, filepath.Join(root, "tasks", "S1-01", "T1", "agent-agent2.jsonl")); len(a) != 1 || !strings.Contains(a[0], "[REDACTED:anthropic-api-key]") {
		t.Fatalf("agent copy %q", a)
	}
	// No secret anywhere in the store; nothing of it in the main tree.
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			if strings.Contains(string(b), tokenA) || strings.Contains(string(b), tokenB) {
				t.Errorf("%s holds a secret", path)
			}
		}
		return nil
	})
	if files := gt.Git(t, dir, "ls-files", "--others", "--exclude-standard"); strings.Contains(files, "transcripts") {
		t.Fatalf("untracked transcript files in the main tree:\n%s", files)
	}
}

// A planning session's SessionStart names what its retrospective should
// look at: the trail's counts since the last planning and the recurring
// patterns; not while a sprint executes, and never for a subagent.
func TestSessionStart_PlanningNamesTheRetrospective(t *testing.T) {
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	log := execlog.Open(g)
	for _, e := range []execlog.Entry{
		{Sprint: 1, Phase: "plan", Event: "verdict", Result: "PASS"},
		{Task: "S1-01/T1", Phase: "green", Event: "verdict", Result: "FAIL", Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "d", Paths: []string{"cmd/main.go"}}}},
		{Task: "S1-02/T1", Phase: "green", Event: "verdict", Result: "FAIL", Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "d", Paths: []string{"cmd/main.go"}}}},
		{Task: "S1-02/T1", Phase: "escalate", Event: "isolated"},
	} {
		if _, err := log.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	open := opener(t)
	d := &hooks.Dispatcher{Dir: dir, Getenv: func(string) string { return "" }, Open: func(dir, session string) (*hooks.Stores, error) {
		st, err := open(dir, session)
		if err != nil {
			return nil, err
		}
		st.Retro = func(ctx context.Context) (*retro.Report, error) {
			rep, err := retro.Load(ctx, retro.Sources{Exec: execlog.Open(st.Record.Git())}, retro.LastPlanning)
			return &rep, err
		}
		return st, nil
	}}
	start := func(extra string) string {
		var out bytes.Buffer
		d.Run(context.Background(), strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"s","source":"startup","cwd":"`+dir+`"`+extra+`}`), &out, "")
		return out.String()
	}
	ctxText := contextOf(t, start(""), "SessionStart")
	for _, want := range []string{"--- ideate retrospective input (historical data) ---", "since the last planning", "2 failed verdicts, 1 escalations",
		"1 recurring patterns", "- 2× fail green out_of_scope cmd/main.go (2 tasks)", "git ideate retro"} {
		if !strings.Contains(ctxText, want) {
			t.Fatalf("context lacks %q:\n%s", want, ctxText)
		}
	}
	if utf8.RuneCountInString(ctxText) > hooks.ContextBudget {
		t.Errorf("context of %d characters", utf8.RuneCountInString(ctxText))
	}
	// Executing: a task is open (the worktree manager's marker).
	os.MkdirAll(filepath.Join(dir, ".git", "ideate", "executing"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "ideate", "executing", "x"), []byte("x"), 0o644)
	if c := start(""); strings.Contains(c, "retrospective") {
		t.Fatalf("primed with the retrospective while executing:\n%s", c)
	}
	os.RemoveAll(filepath.Join(dir, ".git", "ideate", "executing"))
	if c := start(`,"agent_id":"a1","agent_type":"x"`); strings.Contains(c, "retrospective") {
		t.Fatalf("a subagent's session got the retrospective:\n%s", c)
	}
	// The section shrinks to fit: fewer names, then none.
	rep := &retro.Report{Events: 1, Counts: map[string]int{retro.KindFail: 1}}
	for i := 0; i < 10; i++ {
		rep.Recurring = append(rep.Recurring, retro.Pattern{Key: retro.Key{Kind: "fail", Phase: "green", Class: "c", Subject: strings.Repeat("p", 90)}, Count: 2})
	}
	if a, b := hooks.RetroSection(rep, 3), hooks.RetroSection(rep, 0); strings.Count(a, "\n- ") != 3 || strings.Contains(b, "\n- ") || len(b) >= len(a) {
		t.Errorf("sections:\n%s\n%s", a, b)
	}
}
