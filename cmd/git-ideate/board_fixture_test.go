package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/teamsync/teamsynctest"
)

// fixCommit is one commit of an item's chain: its message and files, with
// the item's id written as idMark.
type fixCommit struct {
	msg   string
	files map[string]string
}

const idMark = "@ITEM-ID@"

// productChain is the chain of one item as the product writes it: made
// with the CLI in a scratch repository (create, and for a done item
// claim and complete), read back with git, the id replaced by idMark.
func productChain(tb testing.TB, done bool) []fixCommit {
	tb.Helper()
	dir := gt.NewRepo(tb)
	id := itemID(tb, mustOK(tb, bin(tb, dir, "", "work", "create", "--title", "history", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	if done {
		mustOK(tb, bin(tb, dir, "", "work", "claim", "--id", id, "--human", "h"))
		mustOK(tb, bin(tb, dir, "", "work", "complete", "--id", id, "--token", "1"))
	}
	hashes := strings.Fields(gt.Git(tb, dir, "rev-list", "--reverse", "refs/ideate/board/items/"+id))
	var out []fixCommit
	for _, h := range hashes {
		c := fixCommit{msg: strings.ReplaceAll(gt.Git(tb, dir, "log", "-1", "--format=%B", h), id, idMark) + "\n", files: map[string]string{}}
		for _, name := range strings.Fields(gt.Git(tb, dir, "ls-tree", "--name-only", h)) {
			c.files[name] = strings.ReplaceAll(gt.Git(tb, dir, "cat-file", "blob", h+":"+name)+"\n", id, idMark)
		}
		out = append(out, c)
	}
	return out
}

// fixtureID is the i-th fixture item's id: a valid ULID.
func fixtureID(i int) string {
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	b := []byte("01M8000000" + "0000000000000000")
	for k := 25; k >= 10 && i > 0; k-- {
		b[k] = crockford[i%32]
		i /= 32
	}
	return string(b)
}

// importItems writes done items with the product's three-commit chain
// (create, claim, complete) and open ones (create) into each repository
// of dirs with one `git fast-import` each: the same stream, so the same
// commits everywhere, and the refs packed. It returns the open items' ids.
func importItems(tb testing.TB, dirs []string, done, open int) []string {
	tb.Helper()
	doneChain, openChain := productChain(tb, true), productChain(tb, false)
	var stream bytes.Buffer
	data := func(s string) { fmt.Fprintf(&stream, "data %d\n%s\n", len(s), s) }
	var openIDs []string
	for i := 0; i < done+open; i++ {
		id, chain := fixtureID(i+1), doneChain
		if i >= done {
			chain = openChain
			openIDs = append(openIDs, id)
		}
		for _, c := range chain {
			fmt.Fprintf(&stream, "commit refs/ideate/board/items/%s\nauthor a <a@example.com> 1700000000 +0000\ncommitter a <a@example.com> 1700000000 +0000\n", id)
			data(strings.ReplaceAll(c.msg, idMark, id))
			for _, name := range []string{"event.json", "ideate-format", "item.json"} {
				if body, ok := c.files[name]; ok {
					fmt.Fprintf(&stream, "M 100644 inline %s\n", name)
					data(strings.ReplaceAll(body, idMark, id))
				}
			}
		}
	}
	for _, dir := range dirs {
		cmd := exec.Command("git", "fast-import", "--quiet", "--done")
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(append(stream.Bytes(), "done\n"...))
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("fast-import: %v\n%s", err, out)
		}
		gt.Git(tb, dir, "pack-refs", "--all")
	}
	return openIDs
}

// BenchmarkRemoteClaim_History: a claim through a smart-HTTP remote
// (`work claim --remote`) on a board with 1k and with 100k done items of
// history and 100 open, against a plain `git push --force-with-lease` of
// one ref (carrying one new commit) to the same remote; each iteration
// claims (timed), releases (not timed) and pushes (timed). The fixtures
// are written by `git fast-import` from the chain the CLI writes for one
// item (importItems), into the remote and the clone alike, the clone's
// tracking copies set as a sync would leave them.
//
//	go test ./cmd/git-ideate -run '^$' -bench RemoteClaim_History -benchtime 10x
//
// Every item keeps its own ref, so both the claim's push and the plain one
// pay for the remote's whole ref advertisement and its connectivity check:
// measured on a loaded 2-core VM, 257 ms ÷ 175 ms (1.47×) at 1k and
// 18.2 s ÷ 12.2 s (1.49×) at 100k, the 100k fixture taking 9–13 minutes.
func BenchmarkRemoteClaim_History(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			seed := gt.NewRepo(b)
			bare := filepath.Join(b.TempDir(), "remote.git")
			gt.Git(b, seed, "init", "-q", "--bare", bare)
			gt.Git(b, seed, "push", "-q", bare, "HEAD:refs/heads/main")
			url := teamsynctest.ServeBare(b, bare)
			dir := filepath.Join(b.TempDir(), "clone")
			if out, err := exec.Command("git", "clone", "-q", url, dir).CombinedOutput(); err != nil {
				b.Fatalf("clone: %v\n%s", err, out)
			}
			t0 := time.Now()
			open := importItems(b, []string{bare, dir}, n, 100)
			var track bytes.Buffer
			for _, line := range strings.Split(gt.Git(b, dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/ideate/"), "\n") {
				h, ref, _ := strings.Cut(line, " ")
				fmt.Fprintf(&track, "create refs/ideate-remotes/origin/%s %s\n", strings.TrimPrefix(ref, "refs/"), h)
			}
			gt.GitStdin(b, dir, track.String(), "update-ref", "--stdin")
			gt.Git(b, dir, "pack-refs", "--all")
			b.Logf("fixture of %d items + 100 open in remote and clone: %v", n, time.Since(t0))
			tree := gt.Git(b, dir, "rev-parse", "HEAD^{tree}")
			old := ""
			var claim, push []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := open[i%len(open)]
				t1 := time.Now()
				r := mustOK(b, bin(b, dir, "", "work", "claim", "--id", id, "--human", "bench", "--remote", "origin"))
				claim = append(claim, time.Since(t1))
				b.StopTimer()
				var it struct {
					Claim struct {
						Token int64 `json:"claim_token"`
					} `json:"claim"`
				}
				json.Unmarshal([]byte(r.out), &it)
				mustOK(b, bin(b, dir, "", "work", "release", "--id", id, "--token", fmt.Sprint(it.Claim.Token), "--remote", "origin"))
				args := []string{"commit-tree", tree, "-m", fmt.Sprintf("push %d", i)}
				if old != "" {
					args = append(args, "-p", old)
				}
				next := gt.Git(b, dir, args...)
				b.StartTimer()
				cmd := exec.Command("git", "push", "-q", "--force-with-lease=refs/ideate/bench:"+old, "origin", next+":refs/ideate/bench")
				cmd.Dir = dir
				t2 := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("plain push: %v\n%s", err, out)
				}
				push = append(push, time.Since(t2))
				old = next
			}
			b.StopTimer()
			c, p := medianOf(claim), medianOf(push)
			b.ReportMetric(float64(c.Microseconds())/1000, "claim-ms")
			b.ReportMetric(float64(p.Microseconds())/1000, "plain-push-ms")
			b.ReportMetric(float64(c)/float64(p), "claim/push")
		})
	}
}
