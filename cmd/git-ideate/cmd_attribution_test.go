package main

import (
	"encoding/json"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// completionSession is the source.session_id of the newest
// work-completion record.
func completionSession(t *testing.T, dir string) string {
	t.Helper()
	var page struct {
		Records []struct {
			Kind   string `json:"kind"`
			Source struct {
				SessionID string `json:"session_id"`
			} `json:"source"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "record", "read", "--json", "--scope", "work-completion")).out), &page); err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Records {
		if r.Kind == "work-completion" {
			return r.Source.SessionID
		}
	}
	t.Fatal("no work-completion record")
	return ""
}

// The work-completion record names the session the completion was made
// in, not the holder's agent: the host's
// session through the MCP server, the CLI call's own session otherwise.
func TestWorkCompletion_RecordCarriesTheSession(t *testing.T) {
	dir := gt.NewRepo(t)
	item := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", "t", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	claimed := mustOK(t, bin(t, dir, "", "work", "claim", "--id", item, "--human", "dan", "--agent", "worker-7")).out
	var it struct {
		Claim struct {
			Token int64 `json:"claim_token"`
		} `json:"claim"`
	}
	if err := json.Unmarshal([]byte(claimed), &it); err != nil {
		t.Fatal(err)
	}
	mustOK(t, bin(t, dir, "", "work", "complete", "--id", item, "--token", jsonNum(it.Claim.Token), "--note", "done"))
	if got := completionSession(t, dir); !strings.HasPrefix(got, "cli-") {
		t.Fatalf("CLI completion: session_id %q, want the CLI call's cli-<ULID>", got)
	}

	host := "3b311f76-4634-48ab-b822-33299bd463ef"
	r := startMCP(t, dir, "CLAUDE_CODE_SESSION_ID="+host)
	res := r.call(1, "work_create", map[string]any{"title": "m", "spec": "s", "spec_format": "f", "actor_human": "h"})
	id := res.Out["item"].(map[string]any)["id"].(string)
	res = r.call(2, "work_claim", map[string]any{"id": id, "actor_human": "dan", "actor_agent": "worker-7"})
	if res.IsError {
		t.Fatalf("claim: %+v", res)
	}
	token := res.Out["item"].(map[string]any)["claim"].(map[string]any)["claim_token"]
	if res = r.call(3, "work_complete", map[string]any{"id": id, "claim_token": token, "note": "done"}); res.IsError {
		t.Fatalf("complete: %+v", res)
	}
	if got := completionSession(t, dir); got != host {
		t.Fatalf("MCP completion: session_id %q, want the host's %q", got, host)
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }
