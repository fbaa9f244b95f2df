package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// historyScenario: a board with a long history, at 1k finished items and
// at b.history (100k by default), all of them in the archive as a sync
// leaves them (board.ArchiveRef), and 100 open items, in a bare remote
// served over smart HTTP (git http-backend with receive.fsckObjects) and a
// clone in step with it. Figures, each the median of b.calls rounds:
//
//   - a remote claim (`work claim --remote origin`, then an untimed
//     release) against a plain `git push --force-with-lease` of one ref
//     carrying one new commit to the same remote, taking turns;
//   - a CLI claim and `work ready --claim` (local), each then released;
//   - the first claim through the remote on a fresh clone (its refs
//     fetched by plain git, so the board index is built by the claim), wall
//     time and peak memory;
//   - an MCP server's peak memory after b.calls rounds of work_list (open),
//     work_claim and work_release.
//
// The fixture is one `git fast-import` stream: each finished item's three
// commits (create, claim, complete) as the CLI writes them (copied from
// items the CLI made, the id replaced), the archive commits on top (1000
// tips each), the open items' refs. The clone shares the remote's pack by
// a local clone.
func historyScenario(b *bench) {
	a, _ := b.oursOnly()
	doneChain, openChain := productChains(b, a)
	calls := min(b.calls, 30)
	type figs struct{ claim, ready, remote, push, remoteCPU, pushCPU []time.Duration }
	at := map[int]*figs{}
	sizes := []int{1000, b.history}
	if b.history <= 1000 {
		sizes = []int{b.history}
	}
	for _, n := range sizes {
		f := &figs{}
		at[n] = f
		root := filepath.Join(b.work, fmt.Sprintf("history-%d", n))
		bare := filepath.Join(root, "remote.git")
		must(os.MkdirAll(root, 0o755))
		git(root, "init", "-q", "--bare", bare)
		seed := b.newRepo(fmt.Sprintf("history-seed-%d", n))
		git(seed, "push", "-q", bare, "HEAD:refs/heads/main")
		git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
		t0 := time.Now()
		open := historyFixture(bare, doneChain, openChain, n, 100)
		git(bare, "pack-refs", "--all")
		fmt.Printf("fixture: %d archived items + %d open in %v (%s of packs)\n", n, len(open), time.Since(t0).Round(time.Millisecond), dirSize(filepath.Join(bare, "objects", "pack")))
		url, stop := serveHTTP(bare)
		clone := filepath.Join(root, "clone")
		git(root, "clone", "-q", bare, clone)
		git(clone, "remote", "set-url", "origin", url)
		for _, kv := range b.config {
			k, v, _ := strings.Cut(kv, "=")
			git(clone, "config", k, v)
		}
		// The first claim through the remote on a fresh clone holding the
		// remote's refs as a sync names them (written directly: a fetch's
		// connectivity check of the whole history takes minutes here).
		fresh := filepath.Join(root, "fresh")
		git(root, "clone", "-q", bare, fresh)
		git(fresh, "remote", "set-url", "origin", url)
		asSynced(bare, fresh)
		asSynced(bare, clone)
		// The fixture's hundreds of MiB are written back first: the
		// claim's one fsync would otherwise wait for them (ext4 commits
		// its journal with the data written before it).
		run(root, "", nil, "sync")
		x, out := run(fresh, "", nil, a.bin, "work", "claim", "--id", open[len(open)-1], "--human", "bench", "--remote", "origin")
		fmt.Printf("first claim through the remote on a fresh clone: %v, peak RSS %.1f MiB\n", x.wall.Round(time.Millisecond), float64(x.rss)/1024)
		run(fresh, "", nil, a.bin, "work", "release", "--id", open[len(open)-1], "--token", strconv.FormatInt(claimToken(out), 10), "--remote", "origin")
		remoteIDs, localIDs := open[:40], open[40:80]
		tree := git(clone, "rev-parse", "HEAD^{tree}")
		old := ""
		for i := 0; i < calls; i++ {
			id := remoteIDs[i%len(remoteIDs)]
			claim := func() {
				x, out := run(clone, "", nil, a.bin, "work", "claim", "--id", id, "--human", "bench", "--remote", "origin")
				f.remote, f.remoteCPU = append(f.remote, x.wall), append(f.remoteCPU, x.cpu)
				run(clone, "", nil, a.bin, "work", "release", "--id", id, "--token", strconv.FormatInt(claimToken(out), 10), "--remote", "origin")
			}
			push := func() {
				args := []string{"commit-tree", tree, "-m", fmt.Sprintf("push %d", i)}
				if old != "" {
					args = append(args, "-p", old)
				}
				next := git(clone, args...)
				x, _ := run(clone, "", nil, "git", "push", "-q", "--force-with-lease=refs/ideate/bench:"+old, "origin", next+":refs/ideate/bench")
				f.push, f.pushCPU = append(f.push, x.wall), append(f.pushCPU, x.cpu)
				old = next
			}
			if i%2 == 0 {
				claim()
				push()
			} else {
				push()
				claim()
			}
			lid := localIDs[i%len(localIDs)]
			x, out := run(clone, "", nil, a.bin, "work", "claim", "--id", lid, "--human", "bench")
			f.claim = append(f.claim, x.wall)
			run(clone, "", nil, a.bin, "work", "release", "--id", lid, "--token", strconv.FormatInt(claimToken(out), 10))
			x, out = run(clone, "", nil, a.bin, "work", "ready", "--claim", "--human", "bench", "--json")
			f.ready = append(f.ready, x.wall)
			run(clone, "", nil, a.bin, "work", "release", "--id", firstID(out), "--token", strconv.FormatInt(claimToken(out), 10))
		}
		if n == sizes[len(sizes)-1] {
			c := startMCP(a, clone)
			for i := 0; i < calls; i++ {
				c.tool("work_list", map[string]any{"status": "open"})
				out, _ := c.tool("work_claim", map[string]any{"id": localIDs[i%len(localIDs)], "actor_human": "bench"})
				c.tool("work_release", map[string]any{"id": localIDs[i%len(localIDs)], "claim_token": claimToken(out)})
			}
			fmt.Printf("MCP server after %d rounds of work_list (open), work_claim, work_release: peak RSS %.1f MiB, RSS %.1f MiB\n", calls, c.memKiB("VmHWM")/1024, c.memKiB("VmRSS")/1024)
			c.stop()
		}
		stop()
		r, p := median(f.remote), median(f.push)
		fmt.Printf("%d archived: remote claim %v, plain lease push %v (claim ÷ push %.2f; client CPU %v ÷ %v); CLI claim %v; work ready --claim %v\n",
			n, r.Round(time.Microsecond), p.Round(time.Microsecond), ratio(r, p), median(f.remoteCPU).Round(time.Microsecond), median(f.pushCPU).Round(time.Microsecond),
			median(f.claim).Round(time.Microsecond), median(f.ready).Round(time.Microsecond))
	}
	if len(sizes) == 2 {
		lo, hi := at[sizes[0]], at[sizes[1]]
		fmt.Printf("%d ÷ %d: CLI claim %.2f, work ready --claim %.2f, remote claim %.2f, plain push %.2f\n", sizes[1], sizes[0],
			ratio(median(hi.claim), median(lo.claim)), ratio(median(hi.ready), median(lo.ready)),
			ratio(median(hi.remote), median(lo.remote)), ratio(median(hi.push), median(lo.push)))
	}
}

