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

// BenchmarkMCPTools runs the tools of the bench program's mcp scenario in
// process, one cycle (append, create, claim, complete, read) per
// iteration, so that a profile shows where a call's time goes:
//
//	go test ./cmd/git-ideate -run '^$' -bench MCPTools -cpuprofile cpu.out
//
// The medians are reported per tool.
func BenchmarkMCPTools(b *testing.B) {
	plain := newMCPBench(b)
	// As a user's server runs: roll-ups on. After the repositories, whose
	// set-up (gitstoretest.NewRepo) switches maintenance off.
	b.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	for i := 0; i < 300; i++ {
		plain.append(i)
	}
	plain.reset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plain.cycle(i)
	}
	b.StopTimer()
	plain.report("")
}

type mcpBench struct {
	b    *testing.B
	srv  *mcpserver.Server
	took map[string][]time.Duration
}

func newMCPBench(b *testing.B) *mcpBench {
	dir := gt.NewRepo(b)
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Server: true}
	b.Cleanup(env.Close)
	b.Cleanup(func() { // a background roll-up or pack-refs still writing into the directory
		for i := 0; i < 300 && (lockHeld(filepath.Join(dir, ".git", "ideate", "maintenance.lock")) || lockHeld(filepath.Join(dir, ".git", "packed-refs.lock"))); i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	return &mcpBench{b: b, srv: mcpserver.New("test", func() (*mcpserver.Backend, error) { return backendFor(env, "mcp-test") }),
		took: map[string][]time.Duration{}}
}

func (m *mcpBench) call(name string, args map[string]any) []byte {
	raw, _ := json.Marshal(args)
	t0 := time.Now()
	res := m.srv.Call(bg, name, raw)
	m.took[name] = append(m.took[name], time.Since(t0))
	if res.IsError {
		m.b.Fatalf("%s: %s", name, res.Content[0].Text)
	}
	return []byte(res.Content[0].Text)
}

func (m *mcpBench) append(i int) {
	m.call("record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("mcp %d", i), "content": "body", "scope": "bench"})
}

func (m *mcpBench) reset() { m.took = map[string][]time.Duration{} }

func (m *mcpBench) cycle(i int) {
	m.append(i)
	var item struct {
		Item struct {
			ID    string
			Claim struct {
				ClaimToken int64 `json:"claim_token"`
			}
		}
	}
	json.Unmarshal(m.call("work_create", map[string]any{"title": fmt.Sprintf("item %d", i), "spec": "s", "spec_format": "f", "actor_human": "bench"}), &item)
	id := item.Item.ID
	json.Unmarshal(m.call("work_claim", map[string]any{"id": id, "actor_human": "bench"}), &item)
	m.call("work_complete", map[string]any{"id": id, "claim_token": item.Item.Claim.ClaimToken, "note": "done"})
	m.call("record_read", map[string]any{})
}

func (m *mcpBench) report(suffix string) {
	for name, ds := range m.took {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		m.b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+suffix+"-ms")
	}
}

func lockHeld(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
