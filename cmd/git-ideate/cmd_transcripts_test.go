package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/transcripts"
)

// du reports the store's areas; prune cuts by date and by task, a dry run
// removes nothing, and a prune that names nothing is refused.
func TestTranscriptsCmd_DuAndPrune(t *testing.T) {
	dir := gt.NewRepo(t)
	s := transcripts.Open(filepath.Join(dir, ".git", "ideate"))
	p := json.RawMessage(`{"x":1}`)
	for _, at := range []string{"2026-11-01T00:00:00.000Z", "2026-11-20T00:00:00.000Z"} {
		if _, err := s.Append(transcripts.Event{At: at, Event: "PostToolUse", Task: "S1-01/T1", Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	r := cli(t, dir, "", "transcripts", "du")
	if r.code != 0 || !strings.Contains(r.out, "1 files  global\n") || !strings.Contains(r.out, "1 files  task S1-01/T1\n") || !strings.Contains(r.out, "2 files  total in ") {
		t.Fatalf("du: %+v", r)
	}
	if r = cli(t, dir, "", "transcripts", "prune"); r.code != 1 || !strings.Contains(r.err, "SCHEMA") {
		t.Fatalf("prune of nothing: %+v", r)
	}
	if r = cli(t, dir, "", "transcripts", "prune", "--before", "yesterday"); r.code != 1 || !strings.Contains(r.err, "SCHEMA") {
		t.Fatalf("prune --before yesterday: %+v", r)
	}
	r = cli(t, dir, "", "transcripts", "prune", "--before", "2026-11-10", "--dry-run")
	if r.code != 0 || !strings.Contains(r.out, "would remove 0 files and 2 event log lines") {
		t.Fatalf("dry run: %+v", r)
	}
	global := filepath.Join(s.Root, transcripts.GlobalFile)
	if b, _ := os.ReadFile(global); strings.Count(string(b), "\n") != 2 {
		t.Fatal("the dry run cut the log")
	}
	r = cli(t, dir, "", "transcripts", "prune", "--before", "2026-11-10", "--json")
	var out transcriptsPruneOut
	if r.code != 0 || json.Unmarshal([]byte(r.out), &out) != nil || out.LinesCut != 2 || out.MessageType != "transcripts_prune" {
		t.Fatalf("prune: %+v", r)
	}
	r = cli(t, dir, "", "transcripts", "prune", "--task", "S1-01/T1")
	if r.code != 0 || !strings.Contains(r.out, "removed tasks/S1-01/T1/events.jsonl") {
		t.Fatalf("prune --task: %+v", r)
	}
	if when, err := parseWhen("48h", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)); err != nil || !when.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("parseWhen 48h = %v %v", when, err)
	}
}