// asSynced writes the bare remote's ideate refs into the clone at dir (the
// objects are there: a local clone shares them) and as its tracking
// copies, as a sync leaves them.
func asSynced(bare, dir string) {
	var b strings.Builder
	for _, l := range strings.Split(git(bare, "for-each-ref", "--format=%(objectname) %(refname)", "refs/ideate/"), "\n") {
		h, ref, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "update %s %s\nupdate refs/ideate-remotes/origin/%s %s\n", ref, h, strings.TrimPrefix(ref, "refs/"), h)
	}
	run(dir, b.String(), nil, "git", "update-ref", "--stdin")
	git(dir, "pack-refs", "--all")
}

// fixCommit is one commit of an item's chain as the CLI wrote it, the
// item's id written as idMark.
type fixCommit struct {
	msg   string
	files map[string]string
}

const idMark = "@ITEM-ID@"

// productChains makes a done item (create, claim, complete) and an open
// one with the CLI of s in a scratch repository and returns their chains.
func productChains(b *bench, s subject) (done, open []fixCommit) {
	dir := b.newRepo("history-chains")
	chain := func(finish bool) []fixCommit {
		_, out := run(dir, "", nil, s.bin, "work", "create", "--title", "history", "--spec", "s", "--spec-format", "f", "--human", "h")
		id := firstID(out)
		if finish {
			_, out = run(dir, "", nil, s.bin, "work", "claim", "--id", id, "--human", "h")
			run(dir, "", nil, s.bin, "work", "complete", "--id", id, "--token", strconv.FormatInt(claimToken(out), 10))
		}
		var cs []fixCommit
		for _, h := range strings.Fields(git(dir, "rev-list", "--reverse", board.RefName(id))) {
			c := fixCommit{msg: strings.ReplaceAll(catFile(dir, h, "commit"), id, idMark), files: map[string]string{}}
			_, c.msg, _ = strings.Cut(c.msg, "\n\n")
			for _, name := range strings.Fields(git(dir, "ls-tree", "--name-only", h)) {
				c.files[name] = strings.ReplaceAll(catFile(dir, h+":"+name, "blob"), id, idMark)
			}
			cs = append(cs, c)
		}
		return cs
	}
	return chain(true), chain(false)
}

