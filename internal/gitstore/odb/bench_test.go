package odb

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// The benchmark fixture: a packed repository of ~200k objects built once
// per test binary, and only when a benchmark asks for it.
var (
	benchOnce    sync.Once
	benchRoot    string
	benchRepo    string
	benchObjects map[string][]oid.Hash // by type
	benchErr     error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

const benchCommits = 50000

// benchFixture builds (once) 50k commits, each adding one small blob under
// a two-level directory tree: 50k blobs, 50k commits and ~150k trees.
func benchFixture(b *testing.B) (string, map[string][]oid.Hash) {
	b.Helper()
	benchOnce.Do(func() {
		start := time.Now()
		// ODB_BENCH_REPO names a persistent fixture (built if missing,
		// never deleted) to save the ~20 s build across runs.
		if benchRepo = os.Getenv("ODB_BENCH_REPO"); benchRepo != "" {
			if _, err := os.Stat(filepath.Join(benchRepo, ".git")); err != nil {
				benchErr = buildBenchRepo(benchRepo)
			}
		} else if benchRoot, benchErr = os.MkdirTemp("", "odb-bench-"); benchErr == nil {
			benchRepo = filepath.Join(benchRoot, "repo")
			benchErr = buildBenchRepo(benchRepo)
		}
		if benchErr != nil {
			return
		}
		benchObjects, benchErr = listObjects(benchRepo)
		total := 0
		for _, l := range benchObjects {
			total += len(l)
		}
		fmt.Fprintf(os.Stderr, "bench fixture: %d objects (%d blobs, %d trees, %d commits) built in %v\n",
			total, len(benchObjects["blob"]), len(benchObjects["tree"]), len(benchObjects["commit"]), time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRepo, benchObjects
}

func gitRun(dir string, stdin *bytes.Buffer, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "gc.auto=0", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir, cmd.Env = dir, gitEnv(dir)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func buildBenchRepo(repo string) error {
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	if _, err := gitRun(repo, nil, "init", "-q"); err != nil {
		return err
	}
	var s bytes.Buffer
	for i := 0; i < benchCommits; i++ {
		content := fmt.Sprintf("record %d\nstatus: open\ntitle: idea number %d\n", i, i*7919%100003)
		fmt.Fprintf(&s, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n",
			1700000000+i, len(fmt.Sprintf("add %d\n", i)), fmt.Sprintf("add %d\n", i))
		fmt.Fprintf(&s, "M 100644 inline %02x/%02x/r%06d\ndata %d\n%s\n", i%256, (i/256)%64, i, len(content), content)
	}
	s.WriteString("done\n")
	if _, err := gitRun(repo, &s, "fast-import", "--quiet", "--done"); err != nil {
		return err
	}
	// Bring it into the shape of a gc'd repository: one pack, git's deltas.
	_, err := gitRun(repo, nil, "repack", "-adq")
	return err
}

func listObjects(repo string) (map[string][]oid.Hash, error) {
	out, err := gitRun(repo, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	m := map[string][]oid.Hash{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		m[f[1]] = append(m[f[1]], oid.NewHash(f[0]))
	}
	return m, nil
}

func BenchmarkOpenFirstRead(b *testing.B) {
	repo, objs := benchFixture(b)
	blobs := objs["blob"]
	r := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db, err := Open(objectsDir(repo))
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := db.Read(blobs[r.Intn(len(blobs))]); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

func benchRead(b *testing.B, typ string) {
	repo, objs := benchFixture(b)
	list := objs[typ]
	db, err := Open(objectsDir(repo))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewSource(2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := db.Read(list[r.Intn(len(list))]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadRandomBlob(b *testing.B)   { benchRead(b, "blob") }
func BenchmarkReadRandomTree(b *testing.B)   { benchRead(b, "tree") }
func BenchmarkReadRandomCommit(b *testing.B) { benchRead(b, "commit") }

func BenchmarkWalkHistory(b *testing.B) {
	repo, _ := benchFixture(b)
	head, err := gitRun(repo, nil, "rev-parse", "HEAD")
	if err != nil {
		b.Fatal(err)
	}
	db, err := Open(objectsDir(repo))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := oid.NewHash(strings.TrimSpace(head))
		for n := 0; n < 1000; n++ {
			_, c, err := db.Read(h)
			if err != nil {
				b.Fatal(err)
			}
			tree := oid.NewHash(string(c[5:45]))
			_, t, err := db.Read(tree)
			if err != nil {
				b.Fatal(err)
			}
			_ = t
			p := bytes.Index(c, []byte("\nparent "))
			if p < 0 {
				break
			}
			h = oid.NewHash(string(c[p+8 : p+48]))
		}
	}
}

func vmRSS(field string) int {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, field+":") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return kb
		}
	}
	return -1
}

// BenchmarkRSS1000 reports the in-process RSS growth from opening the DB
// and reading 1,000 random objects, and (in a fresh child process) the
// absolute RSS and the latency of Open + first Read.
func BenchmarkRSS1000(b *testing.B) {
	repo, objs := benchFixture(b)
	var all []oid.Hash
	for _, l := range objs {
		all = append(all, l...)
	}
	r := rand.New(rand.NewSource(3))
	pick := make([]oid.Hash, 1000)
	for i := range pick {
		pick[i] = all[r.Intn(len(all))]
	}
	var deltaKB int
	for i := 0; i < b.N; i++ {
		runtime.GC()
		before := vmRSS("VmRSS")
		db, err := Open(objectsDir(repo))
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range pick {
			if _, _, err := db.Read(h); err != nil {
				b.Fatal(err)
			}
		}
		deltaKB = vmRSS("VmRSS") - before
		db.Close()
	}
	b.ReportMetric(float64(deltaKB), "rss-delta-KiB")

	var list bytes.Buffer
	for _, h := range pick {
		list.WriteString(h.String() + "\n")
	}
	pickFile := filepath.Join(b.TempDir(), "pick")
	if err := os.WriteFile(pickFile, list.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ODB_RSS_CHILD="+objectsDir(repo), "ODB_RSS_PICK="+pickFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("child: %v\n%s", err, out)
	}
	if i := bytes.Index(out, []byte("child detail:")); i >= 0 {
		b.Log(string(out[i : i+bytes.IndexByte(out[i:], '\n')]))
	}
	for _, line := range strings.Split(string(out), "\n") {
		var startKB, afterKB, hwmKB int
		var firstUS float64
		if n, _ := fmt.Sscanf(line, "child rss start=%d after=%d hwm=%d first_us=%f", &startKB, &afterKB, &hwmKB, &firstUS); n == 4 {
			b.ReportMetric(float64(afterKB), "child-rss-KiB")
			b.ReportMetric(float64(afterKB-startKB), "child-rss-delta-KiB")
			b.ReportMetric(firstUS, "child-open+first-read-µs")
			return
		}
	}
	b.Fatalf("child output not understood:\n%s", out)
}

// TestRSSChild runs only as BenchmarkRSS1000's child process.
func TestRSSChild(t *testing.T) {
	dir := os.Getenv("ODB_RSS_CHILD")
	if dir == "" {
		t.Skip("helper for BenchmarkRSS1000")
	}
	raw, err := os.ReadFile(os.Getenv("ODB_RSS_PICK"))
	if err != nil {
		t.Fatal(err)
	}
	var pick []oid.Hash
	for _, f := range strings.Fields(string(raw)) {
		pick = append(pick, oid.NewHash(f))
	}
	start := vmRSS("VmRSS")
	t0 := time.Now()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Read(pick[0]); err != nil {
		t.Fatal(err)
	}
	first := time.Since(t0)
	for _, h := range pick[1:] {
		if _, _, err := db.Read(h); err != nil {
			t.Fatal(err)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("child rss start=%d after=%d hwm=%d first_us=%.1f\n", start, vmRSS("VmRSS"), vmRSS("VmHWM"), float64(first.Microseconds()))
	fmt.Printf("child detail: RssAnon=%d RssFile=%d KiB, Go heap in use=%d KiB, sys=%d KiB\n", vmRSS("RssAnon"), vmRSS("RssFile"), ms.HeapInuse>>10, ms.Sys>>10)
	db.Close()
}
