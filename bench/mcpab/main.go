// Command mcpab compares the MCP servers of two git-ideate binaries call
// by call. Each binary serves a repository of its own, made alike side by
// side in one directory; the client runs a cycle of calls (record_append,
// work_create, work_claim, work_complete) on one server, then the same
// cycle on the other, and switches which goes first every cycle, so a
// machine that slows down or speeds up meets both alike. On this 2-core
// machine two runs of one binary differ by more than most changes gain;
// two binaries in one run do not (see -a X -b X for the noise).
//
// It prints each tool's median for A and B, and B ÷ A.
//
//	go run ./bench/mcpab -a OLD_BINARY [-b NEW_BINARY] [-cycles 1000] [-seed 500] [-gap 0]
//
// Without -b, B is the working tree, built into the scratch directory.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
)

var tools = []string{"record_append", "work_create", "work_claim", "work_complete"}

// side is one binary's server and its timings.
type side struct {
	name string
	c    *benchutil.MCP
	took map[string][]time.Duration
}

// cycle appends a record, and creates, claims and completes an item.
func (s *side) cycle(i int, measure bool) {
	add := func(tool string, d time.Duration) {
		if measure {
			s.took[tool] = append(s.took[tool], d)
		}
	}
	_, d := s.c.Tool("record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("ab %d", i), "content": "body", "scope": "bench"})
	add("record_append", d)
	res, d := s.c.Tool("work_create", map[string]any{"title": fmt.Sprintf("item %d", i), "spec": "s", "spec_format": "f", "actor_human": "bench"})
	add("work_create", d)
	var it struct{ Item struct{ ID string } }
	benchutil.Must(json.Unmarshal(res, &it))
	res, d = s.c.Tool("work_claim", map[string]any{"id": it.Item.ID, "actor_human": "bench"})
	add("work_claim", d)
	var cl struct {
		Item struct {
			Claim struct {
				ClaimToken int64 `json:"claim_token"`
			}
		}
	}
	benchutil.Must(json.Unmarshal(res, &cl))
	_, d = s.c.Tool("work_complete", map[string]any{"id": it.Item.ID, "claim_token": cl.Item.Claim.ClaimToken, "note": "done"})
	add("work_complete", d)
}

func main() {
	a := flag.String("a", "", "the first binary (required)")
	b := flag.String("b", "", "the second binary (default: the working tree, built)")
	cycles := flag.Int("cycles", 1000, "measured cycles per binary")
	seed := flag.Int("seed", 500, "cycles per binary before measuring")
	gap := flag.Duration("gap", 0, "the pause before each cycle")
	flag.Parse()
	work, bin := benchutil.ABSetup("mcpab", *a, *b)
	defer os.RemoveAll(work)
	*b = bin
	fmt.Printf("mcpab: %s, repositories under %s on %s\n", time.Now().UTC().Format(time.RFC3339), work, benchutil.FileSystem(work))
	var sides []*side
	for _, bin := range []struct{ name, path string }{{"A", *a}, {"B", *b}} {
		repo := filepath.Join(work, bin.name)
		benchutil.Must(benchutil.InitRepo(repo))
		c, stop := benchutil.StartMCP(bin.path, repo)
		defer stop()
		sides = append(sides, &side{name: bin.name, c: c, took: map[string][]time.Duration{}})
	}
	for i := 0; i < *seed+*cycles; i++ {
		order := sides
		if i%2 == 1 {
			order = []*side{sides[1], sides[0]}
		}
		for _, s := range order {
			if *gap > 0 {
				time.Sleep(*gap)
			}
			s.cycle(i, i >= *seed)
		}
	}
	fmt.Printf("%-16s %10s %10s %8s   (%d cycles each, after %d, %v between)\n", "median", "A", "B", "B ÷ A", *cycles, *seed, *gap)
	for _, t := range tools {
		ma, mb := benchutil.Median(sides[0].took[t]), benchutil.Median(sides[1].took[t])
		fmt.Printf("%-16s %10v %10v %8.2f\n", t, ma.Round(time.Microsecond), mb.Round(time.Microsecond), float64(mb)/float64(ma))
	}
}
