package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// syncRemote makes a bare remote with one commit on main and returns its
// path and two clones of it.
func syncRemote(t *testing.T) (bare, a, b string) {
	t.Helper()
	seed := gt.NewRepo(t)
	bare = filepath.Join(t.TempDir(), "remote.git")
	gt.Git(t, seed, "init", "-q", "--bare", bare)
	gt.Git(t, seed, "push", "-q", bare, "HEAD:refs/heads/main")
	for _, d := range []*string{&a, &b} {
		*d = filepath.Join(t.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "-q", bare, *d).CombinedOutput(); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
	}
	return bare, a, b
}

func TestSync_CLI(t *testing.T) {
	bare, a, b := syncRemote(t)
	// No remote at all, or two without a choice: NO_REMOTE, nothing done.
	lonely := gt.NewRepo(t)
	if r := bin(t, lonely, "", "sync"); r.code != 1 || !strings.Contains(r.err, "NO_REMOTE") {
		t.Fatalf("sync without a remote: %+v", r)
	}
	gt.Git(t, a, "remote", "add", "other", bare)
	if r := bin(t, a, "", "sync"); r.code != 1 || !strings.Contains(r.err, "NO_REMOTE") || !strings.Contains(r.err, "origin, other") {
		t.Fatalf("sync with two remotes: %+v", r)
	}
	if r := bin(t, a, "", "sync", "nope"); r.code != 1 || !strings.Contains(r.err, "no remote named") {
		t.Fatalf("sync with an unknown remote: %+v", r)
	}

	rid := strings.TrimSpace(mustOK(t, bin(t, a, "", "record", "append", "--kind", "finding", "--claim", "from a")).out)
	item := itemID(t, mustOK(t, bin(t, a, "", "work", "create", "--title", "t", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	out := mustOK(t, bin(t, a, "", "sync", "origin")).out
	for _, want := range []string{"synced with origin", "record:   pushed", "items:    1 pushed"} {
		if !strings.Contains(out, want) {
			t.Fatalf("sync summary lacks %q:\n%s", want, out)
		}
	}
	// ideate.remote picks the remote when there are several.
	gt.Git(t, a, "config", "ideate.remote", "origin")
	var sum struct {
		Remote string `json:"remote"`
		Record string `json:"record"`
		Lost   []any  `json:"lost"`
	}
	if err := json.Unmarshal([]byte(mustOK(t, bin(t, a, "", "sync", "--json")).out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Remote != "origin" || sum.Record != "up-to-date" || sum.Lost == nil {
		t.Fatalf("second sync: %+v", sum)
	}
	// The other clone gets everything with one sync.
	mustOK(t, bin(t, b, "", "sync"))
	if out := mustOK(t, bin(t, b, "", "record", "read", "--json")).out; !strings.Contains(out, rid) {
		t.Fatalf("b lacks a's record after sync:\n%s", out)
	}
	if out := mustOK(t, bin(t, b, "", "work", "get", "--id", item)).out; !strings.Contains(out, `"title":"t"`) {
		t.Fatalf("b lacks a's item after sync:\n%s", out)
	}

	// Remote-authoritative claims: b wins through the remote, a (stale) loses.
	mustOK(t, bin(t, b, "", "work", "claim", "--id", item, "--human", "bob", "--remote", "origin"))
	r := bin(t, a, "", "work", "claim", "--id", item, "--human", "alice") // ideate.remote=origin
	if r.code != 1 || !strings.Contains(r.err, "NOT_CLAIMABLE") || !strings.Contains(r.err, "bob") {
		t.Fatalf("a's claim through ideate.remote: %+v", r)
	}
	if r := bin(t, a, "", "work", "claim", "--id", item, "--human", "alice", "--remote", "nope"); r.code != 1 || !strings.Contains(r.err, "NO_REMOTE") {
		t.Fatalf("claim with an unknown remote: %+v", r)
	}
	gt.Fsck(t, a)
	gt.Fsck(t, bare)
}

// With ideate.remote set, the MCP server's claim tools are
// remote-authoritative like the CLI's.
func TestSync_MCPClaimThroughRemote(t *testing.T) {
	_, a, b := syncRemote(t)
	item := itemID(t, mustOK(t, bin(t, a, "", "work", "create", "--title", "t", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	mustOK(t, bin(t, a, "", "sync"))
	mustOK(t, bin(t, b, "", "sync"))
	gt.Git(t, a, "config", "ideate.remote", "origin")
	mustOK(t, bin(t, b, "", "work", "claim", "--id", item, "--human", "bob", "--remote", "origin"))
	r := startMCP(t, a)
	res := r.call(1, "work_claim", map[string]any{"id": item, "actor_human": "mcp"})
	if !res.IsError || res.Out["code"] != "NOT_CLAIMABLE" {
		t.Fatalf("MCP claim of an item held at the remote: %+v", res)
	}
	if msg, _ := res.Out["message"].(string); !strings.Contains(msg, "bob") {
		t.Fatalf("the MCP loser is not told the holder: %+v", res.Out)
	}
}

// The MCP server lists archived items as the CLI does: work_list shows
// live items, with archived true the ones a sync folded into the archive
// too, and with status done those without being asked.
func TestSync_MCPListsArchivedItems(t *testing.T) {
	_, a, _ := syncRemote(t)
	create := func(title string) string {
		return itemID(t, mustOK(t, bin(t, a, "", "work", "create", "--title", title, "--spec", "s", "--spec-format", "f", "--human", "alice")).out)
	}
	id := create("finished work")
	var it struct {
		Claim struct {
			Token int64 `json:"claim_token"`
		} `json:"claim"`
	}
	json.Unmarshal([]byte(mustOK(t, bin(t, a, "", "work", "claim", "--id", id, "--human", "alice")).out), &it)
	mustOK(t, bin(t, a, "", "work", "complete", "--id", id, "--token", jsonNum(it.Claim.Token), "--note", "done"))
	live := create("open work")
	gt.Git(t, a, "config", "ideate.archiveAfter", "0")
	mustOK(t, bin(t, a, "", "sync"))
	if refs := gt.Git(t, a, "for-each-ref", "refs/ideate/board/items/"); strings.Contains(refs, id) {
		t.Fatalf("the finished item was not archived:\n%s", refs)
	}
	r := startMCP(t, a)
	ids := func(id int, args map[string]any) string {
		t.Helper()
		res := r.call(id, "work_list", args)
		if res.IsError {
			t.Fatalf("work_list %v: %s", args, res.Content[0].Text)
		}
		var got []string
		for _, it := range res.Out["items"].([]any) {
			got = append(got, it.(map[string]any)["id"].(string))
		}
		return strings.Join(got, " ")
	}
	if got := ids(1, map[string]any{}); got != live {
		t.Fatalf("work_list: %q, want the live item only", got)
	}
	if got := ids(2, map[string]any{"archived": true}); !strings.Contains(got, id) || !strings.Contains(got, live) {
		t.Fatalf("work_list archived: %q, want both", got)
	}
	if got := ids(3, map[string]any{"status": "done"}); got != id {
		t.Fatalf("work_list status done: %q, want the archived item", got)
	}
}
