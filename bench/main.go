// Command bench measures git ideate the way its users meet it: fresh CLI
// processes, a long-lived MCP server on stdio, git itself beside them in
// the same run. Each scenario compares two subjects, A and B, call by
// call, the two taking turns at going first, so a machine that slows down
// or speeds up meets both alike (two runs on a loaded 2-core machine
// differ by more than most changes gain; two subjects in one run do not).
// It prints medians and ratios, never a verdict: only a command that
// fails ends it, with status 1.
//
//	go run ./bench [flags] [scenario …]     (default: every scenario)
//
// Scenarios: record, board, mcp, sync, gates, plan, worktree, symbols,
// history, team.
//
// Subjects: -a and -b are git-ideate binaries (default: the working tree,
// built once, as both). -ref DIR makes B the reference implementation, a
// built checkout of it (`npm ci && npm run build`): its CLIs
// bin/ideate-record and bin/ideate-work and its MCP server dist/server.js,
// run with -node; the scenarios it has no counterpart for (sync, gates,
// plan, worktree, symbols) then compare A with itself.
//
//	go run ./bench -quick                      # what CI runs: small sizes, crash check
//	go run ./bench -a OLD -b NEW mcp board     # two builds
//	go run ./bench -ref ~/ideate -node ~/node/bin/node record board mcp
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// scale is what a run sizes its scenarios by.
type scale struct {
	records int // records in the store before the record and MCP figures
	calls   int // measured calls per figure
	files   int // files in the worktree and symbols repositories
	history int // finished items in the history scenario's archive
}

var scenarios = []struct {
	name string
	run  func(*bench)
}{
	{"record", recordScenario},
	{"board", boardScenario},
	{"mcp", mcpScenario},
	{"sync", syncScenario},
	{"gates", gatesScenario},
	{"plan", planScenario},
	{"worktree", worktreeScenario},
	{"symbols", symbolsScenario},
	{"history", historyScenario},
	{"team", teamScenario},
}

// bench is one run: its scratch directory, scale and subjects.
type bench struct {
	work string
	scale
	a, b    subject
	config  []string // KEY=VALUE set in every repository made
	seedMCP bool     // our stores' records too go through the MCP server
}

func main() {
	a := flag.String("a", "", "git-ideate binary A (default: the working tree, built)")
	b := flag.String("b", "", "git-ideate binary B (default: A)")
	ref := flag.String("ref", "", "a built checkout of the reference implementation: B becomes it")
	node := flag.String("node", "node", "the node binary that runs the reference")
	quick := flag.Bool("quick", false, "small sizes: a crash check, not a measurement")
	keep := flag.Bool("keep", false, "keep the scratch directory (its path is printed) for a look afterwards")
	records := flag.Int("records", 10000, "records in the store before the record and MCP figures")
	calls := flag.Int("calls", 200, "measured calls per figure")
	seedMCP := flag.Bool("seed-mcp", false, "seed our record stores through the MCP server, as the reference's (a burst of appends just before the figures), not with git fast-import")
	files := flag.Int("files", 10000, "files in the worktree and symbols repositories")
	history := flag.Int("history", 100000, "finished items in the history scenario's archive (also measured at 1000)")
	var config []string
	flag.Func("config", "KEY=VALUE: git config set in every repository the run makes (repeatable), e.g. core.fsync=none", func(kv string) error {
		if !strings.Contains(kv, "=") {
			return fmt.Errorf("%q is not KEY=VALUE", kv)
		}
		config = append(config, kv)
		return nil
	})
	flag.Parse()
	s := scale{*records, *calls, *files, *history}
	if *quick {
		s = scale{records: 20, calls: 3, files: 50, history: 200}
	}
	// Named by this process, so the next run removes it should this one
	// die (SIGKILL); must and a signal remove it on the way out.
	work, err := osproc.TempDir("bench")
	must(err)
	if *keep {
		defer fmt.Println("scratch directory kept:", work)
	} else {
		scratch = work
		defer os.RemoveAll(work)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sig
			os.RemoveAll(work)
			os.Exit(130)
		}()
	}
	if *a == "" {
		*a = filepath.Join(work, "bin", "git-ideate")
		must(goBuild(*a, "./cmd/git-ideate", "CGO_ENABLED=0"))
		helper := filepath.Join(work, "bin", "git-ideate-symbols")
		if err := goBuild(helper, "./cmd/git-ideate-symbols"); err != nil {
			fmt.Fprintf(os.Stderr, "bench: no tree-sitter helper (%v); the symbols scenario measures the fallback only\n", err)
		}
	}
	if *b == "" {
		*b = *a
	}
	bn := &bench{work: work, scale: s, a: ours("A", *a), config: config, seedMCP: *seedMCP}
	bn.b = ours("B", *b)
	if *ref != "" {
		bn.b = reference(*ref, *node)
	}
	want := flag.Args()
	fmt.Printf("bench %s: %s/%s, %d CPUs, load %s; A %s, B %s; %d records, %d calls per figure, %d files; git config %v; scratch on %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadAvg(), bn.a.describe(), bn.b.describe(), s.records, s.calls, s.files, config, describeFS(work))
	ran := 0
	for _, sc := range scenarios {
		if len(want) > 0 && !contains(want, sc.name) {
			continue
		}
		fmt.Printf("\n== %s\n", sc.name)
		sc.run(bn)
		ran++
	}
	if ran == 0 {
		fmt.Fprintf(os.Stderr, "bench: no scenario named %s\n", strings.Join(want, ", "))
		os.RemoveAll(scratch)
		os.Exit(2)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
