// Command cliab compares the CLI writes of two git-ideate binaries on one
// repository. Each round runs `git rev-parse HEAD`, then a record append
// by each binary, then a claim of a fresh item by each, the binaries
// taking turns at going first: both meet the same store, the same file
// system and a machine that slows down or speeds up alike. (On this 2-core
// machine the file system's state alone moved a CLI write by a third
// between two runs of one binary; see docs/ARCHITECTURE.md.)
//
// It prints each figure's median wall and CPU time, its ratio to
// rev-parse, and B ÷ A.
//
//	go run ./bench/cliab -a OLD_BINARY [-b NEW_BINARY] [-calls 300] [-records 2000]
//
// Without -b, B is the working tree, built into the scratch directory.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
)

func main() {
	a := flag.String("a", "", "the first binary (required)")
	b := flag.String("b", "", "the second binary (default: the working tree, built)")
	calls := flag.Int("calls", 300, "measured rounds")
	records := flag.Int("records", 2000, "records in the store before the rounds")
	flag.Parse()
	work, bin := benchutil.ABSetup("cliab", *a, *b)
	defer os.RemoveAll(work)
	*b = bin
	repo := filepath.Join(work, "repo")
	benchutil.Must(benchutil.InitRepo(repo))
	fmt.Printf("cliab: %s, repository %s on %s\n", time.Now().UTC().Format(time.RFC3339), repo, benchutil.FileSystem(work))
	ids := benchutil.CreateItems(repo, 2**calls, "spec")
	benchutil.FillRecords(repo, *records)

	bins := []string{*a, *b}
	var base []benchutil.Sample
	app := [2][]benchutil.Sample{}
	claim := [2][]benchutil.Sample{}
	run := func(bin string, args ...string) benchutil.Sample {
		s, _, err := benchutil.Run(repo, bin, args...)
		benchutil.Must(err)
		return s
	}
	for i := 0; i < *calls; i++ {
		base = append(base, run("git", "rev-parse", "HEAD"))
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, k := range order {
			app[k] = append(app[k], run(bins[k], "record", "append", "--kind", "finding", "--claim", fmt.Sprintf("ab %d", i), "--content", benchutil.RecordBody))
		}
		for _, k := range order {
			claim[k] = append(claim[k], run(bins[k], "work", "claim", "--id", ids[2*i+k], "--human", "bench"))
		}
	}
	bs := benchutil.Summarize(base)
	fmt.Printf("%-24s %10s %10s %8s %8s   (%d rounds, %d records, %d items)\n", "median", "wall", "cpu", "÷ rev", "B ÷ A", *calls, *records, len(ids))
	fmt.Printf("%-24s %10v %10v %8.2f\n", "git rev-parse HEAD", bs.Wall.Round(10*time.Microsecond), bs.CPU.Round(10*time.Microsecond), 1.0)
	for _, fig := range []struct {
		name string
		s    [2][]benchutil.Sample
	}{{"record append", app}, {"work claim", claim}} {
		sa, sb := benchutil.Summarize(fig.s[0]), benchutil.Summarize(fig.s[1])
		for k, st := range []benchutil.Stats{sa, sb} {
			ab := ""
			if k == 1 {
				ab = fmt.Sprintf("%8.2f", float64(sb.Wall)/float64(sa.Wall))
			}
			fmt.Printf("%-24s %10v %10v %8.2f %s\n", fig.name+" "+"AB"[k:k+1], st.Wall.Round(10*time.Microsecond), st.CPU.Round(10*time.Microsecond),
				float64(st.Wall)/float64(bs.Wall), ab)
		}
	}
}
