// Command symbench measures the symbol index and the structural gate on a
// real Go code base of about 100k lines (GOROOT/src/net, copied into a
// scratch repository): indexing every file from disk, and the structural
// check of a 50-file task diff (the whole tree at the task's head indexed
// from git objects, the 50 files' base versions, the analysis), each run
// -n times interleaved, medians and their ratio. Then the binary built
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
	// The task: a new function in each of 50 non-test files.
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

	var index, structure, indexCPU, structureCPU []time.Duration
	var defs, findings, added int
	for i := 0; i < *n; i++ {
		t0, c0 := time.Now(), cpu()
		x, err := symbols.Build(ctx, symbols.Dir{Root: repo, List: files})
		benchutil.Must(err)
		index, indexCPU = append(index, time.Since(t0)), append(indexCPU, cpu()-c0)
		defs = len(x.All())
		t0, c0 = time.Now(), cpu()
		res, err := gates.CheckStructure(ctx, gates.StructureFacts{Git: g, Base: bh, Head: hh, Changed: changed, Config: gates.DefaultStructure})
		benchutil.Must(err)
		structure, structureCPU = append(structure, time.Since(t0)), append(structureCPU, cpu()-c0)
		findings, added = len(res.Findings), len(res.Added)
	}
	mi, ms := benchutil.Median(index), benchutil.Median(structure)
	fmt.Printf("repository: %d Go files, %d lines (GOROOT/src/net), %d definitions\n", len(files), got, defs)
	ci, cs := benchutil.Median(indexCPU), benchutil.Median(structureCPU)
	fmt.Printf("%-52s %10s %10s\n", "figure (median of "+fmt.Sprint(*n)+")", "wall", "cpu")
	fmt.Printf("%-52s %10v %10v\n", "index every file from disk", mi.Round(time.Millisecond), ci.Round(time.Millisecond))
	fmt.Printf("%-52s %10v %10v   (%.2f× the index, wall)\n", fmt.Sprintf("structural check, 50-file diff (%d added, %d findings)", added, findings), ms.Round(time.Millisecond), cs.Round(time.Millisecond), float64(ms)/float64(mi))

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
			cmd := exec.Command("go", "build", "-o", out, "./cmd/git-ideate")
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