func catFile(dir, obj, typ string) string {
	_, out := run(dir, "", nil, "git", "cat-file", typ, obj)
	return string(out)
}

// historyID is the i-th fixture item's id: a valid ULID whose last
// characters vary, so the archive's directories fill evenly.
func historyID(i int) string {
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	b := []byte("01M8000000" + "0000000000000000")
	for k := 25; k >= 10 && i > 0; k-- {
		b[k] = crockford[i%32]
		i /= 32
	}
	return string(b)
}

// historyFixture writes done archived items and open ones into the bare
// repository dir with one `git fast-import`, and returns the open ids.
// The archive's blobs name each chain's tip, computed here as git would.
func historyFixture(dir string, doneChain, openChain []fixCommit, done, open int) []string {
	var openIDs []string
	fastImport(dir, func(w *bufio.Writer, data func(string)) {
		sig := gitstore.Signature{Name: "a", Email: "a@example.com", When: time.Unix(1700000000, 0).UTC()}
		// writeChain writes one item's chain on ref and returns its tip.
		mark := 0
		writeChain := func(ref, id string, chain []fixCommit) gitstore.Hash {
			parent := gitstore.ZeroHash
			fmt.Fprintf(w, "reset %s\n", ref)
			for k, c := range chain {
				var entries []gitstore.TreeEntry
				names := make([]string, 0, len(c.files))
				for name := range c.files {
					names = append(names, name)
				}
				sort.Strings(names)
				fmt.Fprintf(w, "commit %s\n", ref)
				if k == len(chain)-1 {
					mark++
					fmt.Fprintf(w, "mark :%d\n", mark)
				}
				fmt.Fprintf(w, "author a <a@example.com> 1700000000 +0000\ncommitter a <a@example.com> 1700000000 +0000\n")
				msg := strings.ReplaceAll(c.msg, idMark, id)
				data(msg)
				for _, name := range names {
					body := strings.ReplaceAll(c.files[name], idMark, id)
					fmt.Fprintf(w, "M 100644 inline %s\n", name)
					data(body)
					entries = append(entries, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: name, Hash: oid.ComputeHash(oid.BlobObject, []byte(body))})
				}
				tc := &gitstore.Commit{Tree: oid.ComputeHash(oid.TreeObject, gitstore.EncodeTree(entries)), Author: sig, Committer: sig, Message: msg}
				if parent != gitstore.ZeroHash {
					tc.Parents = []gitstore.Hash{parent}
				}
				parent = oid.ComputeHash(oid.CommitObject, gitstore.EncodeCommit(tc))
			}
			return parent
		}
		const batch = 1000
		tips := make([]gitstore.Hash, 0, batch)
		marks := make([]int, 0, batch)
		ids := make([]string, 0, batch)
		first := true
		flush := func() {
			if len(tips) == 0 {
				return
			}
			fmt.Fprintf(w, "commit %s\nauthor a <a@example.com> 1700000001 +0000\ncommitter a <a@example.com> 1700000001 +0000\n", board.ArchiveRef)
			data(fmt.Sprintf("archive: %d finished\n\nIdeate-Archived: %d\n", len(tips), len(tips)))
			for _, m := range marks {
				fmt.Fprintf(w, "merge :%d\n", m)
			}
			if first {
				fmt.Fprintf(w, "M 100644 inline %s\n", board.FormatFile)
				data("ideate-board-archive 1\n")
			}
			for i, t := range tips {
				fmt.Fprintf(w, "M 100644 inline %s\n", strings.Join(board.ArchivePath(ids[i]), "/"))
				data(t.String() + "\n")
			}
			first = false
			tips, ids, marks = tips[:0], ids[:0], marks[:0]
		}
		for i := 0; i < done; i++ {
			id := historyID(i + 1)
			tips = append(tips, writeChain("refs/fixture/chain", id, doneChain))
			marks = append(marks, mark)
			ids = append(ids, id)
			if len(tips) == batch {
				flush()
			}
		}
		flush()
		for i := 0; i < open; i++ {
			id := historyID(done + i + 1)
			writeChain(board.RefName(id), id, openChain)
			openIDs = append(openIDs, id)
		}
	})
	if done > 0 {
		git(dir, "update-ref", "-d", "refs/fixture/chain")
	}
	// The tips were computed here: a mismatch would leave the archive
	// naming commits that do not exist.
	if done > 0 {
		a := git(dir, "cat-file", "blob", board.ArchiveRef+":"+strings.Join(board.ArchivePath(historyID(done)), "/"))
		git(dir, "cat-file", "-e", a+"^{commit}")
	}
	return openIDs
}

