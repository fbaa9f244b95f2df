// Command mcpbench measures the MCP server as a host meets it: one
// long-lived `git-ideate mcp` process on stdio, one request at a time,
// the median per call over many calls.
//
//	go run ./bench/mcpbench
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
)

func main() {
	n := flag.Int("calls", 1000, "calls per figure")
	walkN := flag.Int("walk", 10000, "records for the full-walk figure")
	flag.Parse()
	work, err := os.MkdirTemp("", "mcpbench-")
	benchutil.Must(err)
	defer os.RemoveAll(work)
	bin, err := benchutil.Build(work)
	benchutil.Must(err)
	bin = benchutil.Full(bin) // the plugin runs hooks and the MCP server in the full binary
	repo := filepath.Join(work, "repo")
	benchutil.Must(benchutil.InitRepo(repo))
	c, stop := benchutil.StartMCP(bin, repo)
	defer stop()
	fmt.Printf("mcpbench: %s, one server process, %d calls per figure\n", time.Now().UTC().Format(time.RFC3339), *n)

	// Baseline, same run: what this disk charges for one small file created
	// and renamed into place (a loose object costs one; a record append
	// writes nine objects and one ref lock).
	var files []time.Duration
	fdir := filepath.Join(repo, ".git", "objects", "ff")
	os.MkdirAll(fdir, 0o755)
	for i := 0; i < *n; i++ {
		t0 := time.Now()
		f, err := os.CreateTemp(fdir, "tmp_obj_")
		benchutil.Must(err)
		f.Write([]byte(strings.Repeat("z", 120)))
		f.Close()
		benchutil.Must(os.Rename(f.Name(), filepath.Join(fdir, fmt.Sprintf("bench%06d", i))))
		files = append(files, time.Since(t0))
	}
	os.RemoveAll(fdir)
	fmt.Printf("%-34s %10v   (baseline: one small file created + renamed)\n", "file create+rename", benchutil.Median(files).Round(time.Microsecond))

	body := strings.Repeat("x", 300)
	var app []time.Duration
	for i := 0; i < *n; i++ {
		_, d := c.Tool("record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("mcp claim %d", i), "content": body, "scope": "bench"})
		app = append(app, d)
	}
	fmt.Printf("%-34s %10v\n", "record_append", benchutil.Median(app).Round(time.Microsecond))

	var ids []string
	for i := 0; i < *n; i++ {
		res, _ := c.Tool("work_create", map[string]any{"title": fmt.Sprintf("item %d", i), "spec": "s", "spec_format": "f", "actor_human": "bench"})
		var r struct{ Item struct{ ID string } }
		json.Unmarshal(res, &r)
		ids = append(ids, r.Item.ID)
	}
	var claim, complete []time.Duration
	for _, id := range ids {
		res, d := c.Tool("work_claim", map[string]any{"id": id, "actor_human": "bench"})
		claim = append(claim, d)
		var r struct {
			Item struct {
				Claim struct {
					ClaimToken int64 `json:"claim_token"`
				}
			}
		}
		json.Unmarshal(res, &r)
		_, d = c.Tool("work_complete", map[string]any{"id": id, "claim_token": r.Item.Claim.ClaimToken, "note": "done"})
		complete = append(complete, d)
	}
	fmt.Printf("%-34s %10v\n", "work_claim", benchutil.Median(claim).Round(time.Microsecond))
	fmt.Printf("%-34s %10v   (includes the work-completion record)\n", "work_complete", benchutil.Median(complete).Round(time.Microsecond))

	// Pipelined batches of 20 calls sent before any answer is read: reads
	// only, then appends each followed by a read of its own scope. The
	// figure is the batch's wall time divided by its calls.
	perCall := func(mk func(i int) map[string]any) time.Duration {
		var ds []time.Duration
		for round := 0; round < max(*n/20, 3); round++ {
			batch := make([]map[string]any, 20)
			for i := range batch {
				batch[i] = mk(round*20 + i)
			}
			ds = append(ds, c.Pipeline(batch)/20)
		}
		return benchutil.Median(ds)
	}
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"name": name, "arguments": args}
	}
	rd := perCall(func(int) map[string]any { return call("record_read", map[string]any{"limit": 20}) })
	fmt.Printf("%-34s %10v   (per call, 20 sent at once)\n", "pipelined record_read", rd.Round(time.Microsecond))
	mix := perCall(func(i int) map[string]any {
		scope := fmt.Sprintf("pipe-%d", i/2)
		if i%2 == 0 {
			return call("record_append", map[string]any{"kind": "finding", "claim": "pipelined " + scope, "content": body, "scope": scope})
		}
		return call("record_read", map[string]any{"scope": scope})
	})
	fmt.Printf("%-34s %10v   (per call, 10 appends each followed by a read of its scope, sent at once)\n", "pipelined append+read", mix.Round(time.Microsecond))

	// Full record_read walk over walkN records (fill the rest in-process).
	g, err := gitstore.Open(repo)
	benchutil.Must(err)
	rec := record.Open(g)
	sn, _ := rec.Snapshot()
	have, _ := sn.Count()
	for ; have < *walkN; have++ {
		_, err := rec.Append(context.Background(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("fill %d", have), Content: body})
		benchutil.Must(err)
	}
	g.Close()
	var walks []time.Duration
	pages := 0
	for run := 0; run < 3; run++ {
		t0 := time.Now()
		cursor := ""
		pages = 0
		seen := 0
		for {
			args := map[string]any{}
			if cursor != "" {
				args["cursor"] = cursor
			}
			res, _ := c.Tool("record_read", args)
			var p struct {
				Records    []json.RawMessage `json:"records"`
				NextCursor *string           `json:"next_cursor"`
			}
			benchutil.Must(json.Unmarshal(res, &p))
			pages++
			seen += len(p.Records)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		if seen != have {
			benchutil.Must(fmt.Errorf("walk saw %d of %d records", seen, have))
		}
		walks = append(walks, time.Since(t0))
	}
	fmt.Printf("%-34s %10v   (%d records, %d pages; runs %v)\n", "record_read full walk", benchutil.Median(walks).Round(time.Millisecond), have, pages, walks)
}
