package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
)

// BenchmarkMCPTools runs the tools of bench/writebench's mixed run in
// process, one cycle (append, create, claim, complete, read) per
// iteration, so that a profile shows where a call's time goes (issue 19):
//
//	go test ./cmd/git-ideate -run '^$' -bench MCPTools -cpuprofile cpu.out
//
// It runs once without spare files and once with the server's
// (mcpSpares), each in a repository of its own.
func BenchmarkMCPTools(b *testing.B) {
	for _, n := range []int{0, mcpSpares} {
		b.Run(fmt.Sprintf("spares=%d", n), func(b *testing.B) { benchMCPTools(b, n) })
	}
}

func benchMCPTools(b *testing.B, spares int) {
	dir := gt.NewRepo(b)
	b.Setenv("GIT_IDEATE_NO_MAINTENANCE", "") // as a user's server runs: roll-ups on
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, spares: spares}
	b.Cleanup(env.Close)
	b.Cleanup(func() { // a background roll-up or pack-refs still writing into the directory
		for i := 0; i < 300 && (lockHeld(filepath.Join(dir, ".git", "ideate", "maintenance.lock")) || lockHeld(filepath.Join(dir, ".git", "packed-refs.lock"))); i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	srv := mcpserver.New("test", func() (*mcpserver.Backend, error) { return env.Backend("mcp-test") })
	took := map[string][]time.Duration{}
	call := func(name string, args map[string]any) []byte {
		raw, _ := json.Marshal(args)
		t0 := time.Now()
		res := srv.Call(bg, name, raw)
		took[name] = append(took[name], time.Since(t0))
		if res.IsError {
			b.Fatalf("%s: %s", name, res.Content[0].Text)
		}
		return []byte(res.Content[0].Text)
	}
	for i := 0; i < 300; i++ {
		call("record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("fill %d", i), "content": "body", "scope": "bench"})
	}
	took = map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call("record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("mcp %d", i), "content": "body", "scope": "bench"})
		var item struct {
			Item struct {
				ID    string
				Claim struct {
					ClaimToken int64 `json:"claim_token"`
				}
			}
		}
		json.Unmarshal(call("work_create", map[string]any{"title": fmt.Sprintf("item %d", i), "spec": "s", "spec_format": "f", "actor_human": "bench"}), &item)
		id := item.Item.ID
		json.Unmarshal(call("work_claim", map[string]any{"id": id, "actor_human": "bench"}), &item)
		call("work_complete", map[string]any{"id": id, "claim_token": item.Item.Claim.ClaimToken, "note": "done"})
		call("record_read", map[string]any{})
	}
	b.StopTimer()
	for name, ds := range took {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-ms")
	}
}

func lockHeld(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
