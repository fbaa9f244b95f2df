package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan/plantest"
)

// mcpSprintRepo is a one-story, one-task sprint with a Go runner and a
// plan-ready.md, committed and checked by nothing yet.
func mcpSprintRepo(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Skip("go is not installed")
	}
	goEnv := strings.Fields(string(out))
	dir := gt.NewRepo(t)
	t.Setenv("GOCACHE", goEnv[0]) // NewRepo's empty HOME would make go build from nothing
	t.Setenv("GOMODCACHE", goEnv[1])
	t.Setenv("GOTOOLCHAIN", "local")
	if err := plantest.Generate(dir, plantest.Shape{Stories: 1, TasksPerStory: 1, TestsPerTask: 1, StoriesPerWave: 1}); err != nil {
		t.Fatal(err)
	}
	sprint := filepath.Join(dir, "docs", "agents", "sprint1")
	std := "---\ntype: standards\nsprint: 1\n---\n\n# Standards\n\n## Detected stack\n\n- Go — go.mod.\n\n## Active rules\n\n- Vet clean — CONTRIBUTING.md R2.\n\n## Gate matrix\n\n```sh\ngo vet ./...\n```\n" + goRunner
	os.WriteFile(filepath.Join(sprint, "standards.md"), []byte(std), 0o644)
	ready := "---\ntype: plan-ready\nstory: S1-01\n---\n\n# S1-01 plan-ready\n\n## T1 — Piece 1\n- [ ] `part01/piece1_test.go::TestPiece1_Case1` — FAIL: stub\n"
	os.WriteFile(filepath.Join(sprint, "s1-01-part-1", "plan-ready.md"), []byte(ready), 0o644)
	os.MkdirAll(filepath.Join(dir, "part01"), 0o755)
	os.WriteFile(filepath.Join(dir, "part01", "doc.go"), []byte("// Package part01 is part 1.\npackage part01\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "sprint 1 planned")
	return dir
}

// A sprint driven only over MCP reaches a final PASS: plan_check,
// plan_import, work_list, task_start (claiming the task's item),
// task_attempt, RED and GREEN commits judged by gate_run, gate_run final,
// wave_check, task_complete; the files and commits are the agent's own (git), every
// ideate step is a tool call to the built binary.
func TestMCP_ScriptedSprintReachesFinalPass(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test through the gates")
	}
	dir := mcpSprintRepo(t)
	r := startMCP(t, dir)
	id := 0
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		id++
		r.callAsync(id, tool, args)
		var res toolResult
		if err := json.Unmarshal(r.waitFor(id, 3*time.Minute), &res); err != nil {
			t.Fatal(err)
		}
		if res.IsError || res.Out["ok"] != true {
			t.Fatalf("%s %v: %s", tool, args, res.Content[0].Text)
		}
		return res.Out
	}
	if c := call("plan_check", map[string]any{}); c["verdict"] != "PASS" {
		t.Fatalf("plan_check: %v", c)
	}
	call("plan_import", map[string]any{"actor_human": "alice"})
	item := ""
	for _, it := range call("work_list", map[string]any{})["items"].([]any) {
		row := it.(map[string]any)
		if strings.HasPrefix(row["title"].(string), "S1-01/T1 ") && row["claimable"] == true {
			item = row["id"].(string)
		}
	}
	if item == "" {
		t.Fatal("no claimable item for S1-01/T1 after plan_import")
	}
	// An attempt on a task not started says how to start it.
	id++
	if early := r.call(id, "task_attempt", map[string]any{"task": "S1-01/T1"}); !early.IsError || !strings.Contains(early.Out["message"].(string), `Start it with task_start {"task":"S1-01/T1"`) {
		t.Fatalf("task_attempt before task_start: %s", early.Content[0].Text)
	}
	st := call("task_start", map[string]any{"task": "S1-01/T1", "item": item, "actor_human": "alice", "role": "red-worker"})
	wt := st["path"].(string)
	if st["token"] == nil || len(st["tests"].([]any)) != 1 {
		t.Fatalf("task_start: %v", st)
	}
	call("task_attempt", map[string]any{"task": "S1-01/T1"})
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(wt, "part01", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("piece1.go", "package part01\n\n// Piece1 is piece one. agentic:shim\nfunc Piece1() int { return 0 }\n")
	write("piece1_test.go", "package part01\n\nimport \"testing\"\n\nfunc TestPiece1_Case1(t *testing.T) {\n\tif Piece1() != 1 {\n\t\tt.Fatal(\"want 1\")\n\t}\n}\n")
	gt.Git(t, wt, "add", "-A")
	gt.Git(t, wt, "commit", "-q", "-m", "S1-01/T1: red")
	if v := call("gate_run", map[string]any{"gate": "red", "task": "S1-01/T1"}); v["result"] != "PASS" {
		t.Fatalf("gate red: %v", v)
	}
	write("piece1.go", "package part01\n\n// Piece1 is piece one.\nfunc Piece1() int { return 1 }\n")
	gt.Git(t, wt, "commit", "-q", "-am", "S1-01/T1: green")
	if v := call("gate_run", map[string]any{"gate": "green", "task": "S1-01/T1"}); v["result"] != "PASS" {
		t.Fatalf("gate green: %v", v)
	}
	if v := call("gate_run", map[string]any{"gate": "final", "task": "S1-01/T1"}); v["result"] != "PASS" {
		t.Fatalf("gate final: %v", v)
	}
	if w := call("wave_check", map[string]any{"wave": 1}); w["stalled"] != false || len(w["passed"].([]any)) != 1 {
		t.Fatalf("wave_check: %v", w)
	}
	call("task_complete", map[string]any{"task": "S1-01/T1", "note": "done"})
	log := call("exec_log", map[string]any{"task": "S1-01/T1", "phase": "final"})
	if es := log["entries"].([]any); len(es) != 1 || es[0].(map[string]any)["result"] != "PASS" {
		t.Fatalf("exec_log final: %v", log)
	}
	if tl := call("task_list", map[string]any{"all": true})["tasks"].([]any); len(tl) != 1 || tl[0].(map[string]any)["status"] != "completed" {
		t.Fatalf("task_list: %v", tl)
	}
	gt.Fsck(t, dir)
}

