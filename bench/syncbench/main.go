// Command syncbench measures sharing the ideate refs through a git remote
// (a bare repository on a file path), the way a team meets it: a fresh
// git-ideate process per call, beside plain git doing the same transport
// and `git rev-parse HEAD`, measured interleaved in the same run.
//
//	1   a remote-authoritative claim (`work claim --remote origin`: the
//	    local transition, then one `git push --force-with-lease` of the
//	    item's ref) on a -claim-items board, beside a plain lease push of
//	    one ref and a local-only claim; with the remote's refs loose (as
//	    receive-pack leaves them) and again after `git gc` on the remote;
//	1b  the same against the large remote (-items item refs);
//	2   a no-op `git ideate sync` of a clone already in sync with the large
//	    remote, beside the no-op `git fetch` of the same refspecs (clone as
//	    the first sync left it; clone refs packed; remote gc'd too);
//	2b  a sync that pushes -push-items locally claimed items to it;
//	3   `git clone` of a remote with -records records and -clone-items
//	    items followed by the first `git ideate sync`, then checks that the
//	    clone holds exactly what the remote holds (refs, record export
//	    count, paged record read and work list counts).
//
// The remotes are filled fast through the library (record.Append,
// board.Create) in seed repositories, which `git ideate sync` then pushes
// once (timed: the first push of a whole namespace). One process of each
// kind also runs under GIT_TRACE2_EVENT to show where its time goes (each
// git process's wall time and longest regions; the rest is git-ideate's
// own work and process start). Every table prints the load average: the
// machine is shared, so compare figures of similar load, and the ratios.
//
//	go run ./bench/syncbench                      # full sizes, ~7 min
//	go run ./bench/syncbench -records 1000 -items 400 -clone-items 100 \
//	    -claim-items 200 -claims 10 -noop-runs 3 -clone-runs 2 -push-items 20   # quick
//	go run ./bench/syncbench -publish-scaling 1000,2000   # first sync push only
//
// push-scaling.sh beside it isolates git's own cost of the pushes a sync
// makes (synthetic refs, no git-ideate).
//
// Scratch repositories live under -work (default /work/tmp-syncbench, not
// /tmp, where file creation is slow on this machine) and are removed at the
// end unless -keep.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
)

var (
	bin            string
	publishTimeout time.Duration
	publishWithGit bool
	// used holds the items a figure has claimed, so later figures pick
	// open ones.
	used = map[string]bool{}
)

