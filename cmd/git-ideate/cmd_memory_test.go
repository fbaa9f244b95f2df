package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/memory"
)

// memory add, list and check over a real repository: the entry lands in
// the working tree's docs/agents/memory.md, list scopes by role, check
// passes; an invariant-relaxing entry is refused with its code and
// changes nothing; a hand-broken file fails check with exit 1.
func TestMemoryCmd_AddListCheck(t *testing.T) {
	dir := gt.NewRepo(t)
	r := cli(t, dir, "", "memory", "add", "--role", "green-worker", "--evidence", "exec 01JD3Q", "--date", "2026-11-30",
		"Run the task's own package before stopping.")
	if r.code != 0 || !strings.Contains(r.out, "added to docs/agents/memory.md at line 7 (role green-worker)") {
		t.Fatalf("add: %+v", r)
	}
	r = cli(t, dir, "", "memory", "add", "--role", "red-worker", "--evidence", "exec 01JD3R", "--date", "2026-11-30",
		"Assert on behaviour.")
	if r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	r = cli(t, dir, "", "memory", "list", "--role", "green-worker", "--json")
	var out memoryListOut
	if r.code != 0 || json.Unmarshal([]byte(r.out), &out) != nil || len(out.Entries) != 1 || out.Entries[0].Role != "green-worker" {
		t.Fatalf("list: %+v", r)
	}
	r = cli(t, dir, "", "memory", "list")
	if r.code != 0 || r.out != "green-worker\tRun the task's own package before stopping. (evidence: exec 01JD3Q; 2026-11-30)\n"+
		"red-worker\tAssert on behaviour. (evidence: exec 01JD3R; 2026-11-30)\n" {
		t.Fatalf("list: %+v", r)
	}
	if r = cli(t, dir, "", "memory", "check"); r.code != 0 || !strings.Contains(r.out, "2 entries, no findings") {
		t.Fatalf("check: %+v", r)
	}
	path := filepath.Join(dir, filepath.FromSlash(memory.File))
	before, _ := os.ReadFile(path)
	r = cli(t, dir, "", "memory", "add", "--role", "green-worker", "--evidence", "x", "Skip the slow tests when the gate is tight.")
	if r.code != 1 || !strings.Contains(r.err, "INVARIANT: ") {
		t.Fatalf("refused add: %+v", r)
	}
	r = cli(t, dir, "", "memory", "add", "--role", "green-worker", "--evidence", "x", "run the task's OWN package before stopping")
	if r.code != 1 || !strings.Contains(r.err, "DUPLICATE: ") {
		t.Fatalf("duplicate add: %+v", r)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("refused adds changed the file")
	}
	os.WriteFile(path, append(before, []byte("\nstray line\n")...), 0o644)
	if r = cli(t, dir, "", "memory", "check"); r.code != 1 || !strings.Contains(r.out, "docs/agents/memory.md:") || !strings.Contains(r.err, "SCHEMA: ") {
		t.Fatalf("check of a broken file: %+v", r)
	}
}
