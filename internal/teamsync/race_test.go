package teamsync_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/teamsync/teamsynctest"
)

// client starts this test binary as a client process of clone dir, held
// by bar (when not nil) until bar.Release.
func client(t *testing.T, dir, role, who string, bar *proctest.Barrier, ids []string, env ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, proctest.Spec{Role: role, Barrier: bar, Env: append([]string{"SYNC_TEST_DIR=" + dir,
		"SYNC_TEST_WHO=" + who, "SYNC_TEST_IDS=" + strings.Join(ids, ",")}, env...)})
}

// results parses "<id> OK <token>" / "<id> <CODE> <message>" lines.
func results(t *testing.T, lines []string) map[string]string {
	t.Helper()
	res := map[string]string{}
	for _, l := range lines {
		if l == "" {
			continue
		}
		id, rest, _ := strings.Cut(l, " ")
		res[id] = rest
	}
	return res
}

// TestRace_ThreeClonesClaimFiftyItemsThroughTheRemote: three clones, each
// a real OS process, claim the same 50 items through the remote at once.
// Each item ends with exactly one holder at the remote, every loser was
// told NOT_CLAIMABLE naming the holder, and after a sync all clones agree.
func TestRace_ThreeClonesClaimFiftyItemsThroughTheRemote(t *testing.T) {
	bare := newRemote(t)
	raceClaims(t, bare, bare, 50)
}

// TestRace_ThreeClonesClaimThroughSmartHTTP is the same race through a
// real smart-HTTP server (git http-backend, receive.fsckObjects), where a
// claim's push is one POST of its own (DirectPush).
func TestRace_ThreeClonesClaimThroughSmartHTTP(t *testing.T) {
	bare := newRemote(t)
	raceClaims(t, bare, teamsynctest.ServeBare(t, bare), 20)
}

// raceClaims has three clones of url, each a real OS process, claim the
// same n items through the remote at once, then checks the remote, bare,
// and the clones after a sync.
func raceClaims(t *testing.T, bare, url string, n int) {
	seed := cloneOf(t, url)
	var ids []string
	for i := 0; i < n; i++ {
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
		ps[i] = client(t, c.dir, "claim", names[i], bar, ids)
	}
	bar.Release(t)
	res := make([]map[string]string, len(clones))
	for i := range clones {
		res[i] = results(t, ps[i].Wait(t))
	}
	wins := map[string]int{}
	for _, id := range ids {
		winner := ""
		for i, name := range names {
			r := res[i][id]
			switch {
			case strings.HasPrefix(r, "OK "):
				if winner != "" {
					t.Fatalf("item %s claimed by both %s and %s", id, winner, name)
				}
				winner = name
			case strings.HasPrefix(r, string(board.NotClaimable)+" "):
			default:
				t.Fatalf("%s on %s: %q (want OK or NOT_CLAIMABLE)", name, id, r)
			}
		}
		if winner == "" {
			t.Fatalf("nobody won item %s", id)
		}
		wins[winner]++
		for i, name := range names {
			if name != winner && !strings.Contains(res[i][id], "held by "+winner) {
				t.Fatalf("%s lost %s but was told %q, not that %s holds it", name, id, res[i][id], winner)
			}
		}
		// The remote's item names the winner.
		if log := gt.Git(t, bare, "log", "-1", "--format=%B", board.RefName(id)); !strings.Contains(log, "Ideate-Actor: "+winner) || !strings.Contains(log, "Ideate-Transition: claim") {
			t.Fatalf("remote head of %s:\n%s\nwant %s's claim", id, log, winner)
		}
		// Exactly one claim commit at the remote.
		if n := strings.Count(gt.Git(t, bare, "log", "--format=%s", board.RefName(id)), "claim:"); n != 1 {
			t.Fatalf("item %s has %d claim commits at the remote", id, n)
		}
	}
	t.Logf("wins per clone: %v", wins)
	for _, c := range clones {
		c.sync(t)
	}
	for _, id := range ids {
		want := remoteRef(t, bare, board.RefName(id))
		for i, c := range clones {
			if got := mustRef(t, c, board.RefName(id)).String(); got != want {
				t.Fatalf("after sync %s has %s at %s, remote %s", names[i], id, got, want)
			}
		}
	}
	gt.Fsck(t, bare)
	for _, c := range clones {
		gt.Fsck(t, c.dir)
	}
}