func main() {
	records := flag.Int("records", 10000, "records on the remotes")
	items := flag.Int("items", 10000, "item refs on the large remote (figure 2, 1b)")
	cloneItems := flag.Int("clone-items", 1000, "items on the fresh-clone remote (figure 3)")
	claimItems := flag.Int("claim-items", 1000, "items on the small claim remote (figure 1)")
	claims := flag.Int("claims", 30, "remote claims per claim figure (distinct items)")
	noops := flag.Int("noop-runs", 5, "no-op syncs (figure 2)")
	clones := flag.Int("clone-runs", 3, "fresh clone + sync runs (figure 3)")
	pushItems := flag.Int("push-items", 100, "locally claimed items a sync pushes to the large remote (figure 2b)")
	pubWith := flag.String("publish-with", "sync", "how the seed's refs reach the remotes: sync (`git ideate sync`, timed and traced) or git (`git push --atomic 'refs/ideate/*:refs/ideate/*'`, quicker)")
	pubTimeout := flag.Duration("publish-timeout", 20*time.Minute, "give up on the first `git ideate sync` push after this long and push with plain git")
	workDir := flag.String("work", "/work/tmp-syncbench", "scratch directory (removed at the end)")
	keep := flag.Bool("keep", false, "keep the scratch directory")
	traces := flag.Bool("trace", true, "run one process of each figure under GIT_TRACE2_EVENT and print the breakdown")
	scaling := flag.String("publish-scaling", "", "only time the first sync push of this many items each (e.g. 500,1000,2000), traced, and exit")
	flag.Parse()
	if *cloneItems > *items {
		*cloneItems = *items
	}
	if *claimItems < 2*(2**claims+1) {
		*claimItems = 2 * (2**claims + 1)
	}
	if need := 2*(2**claims+1) + 3**pushItems; *scaling == "" && *items < need {
		benchutil.Must(fmt.Errorf("-items %d is too few: figures 1b and 2b use %d distinct items (2×(2×claims+1) + 3×push-items)", *items, need))
	}

	benchutil.Must(os.RemoveAll(*workDir))
	benchutil.Must(os.MkdirAll(*workDir, 0o777))
	work := *workDir
	if !*keep {
		defer os.RemoveAll(work)
	}
	publishTimeout = *pubTimeout
	publishWithGit = *pubWith == "git"
	var err error
	bin, err = benchutil.Build(work)
	benchutil.Must(err)
	gv, _ := exec.Command("git", "version").Output()
	fmt.Printf("syncbench: %s, %s; remotes are bare repositories on a file path; scratch %s\n",
		time.Now().UTC().Format(time.RFC3339), strings.TrimSpace(string(gv)), work)
	fmt.Printf("source: %s\n", sourceFingerprint())
	fmt.Printf("sizes: records %d, items %d (large remote), %d (clone remote), %d (claim remote); %d claims, %d no-op syncs, %d clones\n\n",
		*records, *items, *cloneItems, *claimItems, *claims, *noops, *clones)

	if *scaling != "" {
		publishScaling(work, *scaling, *keep)
		return
	}

	// ---- Figure 1: remote claim on a small board.
	fmt.Println("== 1. remote-authoritative claim (one process per claim, distinct items)")
	claimRemote := bare(work, "claim.git")
	seed1 := filepath.Join(work, "claim-seed")
	benchutil.Must(benchutil.InitRepo(seed1))
	t0 := time.Now()
	fillItems(seed1, *claimItems)
	fmt.Printf("fill: %d items through board.Create in %v (%.0f creates/s)\n", *claimItems, time.Since(t0).Round(time.Millisecond), float64(*claimItems)/time.Since(t0).Seconds())
	waitMaintenance(seed1)
	publish(seed1, claimRemote)
	c1 := cloneAndSync(work, claimRemote, "claim-clone")
	claimFigure(c1, claimRemote, *claimItems, *claims, *traces, "remote refs loose, as receive-pack left them")
	remoteGC(claimRemote)
	claimFigure(c1, claimRemote, *claimItems, *claims, *traces, "after `git gc` on the remote")

	// ---- Seed for figures 2 and 3: records, then items in two steps.
	fmt.Println("\n== fill (through the library, in-process, maintenance on)")
	seed := filepath.Join(work, "seed")
	benchutil.Must(benchutil.InitRepo(seed))
	t0 = time.Now()
	fillRecords(seed, *records)
	fr := time.Since(t0)
	fmt.Printf("fill: %d records through record.Append in %v (%.0f appends/s)\n", *records, fr.Round(time.Millisecond), float64(*records)/math1(fr.Seconds()))
	t0 = time.Now()
	fillItems(seed, *cloneItems)
	fi := time.Since(t0)
	fmt.Printf("fill: %d items through board.Create in %v (%.0f creates/s)\n", *cloneItems, fi.Round(time.Millisecond), float64(*cloneItems)/math1(fi.Seconds()))
	waitMaintenance(seed)
	smallRemote := bare(work, "clone.git")
	publish(seed, smallRemote)
	t0 = time.Now()
	fillItems(seed, *items-*cloneItems)
	fi = time.Since(t0)
	fmt.Printf("fill: %d more items through board.Create in %v (%.0f creates/s)\n", *items-*cloneItems, fi.Round(time.Millisecond), float64(*items-*cloneItems)/math1(fi.Seconds()))
	waitMaintenance(seed)
	bigRemote := bare(work, "big.git")
	publish(seed, bigRemote)

	// ---- Figure 2: no-op sync against the large remote.
	fmt.Printf("\n== 2. no-op sync, %d item refs and %d records on the remote\n", *items, *records)
	c2 := cloneAndSync(work, bigRemote, "big-clone")
	noopFigure(c2, bigRemote, *items, *noops, *traces, "a: clone as the first sync left it, remote refs loose")
	gitOK(c2, "pack-refs", "--all")
	noopFigure(c2, bigRemote, *items, *noops, false, "b: after `git pack-refs --all` in the clone, remote refs loose")

	// ---- Figure 1b: remote claim against the large remote.
	fmt.Printf("\n== 1b. remote-authoritative claim against the large remote (%d item refs)\n", *items)
	claimFigure(c2, bigRemote, *items, *claims, *traces, "remote refs loose")
	remoteGC(bigRemote)
	claimFigure(c2, bigRemote, *items, *claims, *traces, "after `git gc` on the remote")
	// The local-only claims of 1b are pushed by one sync, so the next
	// syncs are no-ops again.
	_, out, err := benchutil.Run(c2, bin, "sync", "--json")
	benchutil.Must(err)
	fmt.Printf("level: one sync pushed the %d local-only claims of 1b\n", syncSummary(out).ItemsPushed)
	gitOK(c2, "pack-refs", "--all")
	noopFigure(c2, bigRemote, *items, *noops, *traces, "c: clone refs packed, after `git gc` on the remote")

	// ---- Figure 2b: a sync that pushes some changed items.
	fmt.Printf("\n== 2b. sync pushing %d locally claimed items to the large remote (%d item refs)\n", *pushItems, *items)
	pushFigure(c2, bigRemote, *items, *pushItems, 3, *traces)

	// ---- Figure 3: fresh clone + first sync.
	fmt.Printf("\n== 3. fresh clone + first sync, %d records and %d items on the remote\n", *records, *cloneItems)
	cloneFigure(work, smallRemote, seed, *clones, *traces)
}

