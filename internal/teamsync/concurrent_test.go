package teamsync_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/teamsync"
	"github.com/ideate/git-ideate/internal/teamsync/teamsynctest"
)

func startHTTP(t *testing.T, root string) string { return teamsynctest.StartHTTP(t, root) }

// syncWorkMain is the "sync-work" client role: SYNC_TEST_N times, append a
// note "<who>-<i>", claim item i of SYNC_TEST_IDS locally (no authority:
// the sync decides who won), and sync. Each round prints "ok <i>" or
// "FAIL <i> <error>".
func syncWorkMain(c *clone) int {
	who := os.Getenv("SYNC_TEST_WHO")
	n, _ := strconv.Atoi(os.Getenv("SYNC_TEST_N"))
	ids := strings.Split(os.Getenv("SYNC_TEST_IDS"), ",")
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := 0; i < n; i++ {
		ctx := context.Background()
		if _, err := c.rec.Append(ctx, record.AppendInput{Kind: "note", Claim: fmt.Sprintf("%s-%d", who, i), Content: "x",
			Source: record.Source{CapturePoint: "test", SessionID: who}}); err != nil {
			fmt.Fprintf(out, "FAIL %d append: %v\n", i, err)
			continue
		}
		if i < len(ids) {
			if _, err := c.b.Claim(ctx, ids[i], board.Actor{Human: who}, nil); err != nil && !apperr.Is(err, board.NotClaimable) {
				fmt.Fprintf(out, "FAIL %d claim: %v\n", i, err)
				continue
			}
		}
		y := &teamsync.Syncer{Git: c.g, Record: c.rec, Board: c.b, Remote: "origin"}
		if _, err := y.Sync(ctx); err != nil {
			fmt.Fprintf(out, "FAIL %d sync: %s\n", i, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Fprintf(out, "ok %d\n", i)
		out.Flush()
	}
	return 0
}

// concurrentSyncs runs three clones of url, each a process doing 20
// append+claim+sync rounds at once, and checks that no sync failed and
// that the remote ends up with every note exactly once.
func concurrentSyncs(t *testing.T, bare, url string) {
	const rounds = 20
	seed := cloneOf(t, url)
	var ids []string
	for i := 0; i < rounds; i++ {
		ids = append(ids, seed.create(t, fmt.Sprintf("item %d", i)))
	}
	seed.sync(t)
	names := []string{"ann", "ben", "cat"}
	var clones []*clone
	for range names {
		c := cloneOf(t, url)
		c.sync(t)
		clones = append(clones, c)
	}
	bar := proctest.NewBarrier(t)
	ps := make([]*proctest.Proc, len(clones))
	for i, c := range clones {
		ps[i] = client(t, c.dir, "sync-work", names[i], bar, ids, "SYNC_TEST_N="+strconv.Itoa(rounds))
	}
	bar.Release(t)
	outs := make([][]string, len(clones))
	for i := range clones {
		outs[i] = ps[i].Wait(t)
	}
	fails, oks := 0, 0
	for i, out := range outs {
		for _, l := range out {
			switch {
			case strings.HasPrefix(l, "ok "):
				oks++
			case strings.HasPrefix(l, "FAIL "):
				fails++
				t.Errorf("%s: %s", names[i], l)
			}
		}
	}
	t.Logf("%d syncs succeeded, %d failed", oks, fails)
	if oks != rounds*len(names) {
		t.Fatalf("%d of %d rounds succeeded", oks, rounds*len(names))
	}
	// Level everything, then every note is at the remote exactly once.
	for _, c := range clones {
		c.sync(t)
	}
	seed.sync(t)
	count := map[string]int{}
	sn, err := seed.rec.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := sn.Walk("", func(r *record.Record) (bool, error) {
		if r.Kind == "note" {
			count[r.Claim]++
		}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, who := range names {
		for i := 0; i < rounds; i++ {
			if n := count[fmt.Sprintf("%s-%d", who, i)]; n != 1 {
				t.Errorf("note %s-%d is in the record %d times", who, i, n)
			}
		}
	}
	if remoteRef(t, bare, record.RefName) != mustRef(t, seed, record.RefName).String() {
		t.Fatal("the remote does not hold the levelled record")
	}
	// Each item has one holder everywhere.
	for _, id := range ids {
		want := remoteRef(t, bare, board.RefName(id))
		for i, c := range clones {
			if got := mustRef(t, c, board.RefName(id)).String(); got != want {
				t.Fatalf("%s has %s at %s, the remote %s", names[i], id, got, want)
			}
		}
	}
	gt.Fsck(t, bare)
}

// TestSync_ConcurrentSyncsOverFileRemote: three clones × 20 syncs at once
// through a bare repository by path; a refusal caused by another pusher
// (git's "atomic transaction failed" among them) is retried, never
// reported.
func TestSync_ConcurrentSyncsOverFileRemote(t *testing.T) {
	bare := newRemote(t)
	concurrentSyncs(t, bare, bare)
}

// TestSync_ConcurrentSyncsOverSmartHTTP: the same through git
// http-backend, with receive.fsckObjects on.
func TestSync_ConcurrentSyncsOverSmartHTTP(t *testing.T) {
	bare := newRemote(t)
	gt.Git(t, bare, "config", "http.receivepack", "true")
	gt.Git(t, bare, "config", "receive.fsckObjects", "true")
	url := startHTTP(t, filepath.Dir(bare)) + filepath.Base(bare)
	concurrentSyncs(t, bare, url)
}