// The execution tools read the sprint a call names, as the CLI's --sprint
// does: a sprint that does not exist is refused naming it, before
// anything is stored (no attempt opened, no verdict), where the same call
// without it (the highest-numbered sprint, here 1) reads sprint 1.
func TestMCP_ExecutionToolsReadTheSprintNamed(t *testing.T) {
	dir := mcpSprintRepo(t)
	r := startMCP(t, dir)
	task := "S1-01/T1"
	r.call(1, "task_start", map[string]any{"task": task, "role": "red-worker"})
	for i, args := range []map[string]any{{"task": task}, {"task": task, "sprint": 1}} {
		if res := r.call(2+i, "task_show", args); res.IsError {
			t.Fatalf("task_show %v: %s", args, res.Content[0].Text)
		}
	}
	for i, c := range []struct {
		tool string
		args map[string]any
	}{
		{"task_show", map[string]any{"task": task, "sprint": 7}},
		{"task_attempt", map[string]any{"task": task, "sprint": 7}},
		{"task_feedback", map[string]any{"task": task, "sprint": 7}},
		{"wave_check", map[string]any{"wave": 1, "sprint": 7}},
		{"gate_run", map[string]any{"gate": "red", "task": task, "sprint": 7}},
		{"test_run", map[string]any{"task": task, "sprint": 7}},
		{"scaffold", map[string]any{"task": task, "sprint": 7}},
	} {
		res := r.call(10+i, c.tool, c.args)
		if !res.IsError || !strings.Contains(res.Content[0].Text, "NOT_FOUND") || !strings.Contains(res.Content[0].Text, "sprint7") {
			t.Errorf("%s with sprint 7: want a refusal naming sprint7, got %v %s", c.tool, res.IsError, res.Content[0].Text)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "for-each-ref", "refs/ideate/exec").Output(); err != nil || len(out) != 0 {
		t.Errorf("refused calls stored on the execution log: %q %v", out, err)
	}
}
