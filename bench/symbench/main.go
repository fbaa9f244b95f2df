// Command symbench measures the symbol index and the structural gate on a
// real Go code base of about 100k lines (GOROOT/src/net, copied into a
// scratch repository): indexing every file from disk, and the structural
// check of a 50-file task diff (the whole tree at the task's head indexed
// from git objects, the 50 files' base versions, the analysis) with a cold
// per-blob facts cache and then a warm one, each run -n times
// interleaved, medians and their ratio to the index. Then the binary built
// with cgo (tree-sitter in) and without (the fallback reader): build
// time with a warm cache and size.
//
//	go run ./bench/symbench [-n 7] [-lines 100000]
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/symbols"
)

func git(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	benchutil.Must(err)
	return strings.TrimSpace(string(out))
}

// copyTree copies Go files of src (no testdata) into dst until about
// lines lines; it returns the paths and the line count.
func copyTree(src, dst string, lines int) ([]string, int) {
	var all []string
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			all = append(all, p)
		}
		return nil
	})
	sort.Strings(all)
	n := 0
	var out []string
	for _, p := range all {
		if n >= lines {
			break
		}
		b, err := os.ReadFile(p)
		benchutil.Must(err)
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		full := filepath.Join(dst, rel)
		benchutil.Must(os.MkdirAll(filepath.Dir(full), 0o755))
		benchutil.Must(os.WriteFile(full, b, 0o644))
		n += strings.Count(string(b), "\n")
		out = append(out, rel)
	}
	return out, n
}