// sourceFingerprint names the code the binary was built from: others edit
// the tree while benchmarks run, so a table is only meaningful beside it.
// It hashes every .go file outside bench/ and names the newest.
func sourceFingerprint() string {
	h := sha256.New()
	var newest time.Time
	newestName := ""
	filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || p == "bench") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		if fi, err := d.Info(); err == nil && fi.ModTime().After(newest) {
			newest, newestName = fi.ModTime(), p
		}
		return nil
	})
	head, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	return fmt.Sprintf("HEAD %s + working tree, non-test .go outside bench/ sha256 %x, newest %s (%s)",
		strings.TrimSpace(string(head)), h.Sum(nil)[:6], newestName, newest.UTC().Format(time.RFC3339))
}

func math1(x float64) float64 {
	if x <= 0 {
		return 1
	}
	return x
}

// ---------------------------------------------------------------- setup

func bare(work, name string) string {
	p := filepath.Join(work, name)
	gitOK("", "init", "-q", "--bare", p)
	return p
}

func gitOK(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		benchutil.Must(fmt.Errorf("git %v: %v\n%s", args, err, out))
	}
	return strings.TrimSpace(string(out))
}

func fillRecords(repo string, n int) {
	g, err := gitstore.Open(repo)
	benchutil.Must(err)
	defer g.Close()
	rec := record.Open(g)
	body := strings.Repeat("The lockfile CAS held under contention; ", 8)[:300]
	for i := 0; i < n; i++ {
		_, err := rec.Append(context.Background(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("bench claim %d", i),
			Scope: fmt.Sprintf("bench/scope-%d", i%7), VerificationAnchor: fmt.Sprintf("test:%d", i),
			Source: record.Source{CapturePoint: "bench", SessionID: "bench"}, Content: body})
		benchutil.Must(err)
	}
}

func fillItems(repo string, n int) []string {
	g, err := gitstore.Open(repo)
	benchutil.Must(err)
	defer g.Close()
	b := board.Open(g, record.Open(g))
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out, err := b.Create(context.Background(), board.CreateInput{Title: fmt.Sprintf("item %d", i), Spec: strings.Repeat("spec ", 40),
			SpecFormat: "plan/outline", CreatedBy: board.Actor{Human: "bench"}})
		benchutil.Must(err)
		ids = append(ids, out.Item.ID)
	}
	return ids
}

// waitMaintenance waits for the tool's detached repack (its lock file) and
// gives a detached pack-refs a moment, so measurements do not share the
// machine with them.
func waitMaintenance(repo string) {
	lock := filepath.Join(gitDir(repo), "ideate", "maintenance.lock")
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(lock); err != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
}

func gitDir(repo string) string {
	if strings.HasSuffix(repo, ".git") {
		return repo
	}
	return filepath.Join(repo, ".git")
}

// publish adds remote as a remote of seed, pushes its branch, and pushes
// the ideate refs with `git ideate sync` (timed and traced: the first push
// of a whole namespace). If that fails or takes longer than
// -publish-timeout, the refs are pushed with plain git instead.
func publish(seed, remote string) {
	name := strings.TrimSuffix(filepath.Base(remote), ".git")
	gitOK(seed, "remote", "add", name, remote)
	gitOK(seed, "push", "-q", name, "HEAD")
	n := len(ideateRefs(gitDir(seed)))
	if publishWithGit {
		t0 := time.Now()
		gitOK(seed, "push", "-q", "--atomic", name, "refs/ideate/*:refs/ideate/*")
		fmt.Printf("publish: %d refs with `git push --atomic %s 'refs/ideate/*:refs/ideate/*'` in %v\n", n, name, time.Since(t0).Round(time.Millisecond))
		return
	}
	fmt.Printf("publish: first `git ideate sync %s` of %d refs, traced:\n", name, n)
	wall, out, err := trace(seed, publishTimeout, bin, "sync", name, "--json")
	if err != nil {
		fmt.Printf("publish: `git ideate sync %s` FAILED after %v: %v\n", name, wall.Round(time.Millisecond), firstLines(err.Error(), 3))
		t0 := time.Now()
		gitOK(seed, "push", "-q", "--atomic", name, "refs/ideate/*:refs/ideate/*")
		fmt.Printf("publish: pushed instead with `git push --atomic %s 'refs/ideate/*:refs/ideate/*'` in %v\n", name, time.Since(t0).Round(time.Millisecond))
		return
	}
	fmt.Printf("publish: first `git ideate sync %s` pushed %d refs in %v\n", name, syncSummary(out).RefsPushed, wall.Round(time.Millisecond))
}

