package main

import (
	"encoding/json"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// With a remote that decides claims, `work ready` lists this clone's copy
// of the board, which may lag the remote: it says so,
// in JSON (stale, remote, as_of) and in a note on stderr; without one, the
// output is as it was.
func TestWorkReady_SaysWhenItsViewMayBeStale(t *testing.T) {
	_, a, b := syncRemote(t)
	mustOK(t, bin(t, a, "", "work", "create", "--title", "t", "--spec", "s", "--spec-format", "f", "--human", "h"))
	r := mustOK(t, bin(t, a, "", "work", "ready", "--json"))
	if strings.Contains(r.out, "stale") || r.err != "" {
		t.Fatalf("ready without an authority: %+v", r)
	}
	mustOK(t, bin(t, a, "", "sync"))
	gt.Git(t, b, "config", "ideate.remote", "origin")
	r = mustOK(t, bin(t, b, "", "work", "ready"))
	if !strings.Contains(r.out, "(nothing ready)") || !strings.Contains(r.err, "remote origin decides claims and has not been fetched yet") {
		t.Fatalf("ready in a clone that never synced: %+v", r)
	}
	mustOK(t, bin(t, b, "", "sync"))
	var page struct {
		Items  []any   `json:"items"`
		Stale  bool    `json:"stale"`
		Remote string  `json:"remote"`
		AsOf   *string `json:"as_of"`
	}
	r = mustOK(t, bin(t, b, "", "work", "ready", "--json"))
	if err := json.Unmarshal([]byte(r.out), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || !page.Stale || page.Remote != "origin" || page.AsOf == nil || !tsRe.MatchString(*page.AsOf) {
		t.Fatalf("ready --json after a sync: %s", r.out)
	}
	r = mustOK(t, bin(t, b, "", "work", "ready"))
	if !strings.Contains(r.err, "was last fetched at "+*page.AsOf) {
		t.Fatalf("ready after a sync: %+v", r)
	}
}
