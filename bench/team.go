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
// released (untimed), taking turns, for A and for B in the same run (A
// against itself shows the run's noise); beside them the two parts a
// remote start adds up from, timed the same way with A: `work claim
// --remote` of the same kind of item, and a plain `git push
// --force-with-lease` of one ref carrying one new commit to the same
// remote.
func teamScenario(b *bench) {
	a, bb := b.oursOnly()
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
	starts := map[string][]time.Duration{} // by subject and clone
	start := func(s subject, clone, dir string) func() {
		return func() {
			x, _ := run(dir, "", nil, s.bin, "task", "start", "S1-01/T1", "--item", item, "--human", "alice", "--scope", "x/**")
			starts[s.label+clone] = append(starts[s.label+clone], x.wall)
			run(dir, "", nil, s.bin, "task", "release", "S1-01/T1")
		}
	}
	var cs, ps []time.Duration
	for i := 0; i < b.calls; i++ {
		steps := []func(){
			start(a, "remote", remote), start(a, "local", local), start(bb, "remote", remote), start(bb, "local", local),
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
	c, p := median(cs), median(ps)
	for _, s := range []subject{a, bb} {
		r, l := median(starts[s.label+"remote"]), median(starts[s.label+"local"])
		fmt.Printf("%s task start: through the remote %v, local %v (remote ÷ local %.2f); remote start − local start = %v = %.2f plain pushes\n",
			s.label, r.Round(time.Microsecond), l.Round(time.Microsecond), ratio(r, l), (r - l).Round(time.Microsecond), ratio(r-l, p))
	}
	fmt.Printf("B ÷ A: remote start %.2f, local start %.2f\n", ratio(median(starts[bb.label+"remote"]), median(starts[a.label+"remote"])),
		ratio(median(starts[bb.label+"local"]), median(starts[a.label+"local"])))
	fmt.Printf("work claim --remote %v; plain lease push %v; claim ÷ push %.2f\n", c.Round(time.Microsecond), p.Round(time.Microsecond), ratio(c, p))
}
