package record_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/record"
)

// BenchmarkReadPage10k is the MCP server's record_read of the first page:
// one long-lived Store over a record of 10,000 records (a few
// of them with references), the tip moved by an append before each read,
// maintenance on. It reports the median and p90 of the reads alone:
//
//	go test ./internal/record -run '^$' -bench ReadPage10k -benchtime 400x -cpuprofile cpu.out
//
// The fill takes minutes (Append in process);
// IDEATE_BENCH_REPO=/some/dir keeps the filled repository there and reuses
// it on the next run. IDEATE_BENCH_RECORDS changes the size.
func BenchmarkReadPage10k(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("IDEATE_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	dir := os.Getenv("IDEATE_BENCH_REPO")
	if dir == "" {
		dir = gt.NewRepo(b)
	} else {
		gt.Isolate(b)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
			if err := os.MkdirAll(dir, 0o777); err != nil {
				b.Fatal(err)
			}
			gt.Git(b, dir, "init", "-q")
			gt.Git(b, dir, "commit", "-q", "--allow-empty", "-m", "init")
		}
	}
	b.Setenv("GIT_IDEATE_NO_MAINTENANCE", "") // as a user's server runs: roll-ups on
	b.Cleanup(func() {                        // a background roll-up still writing into the directory
		for i := 0; i < 300 && exists(filepath.Join(dir, ".git", "ideate", "maintenance.lock")); i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	g, err := gitstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	s := record.Open(g)
	ctx := context.Background()
	var ids []string
	appendOne := func(i int) {
		in := record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("fill %d", i), Scope: fmt.Sprintf("bench/scope-%d", i%7),
			Source: record.Source{CapturePoint: "bench", SessionID: "bench"}, Content: strings.Repeat("The lockfile CAS held; ", 13)}
		if i%10 == 9 && len(ids) > 40 {
			in.References = []record.Reference{{Rel: "relates", ID: ids[len(ids)-1-i%40]}}
		}
		res, err := s.Append(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, res.Record.ID)
	}
	sn, err := s.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	have, err := sn.Count()
	if err != nil {
		b.Fatal(err)
	}
	sn.WalkIDs("", func(id string, _ gitstore.Hash) (bool, error) { ids = append(ids, id); return len(ids) < 100, nil })
	sort.Strings(ids)
	for i := have; i < n; i++ {
		appendOne(i)
	}
	read := func() {
		p, err := s.ReadPage(record.PageRequest{Measure: paging.CompactLen})
		if err != nil || len(p.Rows) == 0 {
			b.Fatal(err, len(p.Rows))
		}
	}
	read() // the first read of a process builds or loads the edge index
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		appendOne(n + i)
		b.StartTimer()
		t0 := time.Now()
		read()
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
