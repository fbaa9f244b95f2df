package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/mcpserver"
)

// Every tool annotated readOnlyHint writes nothing: each is called on a
// board holding a claim whose lease has run out (what a lazy expiry
// would write) and a started task, and no ref moves.
func TestMCP_ReadOnlyToolsWriteNothing(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker"})
	env := &Env{Dir: dir}
	t.Cleanup(env.Close)
	fx := &libFixture{dir: dir, env: env}
	var err error
	if fx.board, err = env.Board(); err != nil {
		t.Fatal(err)
	}
	// expired is an item whose claim's lease has just run out.
	expired := func() string {
		id := fx.item(t)
		lease := int64(1)
		if _, err := fx.board.Claim(bg, id, board.Actor{Human: "alice"}, &lease); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		return id
	}
	id := expired()
	srv := mcpserver.New("test", func() (*mcpserver.Backend, error) { return backendFor(env, "mcp-test") })
	args := map[string]map[string]any{
		"work_get": {"id": id}, "work_events": {"id": id}, "task_show": {"task": "S1-01/T1"},
		"test_classify": {"output": `{"Action":"pass","Package":"p","Test":"TestX"}`, "format": "go-test-json"},
		"symbols_find":  {"name": "Reverse"}, "symbols_defs": {"file": "strutil/reverse.go"},
	}
	n := 0
	for _, tl := range srv.List() {
		if a, _ := tl["annotations"].(map[string]any); a == nil || a["readOnlyHint"] != true {
			continue
		}
		name := tl["name"].(string)
		args["work_get"]["id"], args["work_events"]["id"] = expired(), expired()
		before := refsState(t, dir)
		raw, _ := json.Marshal(args[name])
		if args[name] == nil {
			raw = []byte("{}")
		}
		res := srv.Call(bg, name, raw)
		if after := refsState(t, dir); after != before {
			t.Errorf("%s is annotated read-only but moved refs (%.200s):\nbefore %s\nafter  %s", name, res.Content[0].Text, before, after)
		}
		n++
	}
	t.Logf("%d read-only tools called", n)
}
