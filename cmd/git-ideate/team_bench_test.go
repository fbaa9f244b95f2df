package main

import (
	"fmt"
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

// BenchmarkTaskStart_RemoteOverLocal: `task start --item` claiming through
// a smart-HTTP remote (ideate.remote set) against the same start on a
// clone of the same repository that claims locally; each iteration starts
// and releases once on each, in turns, so both see the same machine.
// Reports the medians and their ratio (remote ÷ local):
//
//	go test ./cmd/git-ideate -run '^$' -bench TaskStart_RemoteOverLocal -benchtime 20x
//
// The claim adds one leased push to the start: measured on a loaded 2-core
// VM, remote 197 ms, local 50 ms (3.95×), the claim's share 1.13× a plain
// push of one new commit (130 ms).
func BenchmarkTaskStart_RemoteOverLocal(b *testing.B) {
	_, remote, local := teamRemote(b, true)
	gt.Git(b, local, "config", "--unset", "ideate.remote")
	ids := map[string]string{}
	ids[remote] = teamItems(b, remote, local, 1)[0]
	ids[local] = ids[remote]
	var took [2][]time.Duration
	var push []time.Duration
	tree := gt.Git(b, remote, "rev-parse", "HEAD^{tree}")
	old := ""
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The floor: one plain leased push of one ref to the same remote,
		// carrying one new commit (a claim carries one too).
		b.StopTimer()
		args := []string{"commit-tree", tree, "-m", fmt.Sprintf("push %d", i)}
		if old != "" {
			args = append(args, "-p", old)
		}
		next := gt.Git(b, remote, args...)
		b.StartTimer()
		cmd := exec.Command("git", "push", "-q", "--force-with-lease=refs/ideate/bench:"+old, "origin", next+":refs/ideate/bench")
		cmd.Dir = remote
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("plain push: %v\n%s", err, out)
		}
		push = append(push, time.Since(t0))
		old = next
		for k, dir := range []string{remote, local} {
			cmd := ideateCmd(dir, "task", "start", "S1-01/T1", "--item", ids[dir], "--human", "alice", "--scope", "x/**")
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			took[k] = append(took[k], time.Since(t0))
			if err != nil {
				b.Fatalf("task start: %v\n%s", err, out)
			}
			b.StopTimer()
			mustOK(b, bin(b, dir, "", "task", "release", "S1-01/T1"))
			b.StartTimer()
		}
	}
	b.StopTimer()
	r, l := medianOf(took[0]), medianOf(took[1])
	b.ReportMetric(float64(r.Microseconds())/1000, "remote-ms")
	b.ReportMetric(float64(l.Microseconds())/1000, "local-ms")
	b.ReportMetric(float64(r)/float64(l), "remote/local")
	p := medianOf(push)
	b.ReportMetric(float64(p.Microseconds())/1000, "plain-push-ms")
	b.ReportMetric(float64(r-l)/float64(p), "claim-cost/plain-push")
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
