package execlog_test

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
)

// countFiles counts the files under .git/objects and .git/refs.
func countFiles(b *testing.B, dir string) int {
	n := 0
	for _, sub := range []string{"objects", "refs"} {
		filepath.WalkDir(filepath.Join(dir, ".git", sub), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		})
	}
	return n
}

// BenchmarkAppendVerdict times one verdict entry with its note on the
// judged commit (the execution log's share of a gate's overhead), in
// process, on a log that already holds `prefill` entries. It reports the
// median per call and the files created per append (new files under
// .git/objects and .git/refs: loose objects and the ref locks that became
// refs, counted after the first append so the format blob and the notes
// ref are not counted).
//
//	go test ./internal/execlog -run '^$' -bench AppendVerdict -benchtime 300x
func BenchmarkAppendVerdict(b *testing.B) {
	dir := gt.NewRepo(b)
	g, err := gitstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	log := execlog.Open(g)
	c := gt.Git(b, dir, "rev-parse", "HEAD")
	tree := gt.Git(b, dir, "rev-parse", "HEAD^{tree}")
	e := execlog.Entry{Actor: "gate", Sprint: 1, Wave: 1, Task: "S1-01/T1", Attempt: 1, Phase: "green", Event: "verdict",
		Result: "PASS", Commit: c, Tree: tree, Base: c,
		Tests: []execlog.TestResult{{ID: "strutil/reverse_test.go::TestReverse_ASCII", Outcome: "PASS"},
			{ID: "strutil/reverse_test.go::TestReverse_Empty", Outcome: "PASS"}}}
	ctx := b.Context()
	if _, err := log.Append(ctx, e); err != nil {
		b.Fatal(err)
	}
	// The record's append beside it, interleaved in one loop on a second
	// repository, so the machine's load weighs on both alike.
	rdir := gt.NewRepo(b)
	rg, err := gitstore.Open(rdir)
	if err != nil {
		b.Fatal(err)
	}
	defer rg.Close()
	rec := record.Open(rg)
	if _, err := rec.Append(ctx, record.AppendInput{Kind: "finding", Claim: "warm"}); err != nil {
		b.Fatal(err)
	}
	before := countFiles(b, dir)
	times := make([]time.Duration, 0, b.N)
	rtimes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := log.Append(ctx, e); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		b.StopTimer()
		t0 = time.Now()
		if _, err := rec.Append(ctx, record.AppendInput{Kind: "finding", Claim: "a finding", Content: "body"}); err != nil {
			b.Fatal(err)
		}
		rtimes = append(rtimes, time.Since(t0))
		b.StartTimer()
	}
	b.StopTimer()
	files := countFiles(b, dir) - before
	med := func(ts []time.Duration) float64 {
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		return float64(ts[len(ts)/2].Microseconds()) / 1000
	}
	m, rm := med(times), med(rtimes)
	b.ReportMetric(m, "median-ms")
	b.ReportMetric(rm, "record-median-ms")
	b.ReportMetric(m/rm, "ratio-to-record")
	b.ReportMetric(float64(files)/float64(b.N), "files/append")
	if !strings.HasPrefix(gt.Git(b, dir, "notes", "--ref=ideate", "show", c), "ideate: green PASS") {
		b.Fatal("no note")
	}
}