// cpu is this process's user+system CPU time so far: on a loaded
// machine the wall clock measures the neighbours too.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	n := flag.Int("n", 7, "runs of each measure")
	lines := flag.Int("lines", 100000, "lines of Go to index")
	builds := flag.Bool("build", true, "also build the binary with and without cgo")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the measured runs to this file")
	flag.Parse()
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "symbench-")
	benchutil.Must(err)
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "repo")
	benchutil.Must(benchutil.InitRepo(repo))
	files, got := copyTree(filepath.Join(runtime.GOROOT(), "src", "net"), repo, *lines)
	git(repo, "add", "-A")
	git(repo, "commit", "-q", "-m", "base")
	base := git(repo, "rev-parse", "HEAD^{tree}")
	// The task: a new function in each of 50 non-test files (the files
	// need not build: the check parses, it does not type-check).
	var changed []string
	for _, p := range files {
		if len(changed) == 50 {
			break
		}
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		full := filepath.Join(repo, p)
		b, _ := os.ReadFile(full)
		name := fmt.Sprintf("benchAdded%d", len(changed))
		b = append(b, fmt.Sprintf("\nfunc %s(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x * %d\n\t}\n\treturn t\n}\n\nvar _ = %s\n", name, len(changed)+1, name)...)
		// Every fifth file also gets a body past the near-copy floor (50
		// tokens), one line longer each time, so the similarity check
		// has work: they are near copies of one another.
		if len(changed)%5 == 0 {
			long := fmt.Sprintf("\nfunc %sLong(xs []string, sep string) (string, int) {\n\tvar out []string\n\tn := 0\n\tfor i, x := range xs {\n\t\tif x == \"\" || strings.HasPrefix(x, \"#\") {\n\t\t\tcontinue\n\t\t}\n\t\tif i > 0 && x == xs[i-1] {\n\t\t\tn++\n\t\t\tcontinue\n\t\t}\n", name)
			for k := 0; k < len(changed)/5; k++ {
				long += fmt.Sprintf("\t\tx = strings.TrimSuffix(x, \"%d\")\n", k)
			}
			long += fmt.Sprintf("\t\tout = append(out, strings.ToLower(x))\n\t}\n\treturn strings.Join(out, sep), n\n}\n\nvar _ = %sLong\n", name)
			b = append(b, long...)
		}
		benchutil.Must(os.WriteFile(full, b, 0o644))
		changed = append(changed, p)
	}
	git(repo, "commit", "-q", "-am", "task")
	head := git(repo, "rev-parse", "HEAD^{tree}")
	g, err := gitstore.Open(repo)
	benchutil.Must(err)
	defer g.Close()
	bh, _ := gitstore.ParseHash(base)
	hh, _ := gitstore.ParseHash(head)

	// The structural check runs cold (the facts cache under the
	// repository's git directory removed first: every blob read, parsed
	// and cached); incremental (the cache warmed by a check of the base
	// tree, as an earlier task leaves it: the task's 50 new blobs parsed);
	// and warm (the same check again: only the cache read). The verdicts
	// must be the same.
	cacheDir := filepath.Join(repo, ".git", "ideate", "cache")
	if *profile != "" {
		pf, err := os.Create(*profile)
		benchutil.Must(err)
		benchutil.Must(pprof.StartCPUProfile(pf))
		defer pprof.StopCPUProfile()
	}
	var index, cold, incr, warm, indexCPU, coldCPU, incrCPU, warmCPU []time.Duration
	var defs, findings, added int
	for i := 0; i < *n; i++ {
		t0, c0 := time.Now(), cpu()
		x, err := symbols.Build(ctx, symbols.Dir{Root: repo, List: files})
		benchutil.Must(err)
		index, indexCPU = append(index, time.Since(t0)), append(indexCPU, cpu()-c0)
		defs = len(x.All())
		benchutil.Must(os.RemoveAll(cacheDir))
		sf := gates.StructureFacts{Git: g, Base: bh, Head: hh, Changed: changed, Config: gates.DefaultStructure}
		t0, c0 = time.Now(), cpu()
		res, err := gates.CheckStructure(ctx, sf)
		benchutil.Must(err)
		cold, coldCPU = append(cold, time.Since(t0)), append(coldCPU, cpu()-c0)
		benchutil.Must(os.RemoveAll(cacheDir))
		_, err = gates.CheckStructure(ctx, gates.StructureFacts{Git: g, Base: bh, Head: bh, Config: gates.DefaultStructure})
		benchutil.Must(err)
		t0, c0 = time.Now(), cpu()
		res2, err := gates.CheckStructure(ctx, sf)
		benchutil.Must(err)
		incr, incrCPU = append(incr, time.Since(t0)), append(incrCPU, cpu()-c0)
		t0, c0 = time.Now(), cpu()
		res3, err := gates.CheckStructure(ctx, sf)
		benchutil.Must(err)
		warm, warmCPU = append(warm, time.Since(t0)), append(warmCPU, cpu()-c0)
		findings, added = len(res.Findings), len(res.Added)
		for _, r := range []*gates.StructureResult{res2, res3} {
			if len(r.Findings) != findings || len(r.Added) != added {
				benchutil.Must(fmt.Errorf("cold and warm verdicts differ: %d/%d findings, %d/%d added", findings, len(r.Findings), added, len(r.Added)))
			}
		}
	}
	fmt.Printf("repository: %d Go files, %d lines (GOROOT/src/net), %d definitions, GOMAXPROCS %d\n", len(files), got, defs, runtime.GOMAXPROCS(0))
	fmt.Printf("%-60s %10s %10s\n", "figure (median of "+fmt.Sprint(*n)+")", "wall", "cpu")
	mi := benchutil.Median(index)
	fmt.Printf("%-60s %10v %10v\n", "index every file from disk", mi.Round(time.Millisecond), benchutil.Median(indexCPU).Round(time.Millisecond))
	what := fmt.Sprintf("50-file diff, %d added, %d findings", added, findings)
	for _, r := range []struct {
		name      string
		wall, cpu []time.Duration
	}{{"structural check, cold cache (" + what + ")", cold, coldCPU}, {"structural check, incremental (cache warm from the base)", incr, incrCPU},
		{"structural check, warm cache (the same check again)", warm, warmCPU}} {
		m := benchutil.Median(r.wall)
		fmt.Printf("%-60s %10v %10v   (%.2f× the index, wall)\n", r.name, m.Round(time.Millisecond), benchutil.Median(r.cpu).Round(time.Millisecond), float64(m)/float64(mi))
	}

	if !*builds {
		return
	}
	// The binary with and without tree-sitter.
	root, err := os.Getwd()
	benchutil.Must(err)
	for _, cgo := range []string{"1", "0"} {
		out := filepath.Join(tmp, "git-ideate-cgo"+cgo)
		var times []time.Duration
		for i := 0; i < 3; i++ {
			os.Remove(out)
			cmd := exec.Command("go", "build", "-o", out, "./cmd/git-ideate-full")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
			t0 := time.Now()
			if b, err := cmd.CombinedOutput(); err != nil {
				benchutil.Must(fmt.Errorf("build CGO_ENABLED=%s: %v\n%s", cgo, err, b))
			}
			times = append(times, time.Since(t0))
		}
		st, err := os.Stat(out)
		benchutil.Must(err)
		what := "with tree-sitter (CGO_ENABLED=1)"
		if cgo == "0" {
			what = "without tree-sitter (CGO_ENABLED=0)"
		}
		fmt.Printf("%-52s %10v   %.1f MB\n", "build, warm cache, "+what, benchutil.Median(times).Round(10*time.Millisecond), float64(st.Size())/1e6)
	}
}
