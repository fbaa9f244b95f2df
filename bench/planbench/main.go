// Command planbench times `git ideate plan check` on a generated sprint
// (20 stories, 100 tasks, 300 tests by default): in process (Load + Check)
// and through the built binary, beside `git rev-parse HEAD` as a baseline
// process, interleaved call by call so a loaded machine shows in both.
// It prints medians of wall and CPU time and the ratio to the baseline.
//
//	go run ./bench/planbench
//	go run ./bench/planbench -stories 40 -tasks 5 -calls 50
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	stories := flag.Int("stories", 20, "stories in the sprint")
	tasks := flag.Int("tasks", 5, "tasks per story")
	tests := flag.Int("tests", 3, "tests per task")
	calls := flag.Int("calls", 30, "calls per figure")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "planbench-")
	benchutil.Must(err)
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "repo")
	benchutil.Must(benchutil.InitRepo(repo))
	benchutil.Must(plantest.Generate(repo, plantest.Shape{Stories: *stories, TasksPerStory: *tasks, TestsPerTask: *tests}))
	bin, err := benchutil.Build(tmp)
	benchutil.Must(err)

	s, err := plan.LoadDir(context.Background(), repo, plan.Options{})
	benchutil.Must(err)
	if fs := plan.Check(s); len(fs) != 0 {
		benchutil.Must(fmt.Errorf("the generated sprint has %d findings, first %+v", len(fs), fs[0]))
	}
	sum := s.Summary()
	fmt.Printf("planbench: %d stories, %d tasks, %d tests, %d waves, %d files; %d calls per figure\n", sum.Stories, sum.Tasks, sum.Tests, sum.Waves, len(s.Files), *calls)

	var inproc, binary, base []benchutil.Sample
	for i := 0; i < *calls; i++ {
		c0, t0 := cpuNow(), time.Now()
		s, err := plan.LoadDir(context.Background(), repo, plan.Options{})
		benchutil.Must(err)
		if fs := plan.Check(s); len(fs) != 0 {
			benchutil.Must(fmt.Errorf("findings"))
		}
		inproc = append(inproc, benchutil.Sample{Wall: time.Since(t0), CPU: cpuNow() - c0})

		sm, out, err := benchutil.Run(repo, bin, "plan", "check")
		benchutil.Must(err)
		if len(out) < 4 || string(out[:4]) != "PASS" {
			benchutil.Must(fmt.Errorf("plan check printed %q", out))
		}
		binary = append(binary, sm)

		sm, _, err = benchutil.Run(repo, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		base = append(base, sm)
	}
	b := benchutil.Summarize(base)
	fmt.Printf("%-8s %-40s %10s %10s %8s\n", "calls", "figure", "wall", "cpu", "÷ base")
	benchutil.Row(*calls, "git rev-parse HEAD (baseline)", b, b)
	benchutil.Row(*calls, "plan Load+Check in process", benchutil.Summarize(inproc), b)
	benchutil.Row(*calls, "git-ideate plan check (process)", benchutil.Summarize(binary), b)

	// plan import: into an empty board (each run in a fresh copy of the
	// repository), then a no-op re-import, each beside rev-parse.
	imports := *calls / 5
	if imports < 3 {
		imports = 3
	}
	var first, noop, base2 []benchutil.Sample
	for i := 0; i < imports; i++ {
		r := filepath.Join(tmp, fmt.Sprintf("import%d", i))
		benchutil.Must(benchutil.InitRepo(r))
		benchutil.Must(plantest.Generate(r, plantest.Shape{Stories: *stories, TasksPerStory: *tasks, TestsPerTask: *tests}))
		sm, out, err := benchutil.Run(r, bin, "plan", "import", "--human", "bench")
		benchutil.Must(err)
		if !strings.Contains(string(out), fmt.Sprintf(": %d created,", sum.Stories+sum.Tasks)) {
			benchutil.Must(fmt.Errorf("plan import printed %q", out))
		}
		first = append(first, sm)
		sm, out, err = benchutil.Run(r, bin, "plan", "import", "--human", "bench")
		benchutil.Must(err)
		if !strings.Contains(string(out), " 0 created, 0 updated, 0 cancelled") {
			benchutil.Must(fmt.Errorf("re-import printed %q", out))
		}
		noop = append(noop, sm)
		sm, _, err = benchutil.Run(r, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		base2 = append(base2, sm)
		benchutil.Must(os.RemoveAll(r))
	}
	b2 := benchutil.Summarize(base2)
	benchutil.Row(imports, "git rev-parse HEAD (baseline)", b2, b2)
	benchutil.Row(imports, "plan import into an empty board", benchutil.Summarize(first), b2)
	benchutil.Row(imports, "plan import again (no-op)", benchutil.Summarize(noop), b2)
	fmt.Printf("%-8s %-40s %10s\n", "", "targets: check 100ms, import 1s, no-op 100ms", "")
}
