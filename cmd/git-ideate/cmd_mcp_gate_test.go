package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
)

// gate_run judges and stores through the same Judge as `git ideate gate`:
// a task that was never started cannot be judged (and its answer is not
// stored: it judged no task of the plan), uncommitted work FAILs with its
// class, and that verdict lands on the execution log.
func TestMCP_GateRun(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker"})
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	t.Cleanup(env.Close)
	srv := mcpserver.New("test", func() (*mcpserver.Backend, error) { return backendFor(env, "mcp-test") })
	call := func(args string) map[string]any {
		t.Helper()
		res := srv.Call(context.Background(), "gate_run", json.RawMessage(args))
		var out map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].Text), &out); err != nil {
			t.Fatalf("%s: %v %s", args, err, res.Content[0].Text)
		}
		return out
	}
	first := func(v map[string]any) string {
		rs, _ := v["reasons"].([]any)
		if len(rs) == 0 {
			return ""
		}
		return rs[0].(map[string]any)["class"].(string)
	}
	if v := call(`{"gate":"red","task":"S1-09/T9"}`); v["ok"] != true || v["result"] != "UNVERIFIABLE" || first(v) != "no_contract" {
		t.Fatalf("a task never started: %v", v)
	}
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	os.WriteFile(filepath.Join(wt, "strutil", "reverse_test.go"), []byte("package strutil\n\n// uncommitted\n"), 0o644)
	v := call(`{"gate":"red","task":"S1-01/T1"}`)
	if v["ok"] != true || v["result"] != "FAIL" || first(v) != "uncommitted" {
		t.Fatalf("uncommitted work: %v", v)
	}
	log := gt.Git(t, dir, "log", "--format=%s", "refs/ideate/exec")
	if strings.Count(log, "FAIL") != 1 || strings.Count(log, "UNVERIFIABLE") != 0 {
		t.Fatalf("want one FAIL verdict and no UNVERIFIABLE one on the exec log:\n%s", log)
	}
	if r := srv.Call(context.Background(), "gate_run", json.RawMessage(`{"gate":"blue","task":"S1-01/T1"}`)); !r.IsError {
		t.Fatalf("an unknown gate: %+v", r)
	}
}