// TestRace_CompleteAgainstCancelAcrossClones: one clone completes while
// another cancels the same items, at once, through the remote: exactly
// one transition survives per item and the other side is told.
func TestRace_CompleteAgainstCancelAcrossClones(t *testing.T) {
	bare := newRemote(t)
	a := cloneOf(t, bare)
	a.authoritative()
	var ids []string
	token := int64(0)
	for i := 0; i < 12; i++ {
		id := a.create(t, fmt.Sprintf("item %d", i))
		a.sync(t)
		it, err := a.b.Claim(t.Context(), id, board.Actor{Human: "ann"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if it.Claim.ClaimToken != 1 {
			t.Fatalf("first claim through the remote got token %d", it.Claim.ClaimToken)
		}
		token = it.Claim.ClaimToken
		ids = append(ids, id)
	}
	b := cloneOf(t, bare)
	b.sync(t)
	bar := proctest.NewBarrier(t)
	comp := client(t, a.dir, "complete", "ann", bar, ids, fmt.Sprintf("SYNC_TEST_TOKEN=%d", token))
	canc := client(t, b.dir, "cancel", "ben", bar, ids)
	bar.Release(t)
	done, cancelled := results(t, comp.Wait(t)), results(t, canc.Wait(t))
	counts := map[string]int{}
	for _, id := range ids {
		d, c := done[id], cancelled[id]
		okD, okC := strings.HasPrefix(d, "OK"), strings.HasPrefix(c, "OK")
		if okD == okC {
			t.Fatalf("item %s: complete %q, cancel %q — want exactly one to succeed", id, d, c)
		}
		status := strings.TrimSpace(gt.Git(t, bare, "log", "-1", "--format=%(trailers:key=Ideate-Status,valueonly)", board.RefName(id)))
		switch {
		case okD && status != board.StatusDone, okC && status != board.StatusCancelled:
			t.Fatalf("item %s: complete %q cancel %q but the remote says %s", id, d, c, status)
		}
		loser := c
		if okC {
			loser = d
		}
		if !strings.HasPrefix(loser, string(board.InvalidClaim)) && !strings.HasPrefix(loser, string(board.InvalidTransition)) {
			t.Fatalf("item %s: the loser was told %q", id, loser)
		}
		// Only the winner's transition is in the remote's history.
		hist := gt.Git(t, bare, "log", "--format=%s", board.RefName(id))
		if strings.Contains(hist, "complete:") == strings.Contains(hist, "cancel:") {
			t.Fatalf("item %s remote history:\n%s", id, hist)
		}
		if okD {
			counts["complete"]++
		} else {
			counts["cancel"]++
		}
	}
	t.Logf("winners: %v", counts)
	a.sync(t)
	b.sync(t)
	for _, id := range ids {
		if mustRef(t, a, board.RefName(id)) != mustRef(t, b, board.RefName(id)) {
			t.Fatalf("clones disagree on %s after sync", id)
		}
	}
	gt.Fsck(t, bare)
}

// TestKill9DuringSync kills a syncing process and its git children (its
// whole process group: fetch, push) at random points, many times, while
// there is always new local work to push. The remote is served by git
// daemon, as a real server would be, so the kill reaches the client side
// only. No ref is left broken or half-updated on either side, and the next
// sync finishes the job with every record exactly once.
func TestKill9DuringSync(t *testing.T) {
	bare := newRemote(t)
	url := startDaemon(t, filepath.Dir(bare)) + filepath.Base(bare)
	a := cloneOf(t, url)
	b := cloneOf(t, url)
	var want []string
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	// A kill lands in a random moment of the first 900 ms; while none has
	// landed before the first sync finished (a machine may sync faster
	// than that, or be so loaded that the syncer's start is most of it),
	// the window shrinks and the rounds go on, up to three times as many.
	killedMidway, window := 0, 900*time.Millisecond
	for round := 0; round < rounds || (killedMidway == 0 && round < 3*rounds); round++ {
		for i := 0; i < 15; i++ {
			want = append(want, a.note(t, fmt.Sprintf("r%d-%d", round, i)))
		}
		for i := 0; i < 4; i++ {
			a.create(t, fmt.Sprintf("r%d item %d", round, i))
		}
		want = append(want, b.note(t, fmt.Sprintf("b r%d", round)))
		b.sync(t)
		syncer := client(t, a.dir, "sync-loop", "ann", nil, nil)
		time.Sleep(10*time.Millisecond + time.Duration(rand.Int64N(int64(window))))
		syncer.Kill() // the whole process group: the client and its git fetch/push
		out := syncer.Output()
		if strings.Contains(out, "sync failed") {
			t.Logf("round %d: %s", round, out)
		}
		if !strings.Contains(out, "synced") {
			killedMidway++
		} else if killedMidway == 0 {
			window = max(window*3/4, 20*time.Millisecond)
		}
		// Both sides stay readable and consistent after every kill.
		daemonAtRest(t, url) // the killed client's push may still be landing
		gt.Fsck(t, bare)
		gt.Fsck(t, a.dir)
		if _, err := a.rec.Snapshot(); err != nil {
			t.Fatalf("record unreadable after a kill: %v", err)
		}
	}
	t.Logf("%d kills landed before the first sync finished (window at the end %v)", killedMidway, window)
	if killedMidway == 0 {
		t.Fatal("no kill interrupted a sync; the test proved nothing")
	}
	// Locks a killed process left behind are broken by the stale-lock
	// policy; the next syncs finish the job.
	time.Sleep(1100 * time.Millisecond)
	a.sync(t)
	b.sync(t)
	a.sync(t)
	for _, c := range []*clone{a, b} {
		got := c.recordIDs(t)
		seen := map[string]int{}
		for _, id := range got {
			seen[id]++
		}
		for _, id := range want {
			if seen[id] != 1 {
				t.Fatalf("record %s appears %d times in %s", id, seen[id], c.dir)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s has %d records, want %d", c.dir, len(got), len(want))
		}
	}
	la, _ := a.g.Refs("refs/ideate/")
	for _, r := range la {
		if remoteRef(t, bare, r.Name) != r.Hash.String() {
			t.Fatalf("%s differs between a and the remote after the final sync", r.Name)
		}
	}
	if left := gt.Git(t, a.dir, "for-each-ref", "refs/ideate-push/"); left != "" {
		t.Fatalf("shadow refs of a killed push were not cleared:\n%s", left)
	}
	if _, err := os.Stat(filepath.Join(bare, "refs", "ideate", "record.lock")); err == nil {
		t.Fatal("a lock was left on the remote")
	}
	gt.Fsck(t, bare)
	gt.Fsck(t, a.dir)
	gt.Fsck(t, b.dir)
	_ = record.RefName
}