// remoteGC runs `git gc` on a bare remote (packs its refs and objects and
// writes a commit-graph), the maintenance a hosted remote gets.
func remoteGC(remote string) {
	t0 := time.Now()
	gitOK("", "--git-dir="+remote, "gc", "-q")
	l, p := refCounts(remote)
	fmt.Printf("remote: `git gc` in %v; now %d loose ref files, %d packed refs\n", time.Since(t0).Round(time.Millisecond), l, p)
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	if len(ls) > n {
		ls = ls[:n]
	}
	out := strings.Join(ls, " | ")
	if len(out) > 400 {
		out = out[:400] + "…"
	}
	return out
}

type summary struct {
	Rounds       int    `json:"rounds"`
	Record       string `json:"record"`
	Steering     string `json:"steering"`
	Notes        string `json:"notes"`
	ItemsPulled  int    `json:"items_pulled"`
	ItemsPushed  int    `json:"items_pushed"`
	ItemsRebased int    `json:"items_rebased"`
	RefsPushed   int    `json:"refs_pushed"`
	Lost         []any  `json:"lost"`
}

func syncSummary(out []byte) summary {
	var s summary
	benchutil.Must(json.Unmarshal(out, &s))
	return s
}

// cloneAndSync clones remote and runs the first sync in the clone.
func cloneAndSync(work, remote, name string) string {
	dir := filepath.Join(work, name)
	t0 := time.Now()
	gitOK("", "clone", "-q", remote, dir)
	tc := time.Since(t0)
	s, out, err := benchutil.Run(dir, bin, "sync", "--json")
	benchutil.Must(err)
	sum := syncSummary(out)
	fmt.Printf("clone: `git clone` %v + first `git ideate sync` %v (record %s, %d items pulled)\n",
		tc.Round(time.Millisecond), s.Wall.Round(time.Millisecond), sum.Record, sum.ItemsPulled)
	waitMaintenance(dir)
	return dir
}

// ------------------------------------------------------------- figure 1

// loadavg is the machine's 1, 5 and 15 minute load, printed beside each
// table: the figures are only comparable at a similar load.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func header() {
	fmt.Printf("load average before the runs: %s\n", loadavg())
	fmt.Printf("%-8s %-52s %10s %10s %8s\n", "n", "figure", "median", "cpu", "ratio")
}

func row(n int, name string, s, base benchutil.Stats) {
	fmt.Printf("%-8d %-52s %10v %10v %8.2f\n", n, name, s.Wall.Round(10*time.Microsecond), s.CPU.Round(10*time.Microsecond), float64(s.Wall)/float64(base.Wall))
}

func itemRefs(gitDir string) map[string]string {
	out := gitOK("", "--git-dir="+gitDir, "for-each-ref", "--format=%(refname) %(objectname)", board.ItemsPrefix)
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if n, h, ok := strings.Cut(l, " "); ok {
			m[n] = h
		}
	}
	return m
}

