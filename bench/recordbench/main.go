// Command recordbench measures the process record through the CLI, the way
// a user or a hook meets it: a fresh git-ideate process per call. It fills
// a scratch repository with records arriving in one burst (through the
// library, with the tool's own maintenance on), and at each size reports
// medians of the CLI calls beside `git rev-parse HEAD` in the same run, so
// a noisy machine shows up in both.
//
//	go run ./bench/recordbench                    # 1k, 10k, 100k
//	go run ./bench/recordbench -sizes 1000,10000  # quicker
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
)

func main() {
	sizes := flag.String("sizes", "1000,10000,100000", "record counts to measure at")
	calls := flag.Int("calls", 200, "CLI calls per figure")
	walkAt := flag.Int("walk-at", 10000, "size at which to time full cursor walks")
	keep := flag.Bool("keep", false, "keep the scratch repository")
	flag.Parse()

	work, err := os.MkdirTemp("", "recordbench-")
	benchutil.Must(err)
	if !*keep {
		defer os.RemoveAll(work)
	}
	bin, err := benchutil.Build(work)
	benchutil.Must(err)
	repo := filepath.Join(work, "repo")
	benchutil.Must(benchutil.InitRepo(repo))
	git, err := gitstore.Open(repo)
	benchutil.Must(err)
	rec := record.Open(git)
	body := strings.Repeat("The lockfile CAS held under contention; ", 8)[:300]
	have := 0
	fmt.Printf("recordbench: %s, records of ~%d-byte bodies, %d calls per figure\n", time.Now().UTC().Format(time.RFC3339), len(body), *calls)
	fmt.Printf("%-8s %-40s %10s %10s %8s\n", "records", "figure", "median", "cpu", "ratio")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(f)
		benchutil.Must(err)
		t0 := time.Now()
		for have < n {
			_, err := rec.Append(context.Background(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("bench claim %d", have),
				Scope: fmt.Sprintf("bench/scope-%d", have%7), VerificationAnchor: fmt.Sprintf("test:%d", have),
				Source: record.Source{CapturePoint: "bench", SessionID: "bench"}, Content: body})
			benchutil.Must(err)
			have++
		}
		fill := time.Since(t0)

		// Interleave the baseline with the measured call so both see the same load.
		var base, app, read []benchutil.Sample
		for i := 0; i < *calls; i++ {
			s, _, err := benchutil.Run(repo, "git", "rev-parse", "HEAD")
			benchutil.Must(err)
			base = append(base, s)
			s, _, err = benchutil.Run(repo, bin, "record", "append", "--kind", "finding", "--claim", fmt.Sprintf("cli claim %d", i),
				"--scope", fmt.Sprintf("bench/scope-%d", i%7), "--anchor", fmt.Sprintf("test:%d", i), "--content", body)
			benchutil.Must(err)
			app = append(app, s)
			have++
			if i < *calls/2 {
				s, _, err = benchutil.Run(repo, bin, "record", "read", "--json")
				benchutil.Must(err)
				read = append(read, s)
			}
		}
		b := benchutil.Summarize(base)
		benchutil.Row(n, "git rev-parse HEAD (baseline)", b, b)
		benchutil.Row(n, "record append", benchutil.Summarize(app), b)
		benchutil.Row(n, "record read --json (first page)", benchutil.Summarize(read), b)
		rssA, err := benchutil.PeakRSS(repo, bin, "record", "append", "--kind", "finding", "--claim", "rss probe", "--content", body)
		benchutil.Must(err)
		rssR, err := benchutil.PeakRSS(repo, bin, "record", "read", "--json")
		benchutil.Must(err)
		fmt.Printf("%-8d %-40s   append %d KiB, read --json %d KiB\n", n, "peak RSS", rssA, rssR)
		have++

		if n == *walkAt {
			var walks []time.Duration
			pages := 0
			for run := 0; run < 3; run++ {
				t0 := time.Now()
				cursor := ""
				pages = 0
				for {
					args := []string{"record", "read", "--json"}
					if cursor != "" {
						args = append(args, "--cursor", cursor)
					}
					_, out, err := benchutil.Run(repo, bin, args...)
					benchutil.Must(err)
					pages++
					var page struct {
						NextCursor *string `json:"next_cursor"`
					}
					benchutil.Must(json.Unmarshal(out, &page))
					if page.NextCursor == nil {
						break
					}
					cursor = *page.NextCursor
				}
				walks = append(walks, time.Since(t0))
			}
			fmt.Printf("%-8d %-40s %10v   (%d pages; runs %v)\n", n, "full cursor walk (CLI)", benchutil.Median(walks).Round(time.Millisecond), pages, walks)
		}

		// Storage: the records' raw bytes against .git after maintenance.
		raw := int64(0)
		sn, err := rec.Snapshot()
		benchutil.Must(err)
		benchutil.Must(sn.WalkIDs("", func(id string, blob gitstore.Hash) (bool, error) {
			data, err := git.ReadBlob(blob)
			raw += int64(len(data))
			return true, err
		}))
		dotgit := dirSize(filepath.Join(repo, ".git"))
		loose := gitLoose(repo)
		fmt.Printf("%-8d %-40s %10s   .git %s, raw %s, ratio %.2f, %s; fill %v (%.0f appends/s in-process)\n", n, "storage", "",
			mib(dotgit), mib(raw), float64(dotgit)/float64(raw), loose, fill.Round(time.Second), float64(n-(have-n))/fill.Seconds())
	}
}

func dirSize(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func gitLoose(repo string) string {
	out, _ := exec.Command("git", "-C", repo, "count-objects", "-v").Output()
	fields := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		fields[k] = v
	}
	return fmt.Sprintf("%s loose, %s packs", fields["count"], fields["packs"])
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
