package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// teamScenario: `task start --item` claiming through a smart-HTTP remote
// (ideate.remote set: one leased push before the worktree is made)
// against the same start in a clone that claims locally, each then
// released (untimed), taking turns; beside them the two parts a remote
// start adds up from, timed the same way: `work claim --remote` of the
// same kind of item, and a plain `git push --force-with-lease` of one ref
// carrying one new commit to the same remote.
func teamScenario(b *bench) {
	a, _ := b.oursOnly()
	root := filepath.Join(b.work, "team")
	must(os.MkdirAll(root, 0o755))
	bare := filepath.Join(root, "remote.git")
	git(root, "init", "-q", "--bare", bare)
	seed := b.newRepo("team-seed")
	git(seed, "push", "-q", bare, "HEAD:refs/heads/main")
	git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
	url, stop := serveHTTP(bare)
	defer stop()
	remote, local := filepath.Join(root, "remote-clone"), filepath.Join(root, "local-clone")
	for _, d := range []string{remote, local} {
		git(root, "clone", "-q", url, d)
		for _, kv := range b.config {
			k, v, _ := strings.Cut(kv, "=")
			git(d, "config", k, v)
		}
	}
	git(remote, "config", "ideate.remote", "origin")
	_, out := run(remote, "", nil, a.bin, "work", "create", "--title", "task", "--spec", "s", "--spec-format", "f", "--human", "h")
	item := firstID(out)
	_, out = run(remote, "", nil, a.bin, "work", "create", "--title", "claim", "--spec", "s", "--spec-format", "f", "--human", "h")
	other := firstID(out)
	run(remote, "", nil, a.bin, "sync")
	run(local, "", nil, a.bin, "sync")
	tree := git(remote, "rev-parse", "HEAD^{tree}")
	old := ""
	var rs, ls, cs, ps []time.Duration
	for i := 0; i < b.calls; i++ {
		steps := []func(){
			func() {
				x, _ := run(remote, "", nil, a.bin, "task", "start", "S1-01/T1", "--item", item, "--human", "alice", "--scope", "x/**")
				rs = append(rs, x.wall)
				run(remote, "", nil, a.bin, "task", "release", "S1-01/T1")
			},
			func() {
				x, _ := run(local, "", nil, a.bin, "task", "start", "S1-01/T1", "--item", item, "--human", "alice", "--scope", "x/**")
				ls = append(ls, x.wall)
				run(local, "", nil, a.bin, "task", "release", "S1-01/T1")
			},
			func() {
				x, out := run(remote, "", nil, a.bin, "work", "claim", "--id", other, "--human", "bench", "--remote", "origin")
				cs = append(cs, x.wall)
				run(remote, "", nil, a.bin, "work", "release", "--id", other, "--token", strconv.FormatInt(claimToken(out), 10), "--remote", "origin")
			},
			func() {
				args := []string{"commit-tree", tree, "-m", fmt.Sprintf("push %d", i)}
				if old != "" {
					args = append(args, "-p", old)
				}
				next := git(remote, args...)
				x, _ := run(remote, "", nil, "git", "push", "-q", "--force-with-lease=refs/ideate/bench:"+old, "origin", next+":refs/ideate/bench")
				ps = append(ps, x.wall)
				old = next
			},
		}
		for k := range steps {
			steps[(k+i)%len(steps)]()
		}
	}
	r, l, c, p := median(rs), median(ls), median(cs), median(ps)
	fmt.Printf("task start: through the remote %v, local %v (remote ÷ local %.2f); work claim --remote %v; plain lease push %v\n",
		r.Round(time.Microsecond), l.Round(time.Microsecond), ratio(r, l), c.Round(time.Microsecond), p.Round(time.Microsecond))
	fmt.Printf("remote start − local start = %v = %.2f plain pushes; claim ÷ push %.2f\n", (r - l).Round(time.Microsecond), ratio(r-l, p), ratio(c, p))
}
