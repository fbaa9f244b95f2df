package mcpserver_test

import (
	"context"
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/memory"
)

// retro and memory_list answer what the CLI's retro and memory list
// print, through the same library calls.
func TestServer_RetroAndMemoryTools(t *testing.T) {
	h := planHarness(t)
	g, err := gitstore.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	log := execlog.Open(g)
	for _, task := range []string{"S1-01/T1", "S1-02/T1"} {
		if _, err := log.Append(context.Background(), execlog.Entry{Task: task, Phase: "green", Event: "verdict", Result: "FAIL",
			Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "d", Paths: []string{"cmd/main.go"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	g.Close()
	r := h.ok("retro", map[string]any{})
	rec, _ := r["recurring"].([]any)
	if len(rec) != 1 || rec[0].(map[string]any)["count"] != float64(2) || r["truncated"] != false {
		t.Fatalf("retro: %v", r)
	}
	h.fails("retro", map[string]any{"since": "someday"}, "SCHEMA")
	if _, err := memory.Add(context.Background(), h.dir, memory.Entry{Role: "green-worker", Text: "Stay inside the task's scope.", Evidence: "exec E1"}, memory.Options{}); err != nil {
		t.Fatal(err)
	}
	m := h.ok("memory_list", map[string]any{"role": "green-worker"})
	if es, _ := m["entries"].([]any); len(es) != 1 || m["exists"] != true || m["findings"] != float64(0) {
		t.Fatalf("memory_list: %v", m)
	}
	if m := h.ok("memory_list", map[string]any{"role": "red-worker"}); len(m["entries"].([]any)) != 0 {
		t.Fatalf("memory_list red-worker: %v", m)
	}
}
