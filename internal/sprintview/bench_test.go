package sprintview_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/sprintview"
	"github.com/ideate/git-ideate/internal/worktree"
)

func TestMain(m *testing.M) { proctest.Main(m, serverMain) }

// depsOf opens the pages' handles on the repository at dir.
func depsOf(g *gitstore.Store, dir string) sprintview.Deps {
	x := execlog.Open(g)
	rec := record.Open(g)
	load := func(ctx context.Context) (*plan.Sprint, error) {
		return plan.Load(ctx, os.DirFS(dir), plan.Options{})
	}
	return sprintview.Deps{Plan: load, Exec: x, Board: board.Open(g, rec), Record: rec,
		Revision: revision.Deps{Tasks: worktree.Open(g), Exec: x, Plan: load}, Refs: sprintview.RefsOf(g)}
}

// serverMain is a child process serving SPRINTVIEW_DIR, so that its memory
// is the server's alone: it prints its address, serves until killed.
func serverMain(role string) int {
	dir := os.Getenv("SPRINTVIEW_DIR")
	g, err := gitstore.Open(dir)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	s, err := sprintview.New(depsOf(g, dir))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(ln.Addr())
	http.Serve(ln, s)
	return 0
}

// bigSprint is a repository with 10,000 records, 2,000 board items and a
// sprint of 100 tasks, each with a RED PASS and a GREEN verdict on the log
// (a third of them FAIL first, then PASS).
func bigSprint(b *testing.B) string {
	b.Helper()
	dir := gt.NewRepo(b)
	if err := plantest.Generate(dir, plantest.Shape{Stories: 25, TasksPerStory: 4, TestsPerTask: 2}); err != nil {
		b.Fatal(err)
	}
	gt.Git(b, dir, "add", "-A")
	gt.Git(b, dir, "commit", "-qm", "plan")
	g, err := gitstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	rec := record.Open(g)
	for i := 0; i < 10000; i++ {
		if _, err := rec.Append(ctx, record.AppendInput{Kind: []string{"finding", "decision", "note"}[i%3], Claim: fmt.Sprintf("fill %d", i),
			Scope: fmt.Sprintf("scope-%d", i%7), Content: strings.Repeat("x", 300)}); err != nil {
			b.Fatal(err)
		}
	}
	bd := board.Open(g, rec)
	for i := 0; i < 2000; i++ {
		if _, err := bd.Create(ctx, board.CreateInput{Title: fmt.Sprintf("item %d", i), Spec: "spec", SpecFormat: "plan/outline", CreatedBy: board.Actor{Human: "bench"}}); err != nil {
			b.Fatal(err)
		}
	}
	sp, err := plan.Load(ctx, os.DirFS(dir), plan.Options{})
	if err != nil {
		b.Fatal(err)
	}
	x := execlog.Open(g)
	head := gt.Git(b, dir, "rev-parse", "HEAD")
	n := 0
	for _, sd := range sp.StoryDirs {
		for _, t := range sd.Tasks.Tasks {
			task := sd.Story + "/" + t.ID
			log := func(attempt int, phase, result string) {
				if _, err := x.Append(ctx, execlog.Entry{Sprint: 1, Task: task, Attempt: attempt, Phase: phase, Event: execlog.EventVerdict, Result: result, Commit: head}); err != nil {
					b.Fatal(err)
				}
			}
			log(1, "red", "PASS")
			if n%3 == 0 {
				log(1, "green", "FAIL")
				log(2, "green", "PASS")
			} else {
				log(1, "green", "PASS")
			}
			n++
		}
	}
	if n != 100 {
		b.Fatalf("the generated sprint has %d tasks", n)
	}
	// The fixture writes with the store's maintenance off (as tests run
	// it), leaving one pack per write; a repository in use has its packs
	// rolled up. SPRINTVIEW_BENCH_NOREPACK=1 measures the unmerged packs
	// (12,468 of them: 172 MiB peak, first byte 8.8 ms, on 2026-12-05).
	if os.Getenv("SPRINTVIEW_BENCH_NOREPACK") == "" {
		gt.Git(b, dir, "repack", "-adq")
	}
	b.Logf("packs: %s", strings.TrimSpace(gt.Git(b, dir, "count-objects", "-v")))
	return dir
}

// BenchmarkServe_SprintPage reports, against a server in its own process
// over a 10k-record, 2k-item, 100-task repository: the sprint page's time
// to first byte and full load (page, style sheet, script), and the
// server's peak RSS after every view was served.
func BenchmarkServe_SprintPage(b *testing.B) {
	dir := bigSprint(b)
	p := proctest.Start(b, proctest.Spec{Role: "serve", Env: []string{"SPRINTVIEW_DIR=" + dir}})
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out := p.Output(); strings.Contains(out, "\n") {
			addr = strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
		}
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		b.Fatalf("server said %q", p.Output())
	}
	base := "http://" + addr
	fetch := func(path string) (first, all time.Duration) {
		start := time.Now()
		resp, err := http.Get(base + path)
		if err != nil {
			b.Fatal(err)
		}
		first = time.Since(start)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return first, time.Since(start)
	}
	b.Logf("server started: peak RSS %.1f MiB", float64(peakRSS(b, p.Pid()))/(1<<20))
	for _, path := range []string{"/", "/task?id=S1-01/T1", "/escalations", "/board", "/records"} {
		fetch(path)
		b.Logf("after %s: peak RSS %.1f MiB", path, float64(peakRSS(b, p.Pid()))/(1<<20))
	}
	var firsts, loads []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		first, page := fetch("/")
		_, css := fetch("/assets/style.css")
		_, js := fetch("/assets/live.js")
		firsts = append(firsts, first)
		loads = append(loads, page+css+js)
	}
	b.StopTimer()
	b.ReportMetric(float64(median(firsts).Microseconds())/1000, "ms-first-byte")
	b.ReportMetric(float64(median(loads).Microseconds())/1000, "ms-full-load")
	b.ReportMetric(float64(peakRSS(b, p.Pid()))/(1<<20), "MiB-peak-rss")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// peakRSS is VmHWM of pid, in bytes.
func peakRSS(b *testing.B, pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmHWM")
	return 0
}
