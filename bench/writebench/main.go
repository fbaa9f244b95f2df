// Command writebench measures issue 19's figures in one run: the files a
// write creates, the MCP server's medians and memory over a long mixed run,
// CLI writes beside `git rev-parse HEAD`, and the start-up cost of the
// binary beside a hello-world Go binary. Every comparison is interleaved
// call by call, so a loaded machine shows in both sides of a ratio.
//
//	go run ./bench/writebench                 # 10k records, 10k mixed MCP calls
//	go run ./bench/writebench -records 2000 -mixed 2000 -calls 100
//	TMPDIR=/mnt/other go run ./bench/writebench   # on another file system
//
// It prints the file system its repositories are on: creating files costs
// far more on ext4 without a journal (see docs/ARCHITECTURE.md).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
)

func main() {
	records := flag.Int("records", 10000, "records in the store before the MCP run")
	mixed := flag.Int("mixed", 10000, "MCP calls in the mixed run (append, create, claim, complete, read first page)")
	calls := flag.Int("calls", 200, "CLI calls per figure")
	straces := flag.Int("straces", 5, "traced CLI calls per files-created figure")
	compare := flag.Int("compare", 2000, "MCP calls per comparison run (spares off/on, back to back and paced; 0: none)")
	gap := flag.Duration("gap", 20*time.Millisecond, "the pause between calls of the paced comparison runs")
	flag.Parse()
	work, err := os.MkdirTemp("", "writebench-")
	benchutil.Must(err)
	defer os.RemoveAll(work)
	bin, err := benchutil.Build(work)
	benchutil.Must(err)
	repo := filepath.Join(work, "repo")
	benchutil.Must(benchutil.InitRepo(repo))
	fmt.Printf("writebench: %s, repositories under %s on %s\n", time.Now().UTC().Format(time.RFC3339), work, benchutil.FileSystem(work))

	// 1. Files created per write, counted by strace on CLI calls.
	ids := benchutil.CreateItems(repo, *straces+*calls, "spec")
	var fa, fc, fd, ba, bc, bd []int
	for i := 0; i < *straces; i++ {
		own, all := filesCreated(repo, bin, "record", "append", "--kind", "finding", "--claim", fmt.Sprintf("traced %d", i), "--content", "body")
		fa, ba = append(fa, own), append(ba, all)
		own, all = filesCreated(repo, bin, "work", "claim", "--id", ids[i], "--human", "bench")
		fc, bc = append(fc, own), append(bc, all)
		// A fresh item's first claim holds token 1 (a board without a remote).
		own, all = filesCreated(repo, bin, "work", "complete", "--id", ids[i], "--token", "1", "--note", "done")
		fd, bd = append(fd, own), append(bd, all)
	}
	ids = ids[*straces:]
	fmt.Printf("%-44s %v (with the processes it started: %v)\n", "files created per CLI record append", fa, ba)
	fmt.Printf("%-44s %v (with the processes it started: %v)\n", "files created per CLI work claim", fc, bc)
	fmt.Printf("%-44s %v (with the processes it started: %v)\n", "files created per CLI work complete", fd, bd)

	// 2. The store at size: records appended in-process (maintenance on).
	body := benchutil.RecordBody
	t0 := time.Now()
	benchutil.FillRecords(repo, *records)
	fmt.Printf("%-44s %v (%.0f appends/s in-process), %d packs, %d loose objects\n", "fill", time.Since(t0).Round(time.Millisecond),
		float64(*records)/time.Since(t0).Seconds(), countPacks(repo), countLoose(repo))

	// 3. CLI append and claim beside git rev-parse HEAD.
	var base, app, claim []benchutil.Sample
	for i := 0; i < *calls; i++ {
		s, _, err := benchutil.Run(repo, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		base = append(base, s)
		s, _, err = benchutil.Run(repo, bin, "record", "append", "--kind", "finding", "--claim", fmt.Sprintf("cli %d", i), "--content", body)
		benchutil.Must(err)
		app = append(app, s)
		s, _, err = benchutil.Run(repo, bin, "work", "claim", "--id", ids[i], "--human", "bench")
		benchutil.Must(err)
		claim = append(claim, s)
	}
	b := benchutil.Summarize(base)
	fmt.Printf("%-8s %-40s %10s %10s %8s\n", "records", "figure", "median", "cpu", "ratio")
	benchutil.Row(*records, "git rev-parse HEAD", b, b)
	benchutil.Row(*records, "CLI record append", benchutil.Summarize(app), b)
	benchutil.Row(*records, "CLI work claim", benchutil.Summarize(claim), b)
	fmt.Printf("%-44s %d packs, %d loose objects\n", "after the CLI calls", countPacks(repo), countLoose(repo))

	// 4. One MCP server, a long mixed run, as the server runs by default
	// (spare files on, calls back to back); then shorter runs without
	// spares and with an agent's pause between calls, for comparison.
	r := mcpRun(benchutil.Full(bin), repo, *mixed, true, 0)
	fmt.Printf("MCP, one server, %d mixed calls over %d+ records, back to back:\n", *mixed, *records)
	r.print()
	fmt.Printf("  %-42s start %.1f MiB, end %.1f MiB (anonymous %.1f, mapped files %.1f), peak %.1f MiB\n", "server RSS",
		mib(r.rssStart), mib(r.rssEnd), mib(r.anonEnd), mib(r.fileEnd), mib(r.hwm))
	fmt.Printf("%-44s %d packs, %d loose objects\n", "after the MCP run", countPacks(repo), countLoose(repo))
	if *compare > 0 {
		for _, v := range []struct {
			spares bool
			gap    time.Duration
		}{{false, 0}, {true, 0}, {false, *gap}, {true, *gap}} {
			fmt.Printf("MCP, %d mixed calls, spares %v, %v between calls:\n", *compare, v.spares, v.gap)
			mcpRun(benchutil.Full(bin), repo, *compare, v.spares, v.gap).print()
		}
	}

	// 5. Start-up: --version beside a hello-world Go binary.
	hello := buildHello(work)
	full := benchutil.Full(bin)
	nocgo := filepath.Join(work, "git-ideate-full-nocgo")
	cmd := exec.Command("go", "build", "-o", nocgo, "./cmd/git-ideate-full")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	benchutil.Must(errorf(err, out))
	var hs, vs, fs, ns []benchutil.Sample
	for i := 0; i < *calls; i++ {
		s, _, err := benchutil.Run(repo, hello)
		benchutil.Must(err)
		hs = append(hs, s)
		s, _, err = benchutil.Run(repo, bin, "--version")
		benchutil.Must(err)
		vs = append(vs, s)
		s, _, err = benchutil.Run(repo, full, "--version")
		benchutil.Must(err)
		fs = append(fs, s)
		s, _, err = benchutil.Run(repo, nocgo, "--version")
		benchutil.Must(err)
		ns = append(ns, s)
	}
	h := benchutil.Summarize(hs)
	fmt.Printf("%-8s %-40s %10s %10s %8s\n", "", "start-up", "median", "cpu", "cpu ratio")
	for _, f := range []struct {
		name string
		s    benchutil.Stats
	}{{"hello-world Go binary", h}, {"git-ideate --version", benchutil.Summarize(vs)},
		{"git-ideate-full --version", benchutil.Summarize(fs)}, {"git-ideate-full --version (CGO_ENABLED=0)", benchutil.Summarize(ns)}} {
		fmt.Printf("%-8s %-40s %10v %10v %8.2f\n", "", f.name, f.s.Wall.Round(10*time.Microsecond), f.s.CPU.Round(10*time.Microsecond), float64(f.s.CPU)/float64(h.CPU))
	}
	fmt.Printf("git-ideate links: %s; git-ideate-full: %s\n", linkage(bin), linkage(full))
}

// mcpFigures are one MCP run's latencies and the server's memory.
type mcpFigures struct {
	app, create, claim, complete, read, floor []time.Duration
	rssStart, rssEnd, hwm                     int64
	anonEnd, fileEnd                          int64 // the end's RSS: anonymous memory, mapped files
}

func (r mcpFigures) print() {
	for _, f := range []struct {
		name string
		ds   []time.Duration
	}{{"record_append", r.app}, {"work_create", r.create}, {"work_claim", r.claim}, {"work_complete", r.complete},
		{"record_read first page", r.read}, {"floor: an append's 3 new files, no git", r.floor}} {
		fmt.Printf("  %-42s %10v  p90 %v\n", f.name, benchutil.Median(f.ds).Round(time.Microsecond), p90(f.ds).Round(time.Microsecond))
	}
}

// mcpRun starts one `git-ideate mcp` on repo (with ideate.spares as
// spares says) and makes n mixed calls, pausing gap after each.
func mcpRun(bin, repo string, n int, spares bool, gap time.Duration) mcpFigures {
	benchutil.Must(gitConfig(repo, "ideate.spares", strconv.FormatBool(spares)))
	c, stop := benchutil.StartMCP(bin, repo)
	defer stop()
	pid := c.Pid
	r := mcpFigures{rssStart: status(pid, "VmRSS")}
	floor := &fileFloor{repo: repo}
	defer floor.clean()
	var open []struct {
		id    string
		token int64
	}
	for i := 0; i < n; i++ {
		if gap > 0 {
			time.Sleep(gap)
		}
		switch i % 5 {
		case 0:
			_, d := c.Tool("record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("mcp %d", i), "content": "body", "scope": "bench"})
			r.app = append(r.app, d)
			r.floor = append(r.floor, floor.write())
		case 1:
			res, d := c.Tool("work_create", map[string]any{"title": fmt.Sprintf("item %d", i), "spec": "s", "spec_format": "f", "actor_human": "bench"})
			r.create = append(r.create, d)
			var it struct{ Item struct{ ID string } }
			json.Unmarshal(res, &it)
			open = append(open, struct {
				id    string
				token int64
			}{it.Item.ID, 0})
		case 2:
			res, d := c.Tool("work_claim", map[string]any{"id": open[len(open)-1].id, "actor_human": "bench"})
			r.claim = append(r.claim, d)
			var it struct {
				Item struct {
					Claim struct {
						ClaimToken int64 `json:"claim_token"`
					}
				}
			}
			json.Unmarshal(res, &it)
			open[len(open)-1].token = it.Item.Claim.ClaimToken
		case 3:
			it := open[len(open)-1]
			_, d := c.Tool("work_complete", map[string]any{"id": it.id, "claim_token": it.token, "note": "done"})
			r.complete = append(r.complete, d)
		case 4:
			_, d := c.Tool("record_read", map[string]any{})
			r.read = append(r.read, d)
		}
	}
	r.rssEnd, r.hwm = status(pid, "VmRSS"), status(pid, "VmHWM")
	r.anonEnd, r.fileEnd = status(pid, "RssAnon"), status(pid, "RssFile")
	return r
}

func gitConfig(repo, key, value string) error {
	out, err := exec.Command("git", "-C", repo, "config", key, value).CombinedOutput()
	return errorf(err, out)
}

func errorf(err error, out []byte) error {
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

var openat = regexp.MustCompile(`^\d+\s+open(?:at)?\((?:AT_FDCWD, )?"([^"]+)", ([A-Z_|]+)(?:, \d+)?\) = (\d+)`)

// filesCreated runs one CLI call under strace and counts the files it
// created: successful opens with O_CREAT of a path that did not exist
// before (O_EXCL opens always create). Directories are not counted. own
// counts the git-ideate process alone (its threads included); all adds
// the processes it started, background maintenance among them (a
// pack-refs or a roll-up it spawned, which strace -f follows).
func filesCreated(repo, bin string, args ...string) (own, all int) {
	before := map[string]bool{}
	filepath.Walk(filepath.Join(repo, ".git"), func(p string, _ os.FileInfo, _ error) error {
		before[p] = true
		return nil
	})
	trace := filepath.Join(repo, "..", "strace.out")
	cmd := exec.Command("strace", append([]string{"-f", "-qq", "-e", "trace=open,openat,execve", "-o", trace, bin}, args...)...)
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	benchutil.Must(errorf(err, out))
	data, err := os.ReadFile(trace)
	benchutil.Must(err)
	// The git-ideate process and its threads: pids seen before its first
	// clone of a process (Go threads are clone with CLONE_THREAD, which
	// strace -f prints as a plain clone too, so go by the execve lines).
	procs := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], "execve(") && !strings.Contains(line, bin) {
			procs[f[0]] = true // a process other than git-ideate
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		m := openat.FindStringSubmatch(line)
		if m == nil || !strings.Contains(m[2], "O_CREAT") {
			continue
		}
		p := m[1]
		if !filepath.IsAbs(p) {
			p = filepath.Join(repo, p)
		}
		if strings.Contains(m[2], "O_EXCL") || !before[p] {
			all++
			if !procs[strings.Fields(line)[0]] {
				own++
			}
		}
	}
	return own, all
}

func countPacks(repo string) int {
	ms, _ := filepath.Glob(filepath.Join(repo, ".git", "objects", "pack", "*.pack"))
	return len(ms)
}

func countLoose(repo string) int {
	ms, _ := filepath.Glob(filepath.Join(repo, ".git", "objects", "??", "*"))
	return len(ms)
}

func p90(xs []time.Duration) time.Duration {
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)*9/10]
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// status reads a "VmRSS:  1234 kB" line of /proc/<pid>/status, in KiB.
func status(pid int, key string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	benchutil.Must(err)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, key+":") {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

func buildHello(work string) string {
	dir := filepath.Join(work, "hello")
	benchutil.Must(os.MkdirAll(dir, 0o755))
	benchutil.Must(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644))
	benchutil.Must(os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"), 0o644))
	bin := filepath.Join(work, "hello-bin")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	benchutil.Must(errorf(err, out))
	return bin
}

func linkage(bin string) string {
	out, _ := exec.Command("file", "-b", bin).Output()
	s := string(out)
	if i := strings.Index(s, ","); i >= 0 {
		for _, part := range strings.Split(s, ",") {
			if strings.Contains(part, "linked") {
				return strings.TrimSpace(part)
			}
		}
	}
	return strings.TrimSpace(s)
}

// fileFloor is the part of a write no layout of git's objects avoids on
// this file system: the three files an append creates (a pack and its
// index under objects/pack, a lock file in .git), each
// written and renamed into place, and, as the repository later deletes
// the merged packs and the replaced ref, three deletions (here: the
// previous round's files). Timed beside the MCP appends, it shows what
// file creation costs at that moment: on ext4 without a journal the inode
// allocator skips every inode deleted in the last minute, so the cost of
// a create grows with the recent deletions.
type fileFloor struct {
	repo string
	prev []string
	n    int
}

func (f *fileFloor) write() time.Duration {
	data := make([]byte, 1200)
	t0 := time.Now()
	var made []string
	for _, dir := range []string{"objects/pack", "objects/pack", "."} {
		d := filepath.Join(f.repo, ".git", dir)
		tmp, err := os.CreateTemp(d, "floor_tmp_")
		benchutil.Must(err)
		_, err = tmp.Write(data)
		benchutil.Must(err)
		benchutil.Must(tmp.Close())
		f.n++
		name := filepath.Join(d, fmt.Sprintf("floor-%d", f.n))
		benchutil.Must(os.Rename(tmp.Name(), name))
		made = append(made, name)
	}
	for _, p := range f.prev {
		benchutil.Must(os.Remove(p))
	}
	d := time.Since(t0)
	f.prev = made
	return d
}

func (f *fileFloor) clean() {
	for _, p := range f.prev {
		os.Remove(p)
	}
}