// openItems returns k item ids of the clone no figure has used yet, and
// marks them used.
func openItems(clone string, k int) []string {
	var ids []string
	for r := range itemRefs(gitDir(clone)) {
		if id := strings.TrimPrefix(r, board.ItemsPrefix); !used[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) < k {
		benchutil.Must(fmt.Errorf("need %d unused items, have %d (raise -items / -claim-items)", k, len(ids)))
	}
	for _, id := range ids[:k] {
		used[id] = true
	}
	return ids[:k]
}

func claimFigure(clone, remote string, n, claims int, traces bool, label string) {
	l, p := refCounts(remote)
	fmt.Printf("-- %s (remote: %d loose ref files, %d packed refs)\n", label, l, p)
	ids := openItems(clone, 2*claims+1)
	remoteIDs, localIDs := ids[:claims], ids[claims:2*claims]

	// A chain of commits for the plain push: each push moves one ref by one
	// new commit object, with the lease naming the value before.
	leaseRef := fmt.Sprintf("refs/bench/lease-%d", len(used))
	tree := gitOK(clone, "rev-parse", "HEAD^{tree}")
	prev := gitOK(clone, "rev-parse", "HEAD")
	chain := []string{prev}
	for i := 0; i <= claims; i++ {
		c := gitOK(clone, "commit-tree", tree, "-p", prev, "-m", fmt.Sprintf("bench push %s %d", leaseRef, i))
		chain = append(chain, c)
		prev = c
	}
	pushArgs := func(old, new string) []string {
		return []string{"push", "--porcelain", "--no-verify", "--force-with-lease=" + leaseRef + ":" + old, "origin", new + ":" + leaseRef}
	}
	_, _, err := benchutil.Run(clone, "git", pushArgs("", chain[0])...)
	benchutil.Must(err)

	var base, push, rclaim, lclaim []benchutil.Sample
	for i := 0; i < claims; i++ {
		s, _, err := benchutil.Run(clone, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		base = append(base, s)
		s, out, err := benchutil.Run(clone, "git", pushArgs(chain[i], chain[i+1])...)
		benchutil.Must(err)
		if !bytes.Contains(out, []byte(leaseRef)) || bytes.Contains(out, []byte("[rejected]")) {
			benchutil.Must(fmt.Errorf("plain push %d not accepted: %s", i, out))
		}
		push = append(push, s)
		s, out, err = benchutil.Run(clone, bin, "work", "claim", "--id", remoteIDs[i], "--human", "bench", "--agent", "w/1", "--remote", "origin")
		benchutil.Must(err)
		checkClaimed(out, remoteIDs[i])
		rclaim = append(rclaim, s)
		s, out, err = benchutil.Run(clone, bin, "work", "claim", "--id", localIDs[i], "--human", "bench", "--agent", "w/1")
		benchutil.Must(err)
		checkClaimed(out, localIDs[i])
		lclaim = append(lclaim, s)
	}
	b := benchutil.Summarize(base)
	header()
	row(n, "git rev-parse HEAD (baseline)", b, b)
	ps := benchutil.Summarize(push)
	row(n, "git push --force-with-lease, one ref (plain git)", ps, b)
	rc := benchutil.Summarize(rclaim)
	row(n, "work claim --remote origin", rc, b)
	lc := benchutil.Summarize(lclaim)
	row(n, "work claim (local only)", lc, b)
	fmt.Printf("%-8d %-52s %10.2f   (remote claim / plain push)\n", n, "ratio to plain push", float64(rc.Wall)/float64(ps.Wall))
	fmt.Printf("%-8d %-52s %10v   (remote claim - local claim; the plain push is %v)\n", n, "publish overhead", (rc.Wall - lc.Wall).Round(10*time.Microsecond), ps.Wall.Round(10*time.Microsecond))
	fmt.Printf("runs: remote claim %v\n", walls(rclaim))
	verdict("remote claim", rc.Wall, 100*time.Millisecond)

	// Correctness: the remote holds exactly the clone's head of every
	// remotely claimed item, and the local-only claims never reached it.
	loc, rem := itemRefs(gitDir(clone)), itemRefs(remote)
	bad := 0
	for _, id := range remoteIDs {
		if loc[board.RefName(id)] != rem[board.RefName(id)] {
			bad++
		}
	}
	for _, id := range localIDs {
		if loc[board.RefName(id)] == rem[board.RefName(id)] {
			bad++
		}
	}
	fmt.Printf("check: %d remote claims on the remote at the clone's head, %d local-only claims not on the remote: %s\n",
		claims, claims, okText(bad == 0))

	if traces {
		fmt.Println("trace: one remote claim under GIT_TRACE2_EVENT")
		_, _, err := trace(clone, 0, bin, "work", "claim", "--id", ids[2*claims], "--human", "bench", "--agent", "w/1", "--remote", "origin")
		benchutil.Must(err)
		fmt.Println("trace: one plain push under GIT_TRACE2_EVENT")
		_, _, err = trace(clone, 0, "git", pushArgs(chain[claims], chain[claims+1])...)
		benchutil.Must(err)
	}
}

func checkClaimed(out []byte, id string) {
	var it board.Item
	benchutil.Must(json.Unmarshal(out, &it))
	if it.ID != id || it.Status != board.StatusInProgress || it.Claim == nil {
		benchutil.Must(fmt.Errorf("claim of %s: got %s", id, out))
	}
}

func okText(ok bool) string {
	if ok {
		return "OK"
	}
	return "MISMATCH"
}

func verdict(what string, got, target time.Duration) {
	v := "meets"
	if got > target {
		v = "MISSES"
	}
	fmt.Printf("target: %s median %v %s the target ≤ %v\n", what, got.Round(100*time.Microsecond), v, target)
}

// ------------------------------------------------------------- figure 2

func noopFigure(clone, remote string, n, runs int, traces bool, label string) {
	cl, cp := refCounts(gitDir(clone))
	rl, rp := refCounts(remote)
	fmt.Printf("-- %s (clone: %d loose ref files, %d packed refs; remote: %d loose, %d packed)\n", label, cl, cp, rl, rp)
	fetch := append([]string{"fetch", "--no-tags", "--no-write-fetch-head", "--no-auto-maintenance", "--no-recurse-submodules", "--prune", "--quiet", "origin"},
		gitstore.FetchRefspecs("origin")...)
	var base, fe, sy []benchutil.Sample
	for i := 0; i < runs; i++ {
		s, _, err := benchutil.Run(clone, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		base = append(base, s)
		s, _, err = benchutil.Run(clone, "git", fetch...)
		benchutil.Must(err)
		fe = append(fe, s)
		s, out, err := benchutil.Run(clone, bin, "sync", "--json")
		benchutil.Must(err)
		sum := syncSummary(out)
		if sum.RefsPushed != 0 || sum.ItemsPulled != 0 || sum.ItemsRebased != 0 || sum.Record != "up-to-date" || sum.Rounds != 1 {
			benchutil.Must(fmt.Errorf("no-op sync was not a no-op: %s", out))
		}
		sy = append(sy, s)
	}
	b := benchutil.Summarize(base)
	header()
	row(n, "git rev-parse HEAD (baseline)", b, b)
	f := benchutil.Summarize(fe)
	row(n, "git fetch, same refspecs, no-op (plain git)", f, b)
	ss := benchutil.Summarize(sy)
	row(n, "git-ideate sync, no-op", ss, b)
	fmt.Printf("%-8d %-52s %10.2f   (sync / fetch; sync - fetch = %v)\n", n, "ratio to plain fetch", float64(ss.Wall)/float64(f.Wall), (ss.Wall - f.Wall).Round(10*time.Microsecond))
	fmt.Printf("runs: sync %v, fetch %v\n", walls(sy), walls(fe))
	verdict("no-op sync", ss.Wall, time.Second)
	if traces {
		fmt.Println("trace: one no-op sync under GIT_TRACE2_EVENT")
		_, _, err := trace(clone, 0, bin, "sync", "--json")
		benchutil.Must(err)
	}
}

// pushFigure claims k items locally through the library, then times the
// sync that pushes them; runs times.
func pushFigure(clone, remote string, n, k, runs int, traces bool) {
	var sy []time.Duration
	for run := 0; run < runs; run++ {
		ids := openItems(clone, k)
		g, err := gitstore.Open(clone)
		benchutil.Must(err)
		b := board.Open(g, record.Open(g))
		for _, id := range ids {
			_, err := b.Claim(context.Background(), id, board.Actor{Human: "bench", Agent: "w/2"}, nil)
			benchutil.Must(err)
		}
		g.Close()
		waitMaintenance(clone)
		var wall time.Duration
		var out []byte
		if traces && run == runs-1 {
			fmt.Printf("trace: sync pushing %d items under GIT_TRACE2_EVENT (run %d)\n", k, run+1)
			wall, out, err = trace(clone, 0, bin, "sync", "--json")
		} else {
			var s benchutil.Sample
			s, out, err = benchutil.Run(clone, bin, "sync", "--json")
			wall = s.Wall
		}
		benchutil.Must(err)
		sum := syncSummary(out)
		if sum.ItemsPushed != k || sum.RefsPushed != k {
			benchutil.Must(fmt.Errorf("sync pushed %d items / %d refs, want %d: %s", sum.ItemsPushed, sum.RefsPushed, k, out))
		}
		loc, rem := itemRefs(gitDir(clone)), itemRefs(remote)
		bad := 0
		for _, id := range ids {
			if loc[board.RefName(id)] != rem[board.RefName(id)] {
				bad++
			}
		}
		if bad > 0 {
			benchutil.Must(fmt.Errorf("%d of %d pushed items differ on the remote", bad, k))
		}
		sy = append(sy, wall)
	}
	fmt.Printf("%-8d %-52s %10v   runs %v\n", n, fmt.Sprintf("git-ideate sync pushing %d items", k), benchutil.Median(sy).Round(time.Millisecond), round(sy))
	fmt.Printf("check: each run pushed exactly the %d claimed items, and the remote holds the clone's heads: OK\n", k)
}

func walls(ss []benchutil.Sample) []time.Duration {
	var out []time.Duration
	for _, s := range ss {
		out = append(out, s.Wall.Round(time.Millisecond))
	}
	return out
}

// refCounts counts loose ref files under refs/ and lines of packed-refs.
func refCounts(gitDir string) (loose, packed int) {
	filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			loose++
		}
		return nil
	})
	if data, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if len(l) > 41 && l[0] != '#' && l[0] != '^' {
				packed++
			}
		}
	}
	return
}

