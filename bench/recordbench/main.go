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
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/gitstore"
	"github.com/ideate/git-ideate/record"
)

type sample struct {
	wall time.Duration
	cpu  time.Duration
	rss  int64 // KiB
}

func runOnce(dir, bin string, args ...string) (sample, []byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil {
		return sample{}, out, fmt.Errorf("%s %v: %w", bin, args, err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall: wall, cpu: cpu, rss: ru.Maxrss}, out, nil
}

func median(xs []time.Duration) time.Duration {
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

type stats struct {
	wall, cpu time.Duration
	rss       int64
}

func summarize(ss []sample) stats {
	var w, c []time.Duration
	var rss int64
	for _, s := range ss {
		w, c = append(w, s.wall), append(c, s.cpu)
		if s.rss > rss {
			rss = s.rss
		}
	}
	return stats{median(w), median(c), rss}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordbench:", err)
		os.Exit(1)
	}
}

func main() {
	sizes := flag.String("sizes", "1000,10000,100000", "record counts to measure at")
	calls := flag.Int("calls", 200, "CLI calls per figure")
	walkAt := flag.Int("walk-at", 10000, "size at which to time full cursor walks")
	keep := flag.Bool("keep", false, "keep the scratch repository")
	flag.Parse()

	work, err := os.MkdirTemp("", "recordbench-")
	must(err)
	if !*keep {
		defer os.RemoveAll(work)
	}
	bin := filepath.Join(work, "git-ideate")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/git-ideate").CombinedOutput()
	if err != nil {
		must(fmt.Errorf("build: %v\n%s", err, out))
	}
	repo := filepath.Join(work, "repo")
	for _, args := range [][]string{{"init", "-q", repo}, {"-C", repo, "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			must(fmt.Errorf("git %v: %v %s", args, err, out))
		}
	}
	git, err := gitstore.Open(repo)
	must(err)
	rec := record.Open(git)
	body := strings.Repeat("The lockfile CAS held under contention; ", 8)[:300]
	have := 0
	fmt.Printf("recordbench: %s, records of ~%d-byte bodies, %d calls per figure\n", time.Now().UTC().Format(time.RFC3339), len(body), *calls)
	fmt.Printf("%-8s %-34s %10s %10s %9s %8s\n", "records", "figure", "median", "cpu", "maxrss", "ratio")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(f)
		must(err)
		t0 := time.Now()
		for have < n {
			_, err := rec.Append(record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("bench claim %d", have),
				Scope: fmt.Sprintf("bench/scope-%d", have%7), VerificationAnchor: fmt.Sprintf("test:%d", have),
				Source: record.Source{CapturePoint: "bench", SessionID: "bench"}, Content: body})
			must(err)
			have++
		}
		fill := time.Since(t0)

		// Interleave the baseline with the measured call so both see the same load.
		var base, app, read []sample
		for i := 0; i < *calls; i++ {
			s, _, err := runOnce(repo, "git", "rev-parse", "HEAD")
			must(err)
			base = append(base, s)
			s, _, err = runOnce(repo, bin, "record", "append", "--kind", "finding", "--claim", fmt.Sprintf("cli claim %d", i),
				"--scope", fmt.Sprintf("bench/scope-%d", i%7), "--anchor", fmt.Sprintf("test:%d", i), "--content", body)
			must(err)
			app = append(app, s)
			have++
			if i < *calls/2 {
				s, _, err = runOnce(repo, bin, "record", "read", "--json")
				must(err)
				read = append(read, s)
			}
		}
		b, a, r := summarize(base), summarize(app), summarize(read)
		fmt.Printf("%-8d %-34s %10v %10v %8dK %8s\n", n, "git rev-parse HEAD (baseline)", b.wall.Round(10*time.Microsecond), b.cpu.Round(10*time.Microsecond), b.rss, "1.00")
		fmt.Printf("%-8d %-34s %10v %10v %8dK %8.2f\n", n, "record append", a.wall.Round(10*time.Microsecond), a.cpu.Round(10*time.Microsecond), a.rss, float64(a.wall)/float64(b.wall))
		fmt.Printf("%-8d %-34s %10v %10v %8dK %8.2f\n", n, "record read --json (first page)", r.wall.Round(10*time.Microsecond), r.cpu.Round(10*time.Microsecond), r.rss, float64(r.wall)/float64(b.wall))

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
					_, out, err := runOnce(repo, bin, args...)
					must(err)
					pages++
					var page struct {
						NextCursor *string `json:"next_cursor"`
					}
					must(json.Unmarshal(out, &page))
					if page.NextCursor == nil {
						break
					}
					cursor = *page.NextCursor
				}
				walks = append(walks, time.Since(t0))
			}
			fmt.Printf("%-8d %-34s %10v %10s %9s %8s   (%d pages; runs %v)\n", n, "full cursor walk (CLI)", median(walks).Round(time.Millisecond), "", "", "", pages, walks)
		}

		// Storage: the records' raw bytes against .git after maintenance.
		raw := int64(0)
		sn, err := rec.Snapshot()
		must(err)
		must(sn.WalkIDs("", func(id string, blob gitstore.Hash) (bool, error) {
			data, err := git.ReadBlob(blob)
			raw += int64(len(data))
			return true, err
		}))
		dotgit := dirSize(filepath.Join(repo, ".git"))
		loose := gitLoose(repo)
		fmt.Printf("%-8d %-34s %10s   .git %s, raw %s, ratio %.2f, %s; fill %v (%.0f appends/s in-process)\n", n, "storage", "",
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
