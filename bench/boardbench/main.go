// Command boardbench measures the delegation board through the CLI: claim
// and complete per call on a 1k-item board, an 8-process × 100-item claim
// race, and list/get on a 10k-item board, each beside `git rev-parse HEAD`
// in the same run.
//
//	go run ./bench/boardbench
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/board"
)

// spec is an item's spec on these boards: 200 bytes.
var spec = strings.Repeat("spec ", 40)

func main() {
	calls := flag.Int("calls", 200, "CLI calls per figure")
	big := flag.Int("big", 10000, "items on the large board")
	flag.Parse()
	work, err := os.MkdirTemp("", "boardbench-")
	benchutil.Must(err)
	defer os.RemoveAll(work)
	bin, err := benchutil.Build(work)
	benchutil.Must(err)
	fmt.Printf("boardbench: %s, %d calls per figure\n", time.Now().UTC().Format(time.RFC3339), *calls)
	fmt.Printf("%-8s %-40s %10s %10s %8s\n", "items", "figure", "median", "cpu", "ratio")

	// 1. claim / complete per CLI call on a 1k-item board.
	repo := filepath.Join(work, "small")
	benchutil.Must(benchutil.InitRepo(repo))
	ids := benchutil.CreateItems(repo, 1000, spec)
	var base, claim, complete []benchutil.Sample
	for i := 0; i < *calls && i < len(ids); i++ {
		s, _, err := benchutil.Run(repo, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		base = append(base, s)
		s, out, err := benchutil.Run(repo, bin, "work", "claim", "--id", ids[i], "--human", "bench", "--agent", "w/1")
		benchutil.Must(err)
		claim = append(claim, s)
		var it board.Item
		benchutil.Must(json.Unmarshal(out, &it))
		s, _, err = benchutil.Run(repo, bin, "work", "complete", "--id", ids[i], "--token", fmt.Sprint(it.Claim.ClaimToken), "--note", "done")
		benchutil.Must(err)
		complete = append(complete, s)
	}
	b := benchutil.Summarize(base)
	benchutil.Row(1000, "git rev-parse HEAD (baseline)", b, b)
	benchutil.Row(1000, "work claim", benchutil.Summarize(claim), b)
	benchutil.Row(1000, "work complete (+ completion record)", benchutil.Summarize(complete), b)
	rss, err := benchutil.PeakRSS(repo, bin, "work", "claim", "--id", ids[len(ids)-1], "--human", "rss")
	benchutil.Must(err)
	fmt.Printf("%-8d %-40s %10s\n", 1000, "peak RSS of one claim", fmt.Sprintf("%d KiB", rss))

	// 2. 8 processes × the same 100 items, through the CLI.
	race := filepath.Join(work, "race")
	benchutil.Must(benchutil.InitRepo(race))
	rids := benchutil.CreateItems(race, 100, spec)
	var runs []time.Duration
	for run := 0; run < 3; run++ {
		if run > 0 {
			race = filepath.Join(work, fmt.Sprintf("race%d", run))
			benchutil.Must(benchutil.InitRepo(race))
			rids = benchutil.CreateItems(race, 100, spec)
		}
		var wg sync.WaitGroup
		wins := make([]int, 8)
		t0 := time.Now()
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for _, id := range rids {
					cmd := exec.Command(bin, "work", "claim", "--id", id, "--human", fmt.Sprintf("w%d", w))
					cmd.Dir = race
					if cmd.Run() == nil {
						wins[w]++
					}
				}
			}(w)
		}
		wg.Wait()
		runs = append(runs, time.Since(t0))
		total := 0
		for _, n := range wins {
			total += n
		}
		if total != 100 {
			benchutil.Must(fmt.Errorf("race run %d: %d wins, want 100", run, total))
		}
	}
	fmt.Printf("%-8d %-40s %10v   (800 CLI claims, 100 wins each run; runs %v)\n", 100, "8 processes x 100 items claim race", benchutil.Median(runs).Round(time.Millisecond), runs)

	// 3. list and get on a large board.
	large := filepath.Join(work, "large")
	benchutil.Must(benchutil.InitRepo(large))
	t0 := time.Now()
	lids := benchutil.CreateItems(large, *big, spec)
	fillTime := time.Since(t0)
	exec.Command("git", "-C", large, "pack-refs", "--all").Run()
	benchutil.Run(large, bin, "work", "list", "--json") // builds the index once
	var lbase, list, get []benchutil.Sample
	for i := 0; i < *calls/2; i++ {
		s, _, err := benchutil.Run(large, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		lbase = append(lbase, s)
		s, _, err = benchutil.Run(large, bin, "work", "list", "--json")
		benchutil.Must(err)
		list = append(list, s)
		s, _, err = benchutil.Run(large, bin, "work", "get", "--id", lids[(i*7919)%len(lids)])
		benchutil.Must(err)
		get = append(get, s)
	}
	lb := benchutil.Summarize(lbase)
	benchutil.Row(*big, "git rev-parse HEAD (baseline)", lb, lb)
	benchutil.Row(*big, "work list --json (first page, sweep)", benchutil.Summarize(list), lb)
	benchutil.Row(*big, "work get", benchutil.Summarize(get), lb)
	fmt.Printf("%-8d %-40s %10v   (%.0f creates/s in-process)\n", *big, "fill", fillTime.Round(time.Second), float64(*big)/fillTime.Seconds())
}
