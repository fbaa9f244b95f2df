package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func itemID(t testing.TB, out string) string {
	t.Helper()
	var it struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &it); err != nil || it.ID == "" {
		t.Fatalf("not an item: %q (%v)", out, err)
	}
	return it.ID
}

func TestWork_Golden(t *testing.T) {
	dir := gt.NewRepo(t)
	var all strings.Builder
	step := func(title string, r result) result {
		fmt.Fprintf(&all, "$ %s\n[exit %d]\n%s", title, r.code, r.out)
		if r.err != "" {
			fmt.Fprintf(&all, "[stderr]\n%s", r.err)
		}
		all.WriteString("\n")
		return r
	}
	// The golden order (newest first, and which open child a refusal
	// names) follows the items' ULIDs. Two creates within one millisecond
	// get ids in random order (each call mints from a source of its own),
	// so the creates are a few milliseconds apart.
	apart := func(id string) string { time.Sleep(3 * time.Millisecond); return id }
	parent := apart(itemID(t, step("work create parent", cli(t, dir, "", "work", "create", "--title", "Ship the board", "--spec", "outline", "--spec-format", "plan/outline", "--human", "dan")).out))
	dep := apart(itemID(t, step("work create dep", cli(t, dir, "", "work", "create", "--title", "Design refs", "--spec", "refs", "--spec-format", "plan/outline", "--human", "dan", "--parent", parent)).out))
	child := itemID(t, step("work create child", cli(t, dir, "spec from stdin", "work", "create", "--title", "Write claims", "--spec", "-", "--spec-format", "plan/outline", "--human", "dan", "--parent", parent, "--depends-on", dep, "--tenant", "local")).out)
	step("work list", cli(t, dir, "", "work", "list"))
	step("work ready", cli(t, dir, "", "work", "ready"))
	step("work claim child (blocked)", cli(t, dir, "", "work", "claim", "--id", child, "--human", "eve"))
	step("work claim parent (open children)", cli(t, dir, "", "work", "claim", "--id", parent, "--human", "eve"))
	step("work claim dep", cli(t, dir, "", "work", "claim", "--id", dep, "--human", "eve", "--agent", "worker/1"))
	step("work complete dep (stale token)", cli(t, dir, "", "work", "complete", "--id", dep, "--token", "7"))
	step("work complete dep", cli(t, dir, "", "work", "complete", "--id", dep, "--token", "1", "--note", "refs designed"))
	step("work ready --claim", cli(t, dir, "", "work", "ready", "--claim", "--human", "eve"))
	step("work events child", cli(t, dir, "", "work", "events", "--id", child))
	step("work update-meta (stale version)", cli(t, dir, "", "work", "update-meta", "--id", parent, "--expected-version", "9", "--title", "x"))
	step("work update-meta", cli(t, dir, "", "work", "update-meta", "--id", parent, "--expected-version", "1", "--title", "Ship the whole board"))
	step("work list --json --limit 2 --status open", cli(t, dir, "", "work", "list", "--json", "--limit", "2", "--status", "open"))
	step("work get --json dep", cli(t, dir, "", "work", "get", "--json", "--id", dep))
	step("work get missing", cli(t, dir, "", "work", "get", "--id", "01JDQ3Z5E8X9K2M4N6P8R0T1VW"))
	step("work cancel dep (done)", cli(t, dir, "", "work", "cancel", "--id", dep, "--human", "dan"))
	step("work list --status blocked", cli(t, dir, "", "work", "list", "--status", "blocked"))
	step("work sweep", cli(t, dir, "", "work", "sweep"))
	step("record read --scope work-completion", cli(t, dir, "", "record", "read", "--scope", "work-completion"))
	golden(t, "work", all.String())
	gt.Fsck(t, dir)
}

func TestWork_ThroughGit(t *testing.T) {
	dir := gt.NewRepo(t)
	r := mustOK(t, bin(t, dir, "the spec\n", "work", "create", "--title", "t", "--spec", "-", "--spec-format", "f", "--human", "h"))
	id := itemID(t, r.out)
	r = mustOK(t, bin(t, dir, "", "work", "claim", "--id", id, "--human", "w", "--lease-ms", "60000"))
	if !strings.Contains(r.out, `"claim_token":1`) {
		t.Fatalf("claim: %s", r.out)
	}
	if r := bin(t, dir, "", "work", "claim", "--id", id, "--human", "x"); r.code != 1 || !strings.Contains(r.err, "NOT_CLAIMABLE") || !strings.Contains(r.err, "held by w") {
		t.Fatalf("second claim: %+v", r)
	}
	if got := gt.Git(t, dir, "log", "--format=%s%n%b", "refs/ideate/board/items/"+id); !strings.Contains(got, "Ideate-Token: 1") {
		t.Fatalf("git log of the item:\n%s", got)
	}
	// sweep always exits 0, even outside a repository.
	if r := bin(t, t.TempDir(), "", "work", "sweep"); r.code != 0 {
		t.Fatalf("sweep outside a repo: %+v", r)
	}
}