// fastImport runs one `git fast-import` in dir on the stream write
// writes (data writes one data block), and ends the run on its failure.
func fastImport(dir string, write func(w *bufio.Writer, data func(string))) {
	cmd := exec.Command("git", "fast-import", "--quiet", "--done")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	must(err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	must(cmd.Start())
	w := bufio.NewWriterSize(in, 1<<20)
	write(w, func(s string) { fmt.Fprintf(w, "data %d\n%s\n", len(s), s) })
	fmt.Fprintf(w, "done\n")
	must(w.Flush())
	in.Close()
	if err := cmd.Wait(); err != nil {
		must(fmt.Errorf("fast-import: %v\n%s", err, errb.String()))
	}
}

// serveHTTP serves the bare repository over git's smart HTTP protocol
// (git http-backend as a CGI program), pushes on and every pushed object
// checked, and returns its URL and the function that stops the server.
func serveHTTP(bare string) (string, func()) {
	git(bare, "config", "http.receivepack", "true")
	git(bare, "config", "receive.fsckObjects", "true")
	exe := git(".", "--exec-path")
	h := &cgi.Handler{Path: filepath.Join(exe, "git-http-backend"), Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	for _, k := range []string{"HOME", "PATH", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			h.Env = append(h.Env, k+"="+v)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	return "http://" + l.Addr().String() + "/" + filepath.Base(bare), func() { srv.Close() }
}

// dirSize is the size of the files under dir, for the log.
func dirSize(dir string) string {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// memKiB is a /proc/<pid>/status figure of the server (VmHWM, VmRSS), in KiB.
func (c *mcpClient) memKiB(key string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, key+":") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				n, _ := strconv.ParseFloat(f[1], 64)
				return n
			}
		}
	}
	return 0
}
