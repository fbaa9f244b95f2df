package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/record"
)

// plan_check stores its verdict, so an exec_log sent right behind it,
// before its answer came back, sees that verdict: eight fresh servers,
// each sent both lines at once.
func TestServe_PipelinedReadSeesPlanCheck(t *testing.T) {
	for round := 0; round < 8; round++ {
		dir := gt.NewRepo(t)
		if err := plantest.CopyExample(dir); err != nil {
			t.Fatal(err)
		}
		srv := mcpserver.New("test", func() (*mcpserver.Backend, error) {
			g, err := gitstore.Open(dir)
			if err != nil {
				return nil, err
			}
			rec := record.Open(g)
			return &mcpserver.Backend{Record: rec, Board: board.Open(g, rec), Session: "mcp-test", Git: g, Exec: execlog.Open(g),
				Plan: func(ctx context.Context, n int) (*plan.Sprint, error) {
					return plan.LoadDir(ctx, dir, plan.Options{Sprint: n})
				}}, nil
		})
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() { srv.Serve(t.Context(), inR, outW); outW.Close() }()
		go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plan_check","arguments":{}}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec_log","arguments":{"phase":"plan"}}}`+"\n")
		got := map[int]map[string]any{}
		sc := bufio.NewScanner(outR)
		for len(got) < 2 && sc.Scan() {
			var m struct {
				ID     int
				Result struct{ Content []struct{ Text string } }
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || len(m.Result.Content) != 1 {
				t.Fatalf("answer %s", sc.Text())
			}
			var out map[string]any
			json.Unmarshal([]byte(m.Result.Content[0].Text), &out)
			got[m.ID] = out
		}
		inW.Close()
		es, _ := got[2]["entries"].([]any)
		if got[1]["stored"] == nil || len(es) != 1 || es[0].(map[string]any)["id"] != got[1]["stored"] {
			t.Fatalf("round %d: exec_log behind plan_check: %v, plan_check stored %v", round, got[2], got[1]["stored"])
		}
	}
}