// ------------------------------------------------------------- figure 3

func cloneFigure(work, remote, seed string, runs int, traces bool) {
	var cl, sy, tot []time.Duration
	var last string
	var lastSum summary
	for i := 0; i < runs; i++ {
		dir := filepath.Join(work, fmt.Sprintf("fresh%d", i))
		t0 := time.Now()
		gitOK("", "clone", "-q", remote, dir)
		tc := time.Since(t0)
		fmt.Printf("run %d: git clone %v; first sync under GIT_TRACE2_EVENT:\n", i+1, tc.Round(time.Millisecond))
		w, out, err := traceCompact(dir, bin, "sync", "--json")
		benchutil.Must(err)
		tot = append(tot, time.Since(t0))
		cl, sy = append(cl, tc), append(sy, w)
		lastSum = syncSummary(out)
		if last != "" {
			waitMaintenance(last)
			os.RemoveAll(last)
		}
		last = dir
	}
	fmt.Printf("load average after the runs: %s\n", loadavg())
	fmt.Printf("%-8s %-52s %10s   %s\n", "runs", "figure", "median", "runs")
	fmt.Printf("%-8d %-52s %10v   %v\n", runs, "git clone", benchutil.Median(cl).Round(time.Millisecond), round(cl))
	fmt.Printf("%-8d %-52s %10v   %v\n", runs, "git-ideate sync (first, in the new clone)", benchutil.Median(sy).Round(time.Millisecond), round(sy))
	fmt.Printf("%-8d %-52s %10v   %v\n", runs, "clone + sync", benchutil.Median(tot).Round(time.Millisecond), round(tot))
	fmt.Printf("first sync summary: record %s, steering %s, notes %s, %d items pulled, %d refs pushed, %d rounds\n",
		lastSum.Record, lastSum.Steering, lastSum.Notes, lastSum.ItemsPulled, lastSum.RefsPushed, lastSum.Rounds)
	verdict("clone + sync", benchutil.Median(tot), 5*time.Second)

	// Correctness on the last clone.
	waitMaintenance(last)
	rem := ideateRefs(remote)
	loc := ideateRefs(gitDir(last))
	same := len(rem) == len(loc)
	for k, v := range rem {
		if loc[k] != v {
			same = false
		}
	}
	fmt.Printf("check: refs/ideate/* in the clone (%d refs) equal the remote's (%d refs): %s\n", len(loc), len(rem), okText(same))
	want := exportCount(seed, filepath.Join(work, "export-seed"))
	got := exportCount(last, filepath.Join(work, "export-clone"))
	fmt.Printf("check: record export --json total: clone %d, seed %d: %s\n", got, want, okText(got == want))
	t0 := time.Now()
	nrec, pr := walk(last, "records", "record", "read", "--json")
	fmt.Printf("check: record read --json paged (--limit 500): %d records in %d pages (%v): %s\n", nrec, pr, time.Since(t0).Round(time.Millisecond), okText(nrec == want))
	t0 = time.Now()
	nit, pi := walk(last, "items", "work", "list", "--json")
	nref := 0
	for k := range rem {
		if strings.HasPrefix(k, board.ItemsPrefix) {
			nref++
		}
	}
	fmt.Printf("check: work list --json paged (--limit 500): %d items in %d pages (%v); item refs on the remote %d: %s\n", nit, pi, time.Since(t0).Round(time.Millisecond), nref, okText(nit == nref))
	if traces {
		dir := filepath.Join(work, "fresh-trace")
		gitOK("", "clone", "-q", remote, dir)
		fmt.Println("trace: one first sync in a fresh clone under GIT_TRACE2_EVENT")
		_, _, err := trace(dir, 0, bin, "sync", "--json")
		benchutil.Must(err)
	}
}

