// Command worktreebench measures a task's worktree on a 10k-file
// repository: the diff scope of a worktree with 50 changed files
// (WorktreeChanges, beside `git status` and `git diff --name-status` run
// as processes in the same run), and `git ideate task start` (board claim +
// worktree + contract) beside `git worktree add` alone, alternating.
//
//	go run ./bench/worktreebench
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/gitstore"
)

func git(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		benchutil.Must(fmt.Errorf("git %v: %v\n%s", args, err, out))
	}
	return string(out[:len(out)-min(1, len(out))])
}

// makeRepo writes files files in a tree of directories (20 per leaf, 25
// leaves per directory) and commits them.
func makeRepo(dir string, files int) string {
	benchutil.Must(benchutil.InitRepo(dir))
	for i := 0; i < files; i++ {
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d/sub%02d/file%05d.go", i/500, (i/20)%25, i))
		benchutil.Must(os.MkdirAll(filepath.Dir(p), 0o755))
		benchutil.Must(os.WriteFile(p, []byte(fmt.Sprintf("package p\n\n// file %d\nvar X%d = %d\n", i, i, i)), 0o644))
	}
	git(dir, "add", "-A")
	git(dir, "commit", "-q", "-m", "base")
	return git(dir, "rev-parse", "HEAD")
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	benchutil.Must(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeIt measures f in this process: wall time and the process's CPU time
// (all threads).
func timeIt(n int, f func()) benchutil.Stats {
	var ss []benchutil.Sample
	for i := 0; i < n; i++ {
		c0, t0 := cpuNow(), time.Now()
		f()
		ss = append(ss, benchutil.Sample{Wall: time.Since(t0), CPU: cpuNow() - c0})
	}
	return benchutil.Summarize(ss)
}

func proc(n int, dir string, args ...string) benchutil.Stats {
	var ss []benchutil.Sample
	for i := 0; i < n; i++ {
		s, _, err := benchutil.Run(dir, "git", args...)
		benchutil.Must(err)
		ss = append(ss, s)
	}
	return benchutil.Summarize(ss)
}

func main() {
	runs := flag.Int("runs", 40, "runs per diff-scope figure")
	starts := flag.Int("starts", 8, "runs per task-start figure")
	files := flag.Int("files", 10000, "files in the repository")
	changed := flag.Int("changed", 50, "files the task changes")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the in-process figures")
	flag.Parse()
	work, err := os.MkdirTemp("", "worktreebench-")
	benchutil.Must(err)
	defer os.RemoveAll(work)
	fmt.Printf("worktreebench: %s, %d runs per figure\n", time.Now().UTC().Format(time.RFC3339), *runs)
	fmt.Printf("%-8s %-44s %10s %10s %8s\n", "files", "figure", "median", "cpu", "ratio")

	repo := filepath.Join(work, "repo")
	base := makeRepo(repo, *files)
	wt := filepath.Join(work, "wt")
	git(repo, "worktree", "add", "-q", "-b", "task", wt, base)
	// The task's changes: a third edited, a third added, a sixth deleted,
	// a sixth edited and committed.
	for i := 0; i < *changed; i++ {
		p := filepath.Join(wt, fmt.Sprintf("pkg%02d/sub%02d/file%05d.go", (i*97%*files)/500, ((i*97%*files)/20)%25, i*97%*files))
		switch i % 6 {
		case 0, 1:
			benchutil.Must(os.WriteFile(p, []byte("package p\n// edited\n"), 0o644))
		case 2, 3:
			np := filepath.Join(wt, fmt.Sprintf("new/dir%d/new%d.go", i%5, i))
			benchutil.Must(os.MkdirAll(filepath.Dir(np), 0o755))
			benchutil.Must(os.WriteFile(np, []byte("package n\n"), 0o644))
		case 4:
			benchutil.Must(os.Remove(p))
		case 5:
			benchutil.Must(os.WriteFile(p, []byte("package p\n// committed\n"), 0o644))
			git(wt, "add", p)
		}
	}
	git(wt, "commit", "-q", "-m", "part of the task")
	g, err := gitstore.Open(repo)
	benchutil.Must(err)
	defer g.Close()
	bh, err := gitstore.ParseHash(base)
	benchutil.Must(err)
	ctx := context.Background()
	c, err := g.WorktreeChanges(ctx, bh, wt)
	benchutil.Must(err)
	fmt.Printf("%-8d %-44s %10d\n", *files, "changed paths found", len(c.List))

	status := proc(*runs, wt, "status", "--porcelain", "-uall")
	diff := proc(*runs, wt, "diff", "--name-status", base)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		benchutil.Must(err)
		benchutil.Must(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	scope := timeIt(*runs, func() {
		_, err := g.WorktreeChanges(ctx, bh, wt)
		benchutil.Must(err)
	})
	benchutil.Row(*files, "git status --porcelain -uall (baseline)", status, status)
	benchutil.Row(*files, "git diff --name-status BASE", diff, status)
	benchutil.Row(*files, "WorktreeChanges (through git status)", scope, status)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}

	bin, err := benchutil.Build(work)
	benchutil.Must(err)

	// task start vs git worktree add, alternating, each on a fresh path.
	var add, start []benchutil.Sample
	for i := 0; i < *starts; i++ {
		_, out, err := benchutil.Run(repo, bin, "work", "create", "--title", fmt.Sprintf("task %d", i), "--spec", "s", "--spec-format", "f", "--human", "bench")
		benchutil.Must(err)
		var it struct {
			ID string `json:"id"`
		}
		benchutil.Must(json.Unmarshal(out, &it))
		p := filepath.Join(work, fmt.Sprintf("plain%d", i))
		s, _, err := benchutil.Run(repo, "git", "worktree", "add", "-q", "-b", fmt.Sprintf("plain%d", i), p, base)
		benchutil.Must(err)
		add = append(add, s)
		s, _, err = benchutil.Run(repo, bin, "task", "start", fmt.Sprintf("S1-01/T%d", i), "--item", it.ID, "--human", "bench", "--base", base, "--scope", "pkg00/**")
		benchutil.Must(err)
		start = append(start, s)
		git(repo, "worktree", "remove", "--force", p)
		git(repo, "worktree", "remove", "--force", filepath.Join(repo, ".ideate", "worktrees", fmt.Sprintf("S1-01+T%d", i)))
	}
	a := benchutil.Summarize(add)
	benchutil.Row(*files, "git worktree add (baseline)", a, a)
	benchutil.Row(*files, "git ideate task start (claim+worktree)", benchutil.Summarize(start), a)
	fmt.Printf("%-8d %-44s %10s\n", *files, "task start target", "2.00x")
}
