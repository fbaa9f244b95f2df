package main

import (
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func medianOf(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkSync_FinishedTwoCloneSprint: after two clones executed a four
// task sprint through a smart-HTTP remote (TestTeamSprint's script), a
// clone's `git ideate sync` that brings everything of the sprint (items,
// record, execution log, notes, task refs, task branches): each iteration
// times the first sync of a fresh clone of the same smart-HTTP remote,
// and a sync with nothing to do.
//
//	go test ./cmd/git-ideate -run '^$' -bench Sync_FinishedTwoCloneSprint -benchtime 5x
//
// Measured on a loaded 2-core VM: 194 ms for the first sync, 39 ms for one
// with nothing to do.
func BenchmarkSync_FinishedTwoCloneSprint(b *testing.B) {
	bare, a, c := teamSprintRepo(b)
	wa, wc := &worker{t: b, dir: a, who: "alice"}, &worker{t: b, dir: c, who: "bob"}
	wa.run("plan", "import", "--human", "alice")
	wa.run("sync")
	wc.run("sync")
	for {
		ta, _ := wa.take()
		tc, _ := wc.take()
		if ta == "" && tc == "" {
			break
		}
		if ta != "" {
			wa.execute(ta)
		}
		if tc != "" {
			wc.execute(tc)
		}
		wa.run("sync")
		wc.run("sync")
	}
	wa.run("sync")
	url := gt.Git(b, a, "remote", "get-url", "origin") // the smart-HTTP server
	_ = bare
	var first, again []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "-q", url, dir).CombinedOutput(); err != nil {
			b.Fatalf("clone: %v\n%s", err, out)
		}
		b.StartTimer()
		for _, d := range []*[]time.Duration{&first, &again} {
			t0 := time.Now()
			mustOK(b, bin(b, dir, "", "sync"))
			*d = append(*d, time.Since(t0))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(medianOf(first).Microseconds())/1000, "first-sync-ms")
	b.ReportMetric(float64(medianOf(again).Microseconds())/1000, "noop-sync-ms")
}