func round(ds []time.Duration) []time.Duration {
	var out []time.Duration
	for _, d := range ds {
		out = append(out, d.Round(time.Millisecond))
	}
	return out
}

func ideateRefs(gitDir string) map[string]string {
	out := gitOK("", "--git-dir="+gitDir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/ideate/", gitstore.NotesRef)
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if n, h, ok := strings.Cut(l, " "); ok {
			m[n] = h
		}
	}
	return m
}

func exportCount(repo, dir string) int {
	_, out, err := benchutil.Run(repo, bin, "record", "export", dir, "--json")
	benchutil.Must(err)
	var r struct {
		Total int `json:"total"`
	}
	benchutil.Must(json.Unmarshal(out, &r))
	return r.Total
}

// walk pages through a --json listing and counts the rows of field.
func walk(repo, field string, args ...string) (rows, pages int) {
	cursor := ""
	for {
		a := append(append([]string(nil), args...), "--limit", "500")
		if cursor != "" {
			a = append(a, "--cursor", cursor)
		}
		_, out, err := benchutil.Run(repo, bin, a...)
		benchutil.Must(err)
		pages++
		var page map[string]json.RawMessage
		benchutil.Must(json.Unmarshal(out, &page))
		var rs []json.RawMessage
		benchutil.Must(json.Unmarshal(page[field], &rs))
		rows += len(rs)
		var next *string
		if raw, ok := page["next_cursor"]; ok {
			benchutil.Must(json.Unmarshal(raw, &next))
		}
		if next == nil || *next == "" {
			return
		}
		cursor = *next
	}
}

// ---------------------------------------------------------------- trace

// trace runs one process with GIT_TRACE2_EVENT and prints its wall time,
// each git process it started (top level: children of the measured
// process; indented: their children, e.g. the remote side of a file-path
// transport) with its own wall time, and each git process's longest
// regions.
func trace(dir string, timeout time.Duration, prog string, args ...string) (time.Duration, []byte, error) {
	return traceRun(false, dir, timeout, prog, args...)
}

// traceCompact is trace printing one line: the whole wall time, each
// top-level git child's (by subcommand), and git-ideate's own rest.
func traceCompact(dir string, prog string, args ...string) (time.Duration, []byte, error) {
	return traceRun(true, dir, 0, prog, args...)
}

