package main

import (
	"fmt"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// A child that another process makes, or
// cancels, is what the server's next claim of its parent sees, also after
// git pack-refs --prune has packed the item refs and removed their
// directory.
func TestMCP_ServerSeesChildrenOtherProcessesMake(t *testing.T) {
	dir := gt.NewRepo(t)
	r := startMCP(t, dir)
	id := 1
	call := func(tool string, args map[string]any) toolResult {
		t.Helper()
		id++
		return r.call(id, tool, args)
	}
	for i := range 12 {
		res := call("work_create", map[string]any{"title": fmt.Sprintf("parent %d", i), "spec": "s", "spec_format": "f", "actor_human": "m"})
		if res.IsError {
			t.Fatalf("create: %+v", res)
		}
		parent := res.Out["item"].(map[string]any)["id"].(string)
		kid := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", fmt.Sprintf("kid %d", i), "--spec", "s",
			"--spec-format", "f", "--human", "h", "--parent", parent)).out)
		if res := call("work_claim", map[string]any{"id": parent, "actor_human": "m"}); !res.IsError || res.Out["code"] != "NOT_CLAIMABLE" {
			t.Fatalf("round %d: the server claimed a parent whose child a CLI process made: %+v", i, res)
		}
		mustOK(t, bin(t, dir, "", "work", "cancel", "--id", kid, "--human", "h"))
		if res := call("work_claim", map[string]any{"id": parent, "actor_human": "m"}); res.IsError {
			t.Fatalf("round %d: the server refused a parent whose child a CLI process cancelled: %+v", i, res)
		}
		if i%4 == 3 {
			gt.Git(t, dir, "pack-refs", "--all", "--prune")
		}
	}
}