func traceRun(compact bool, dir string, timeout time.Duration, prog string, args ...string) (time.Duration, []byte, error) {
	f, err := os.CreateTemp(filepath.Dir(bin), "trace2-*.json")
	benchutil.Must(err)
	f.Close()
	defer os.Remove(f.Name())
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TRACE2_EVENT="+f.Name())
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	t0 := time.Now()
	runErr := cmd.Run()
	wall := time.Since(t0)
	type region struct {
		name string
		d    time.Duration
	}
	type proc struct {
		sid     string
		argv    []string
		wall    time.Duration
		regions []region
	}
	procs := map[string]*proc{}
	var order []string
	data, err := os.ReadFile(f.Name())
	benchutil.Must(err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct {
			Event    string   `json:"event"`
			SID      string   `json:"sid"`
			Argv     []string `json:"argv"`
			TAbs     float64  `json:"t_abs"`
			TRel     float64  `json:"t_rel"`
			Nesting  int      `json:"nesting"`
			Category string   `json:"category"`
			Label    string   `json:"label"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		p := procs[ev.SID]
		if p == nil {
			p = &proc{sid: ev.SID}
			procs[ev.SID] = p
			order = append(order, ev.SID)
		}
		switch ev.Event {
		case "start":
			p.argv = ev.Argv
		case "exit", "atexit":
			p.wall = time.Duration(ev.TAbs * float64(time.Second))
		case "region_leave":
			if ev.Nesting <= 2 {
				p.regions = append(p.regions, region{strings.Repeat("  ", ev.Nesting-1) + ev.Category + "/" + ev.Label, time.Duration(ev.TRel * float64(time.Second))})
			}
		}
	}
	var children time.Duration
	var parts []string
	for _, sid := range order {
		if !strings.Contains(sid, "/") {
			p := procs[sid]
			children += p.wall
			sub := "?"
			for _, a := range p.argv[min(1, len(p.argv)):] {
				if !strings.HasPrefix(a, "-") {
					sub = a
					break
				}
			}
			parts = append(parts, fmt.Sprintf("git %s %v", sub, p.wall.Round(time.Millisecond)))
		}
	}
	if runErr != nil {
		runErr = fmt.Errorf("%s %v: %w: %s", filepath.Base(prog), firstLines(strings.Join(args, " "), 1), runErr, errb.String())
	}
	if compact {
		fmt.Printf("  whole %v = %s + git-ideate's own %v\n", wall.Round(time.Millisecond), strings.Join(parts, " + "), (wall - children).Round(time.Millisecond))
		return wall, outb.Bytes(), runErr
	}
	fmt.Printf("  %-60s %9v\n", "whole process (measured outside)", wall.Round(100*time.Microsecond))
	for _, sid := range order {
		p := procs[sid]
		depth := strings.Count(sid, "/")
		name := strings.Join(p.argv, " ")
		if i := strings.Index(name, " --force-with-lease"); i > 0 && strings.HasPrefix(name, "git push") {
			name = name[:i] + " --force-with-lease=… (" + fmt.Sprint(strings.Count(name, "--force-with-lease")) + " refs)"
		}
		if len(name) > 58-2*depth {
			name = name[:58-2*depth] + "…"
		}
		fmt.Printf("  %s%-*s %9v\n", strings.Repeat("  ", depth+1), 58-2*depth, name, p.wall.Round(100*time.Microsecond))
		rs := p.regions
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].d > rs[j].d })
		for i, r := range rs {
			if i == 4 || r.d < time.Millisecond {
				break
			}
			fmt.Printf("  %s  region %-*s %9v\n", strings.Repeat("  ", depth+1), 49-2*depth, r.name, r.d.Round(100*time.Microsecond))
		}
	}
	if filepath.Base(prog) == "git-ideate" {
		fmt.Printf("  %-60s %9v\n", "git-ideate's own (whole - top-level git children)", (wall - children).Round(100*time.Microsecond))
	}
	return wall, outb.Bytes(), runErr
}

// publishScaling times the first `git ideate sync` push of n items to an
// empty remote for each n, under GIT_TRACE2_EVENT.
func publishScaling(work, sizes string, keep bool) {
	for _, f := range strings.Split(sizes, ",") {
		var n int
		_, err := fmt.Sscan(f, &n)
		benchutil.Must(err)
		seed := filepath.Join(work, fmt.Sprintf("scale-%d", n))
		benchutil.Must(benchutil.InitRepo(seed))
		fillItems(seed, n)
		waitMaintenance(seed)
		remote := bare(work, fmt.Sprintf("scale-%d.git", n))
		gitOK(seed, "remote", "add", "origin", remote)
		fmt.Printf("first sync push of %d items (+ record ref): traced\n", n)
		if _, _, err := trace(seed, 0, bin, "sync", "--json"); err != nil {
			fmt.Println("  failed:", firstLines(err.Error(), 3))
		}
		if !keep {
			os.RemoveAll(seed)
			os.RemoveAll(remote)
		}
	}
}
