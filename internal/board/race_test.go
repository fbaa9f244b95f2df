package board_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
)

// TestMain lets the test binary act as a board client process, so the
// races below are between real OS processes.
func TestMain(m *testing.M) { proctest.Main(m, clientMain) }

// clientMain runs its role over the ids (after the barrier, when the test
// gave one), printing one line per attempt: "<id> OK <token>" or
// "<id> <CODE>".
func clientMain(role string) int {
	g, err := gitstore.Open(os.Getenv("BOARD_TEST_DIR"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	b := board.Open(g, record.Open(g))
	ids := strings.Split(os.Getenv("BOARD_TEST_IDS"), ",")
	who := board.Actor{Human: os.Getenv("BOARD_TEST_WHO")}
	token, _ := strconv.ParseInt(os.Getenv("BOARD_TEST_TOKEN"), 10, 64)
	lease, _ := strconv.ParseInt(os.Getenv("BOARD_TEST_LEASE"), 10, 64)
	var leaseP *int64
	if lease > 0 {
		leaseP = &lease
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, id := range ids {
		var it *board.Item
		var err error
		switch role {
		case "claim":
			it, err = b.Claim(context.Background(), id, who, leaseP)
		case "complete":
			var o *board.Outcome
			if o, err = b.Complete(context.Background(), id, token, "by "+who.Human); err == nil {
				it = o.Item
			}
		case "cancel":
			it, err = b.Cancel(context.Background(), id, who)
		case "claim-and-hang":
			if it, err = b.Claim(context.Background(), id, who, leaseP); err == nil {
				fmt.Fprintf(out, "%s OK %d\n", id, it.Claim.ClaimToken)
				out.Flush()
				time.Sleep(time.Hour)
			}
		}
		if err != nil {
			fmt.Fprintf(out, "%s %s\n", id, apperr.CodeOf(err))
			continue
		}
		tok := int64(0)
		if it.Claim != nil {
			tok = it.Claim.ClaimToken
		}
		fmt.Fprintf(out, "%s OK %d\n", id, tok)
	}
	return 0
}

// startClient starts a client process playing role over ids; bar, when
// not nil, holds it until bar.Release.
func startClient(t *testing.T, dir, role, who string, ids []string, bar *proctest.Barrier, extra ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, proctest.Spec{Role: role, Barrier: bar, Env: append([]string{"BOARD_TEST_DIR=" + dir,
		"BOARD_TEST_WHO=" + who, "BOARD_TEST_IDS=" + strings.Join(ids, ",")}, extra...)})
}

// contention runs f with and without a concurrent `git pack-refs --all` /
// `git gc --auto` loop.
func contention(t *testing.T, f func(t *testing.T, dir string)) {
	for _, withGC := range []bool{false, true} {
		name := "quiet"
		if withGC {
			name = "with-pack-refs-and-gc"
		}
		t.Run(name, func(t *testing.T) {
			dir := gt.NewRepo(t)
			if !withGC {
				f(t, dir)
				gt.Fsck(t, dir)
				return
			}
			gt.Git(t, dir, "config", "gc.auto", "100")
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if i%3 == 2 {
						gt.GitErr(dir, "gc", "--auto", "--quiet")
					} else {
						gt.GitErr(dir, "pack-refs", "--all")
					}
				}
			}()
			f(t, dir)
			close(stop)
			wg.Wait()
			gt.Fsck(t, dir)
		})
	}
}

func openBoard(t *testing.T, dir string) *board.Store {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return board.Open(g, record.Open(g))
}

func countTransitions(t *testing.T, b *board.Store, id, transition string) int {
	t.Helper()
	evs, err := b.Events(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Transition == transition {
			n++
		}
	}
	return n
}

// 16 processes race to claim one item: exactly one wins.
func TestRace_SixteenClaimOne(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	contention(t, func(t *testing.T, dir string) {
		b := openBoard(t, dir)
		it := create(t, b, "contended")
		bar := proctest.NewBarrier(t)
		var cs []*proctest.Proc
		for i := 0; i < 16; i++ {
			cs = append(cs, startClient(t, dir, "claim", fmt.Sprintf("w%d", i), []string{it.ID}, bar))
		}
		bar.Release(t)
		wins, winner := 0, ""
		for i, c := range cs {
			line := c.Wait(t)[0]
			switch {
			case strings.HasSuffix(line, " OK 1"):
				wins++
				winner = fmt.Sprintf("w%d", i)
			case strings.HasSuffix(line, " NOT_CLAIMABLE"):
			default:
				t.Fatalf("unexpected outcome %q", line)
			}
		}
		if wins != 1 {
			t.Fatalf("%d winners", wins)
		}
		v, _ := b.Get(t.Context(), it.ID)
		if v.Claim == nil || v.Claim.Holder.Human != winner || v.Claim.ClaimToken != 1 {
			t.Fatalf("holder %+v, winner %s", v.Claim, winner)
		}
		if n := countTransitions(t, b, it.ID, board.TClaim); n != 1 {
			t.Fatalf("%d claim events", n)
		}
	})
}

// 8 processes × the same 100 items: 100 wins, no double claim, every claim
// commit accounted for.
func TestRace_EightProcessesHundredItems(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	contention(t, func(t *testing.T, dir string) {
		b := openBoard(t, dir)
		var ids []string
		for i := 0; i < 100; i++ {
			ids = append(ids, create(t, b, fmt.Sprintf("item %d", i)).ID)
		}
		bar := proctest.NewBarrier(t)
		var cs []*proctest.Proc
		for i := 0; i < 8; i++ {
			cs = append(cs, startClient(t, dir, "claim", fmt.Sprintf("w%d", i), ids, bar))
		}
		bar.Release(t)
		winners := map[string]string{}
		for i, c := range cs {
			for _, line := range c.Wait(t) {
				f := strings.Fields(line)
				switch {
				case len(f) == 3 && f[1] == "OK":
					if prev, dup := winners[f[0]]; dup {
						t.Fatalf("double claim of %s by %s and w%d", f[0], prev, i)
					}
					winners[f[0]] = fmt.Sprintf("w%d", i)
				case len(f) == 2 && f[1] == string(board.NotClaimable):
				default:
					t.Fatalf("unexpected outcome %q", line)
				}
			}
		}
		if len(winners) != 100 {
			t.Fatalf("%d items won, want 100", len(winners))
		}
		for _, id := range ids {
			v, _ := b.Get(t.Context(), id)
			if v.Claim == nil || v.Claim.Holder.Human != winners[id] {
				t.Fatalf("%s held by %+v, won by %s", id, v.Claim, winners[id])
			}
			if n := countTransitions(t, b, id, board.TClaim); n != 1 {
				t.Fatalf("%s has %d claim commits", id, n)
			}
		}
	})
}

// cancel against complete on one claimed item, 20 rounds: exactly one wins,
// and only its event exists.
func TestRace_CancelAgainstComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	contention(t, func(t *testing.T, dir string) {
		b := openBoard(t, dir)
		for round := 0; round < 20; round++ {
			it := create(t, b, fmt.Sprintf("round %d", round))
			cl, err := b.Claim(t.Context(), it.ID, actor("holder"), nil)
			if err != nil {
				t.Fatal(err)
			}
			bar := proctest.NewBarrier(t)
			comp := startClient(t, dir, "complete", "holder", []string{it.ID}, bar,
				"BOARD_TEST_TOKEN="+strconv.FormatInt(cl.Claim.ClaimToken, 10))
			canc := startClient(t, dir, "cancel", "boss", []string{it.ID}, bar)
			bar.Release(t)
			a, c := comp.Wait(t)[0], canc.Wait(t)[0]
			aOK, cOK := strings.Contains(a, " OK"), strings.Contains(c, " OK")
			if aOK == cOK {
				t.Fatalf("round %d: complete %q, cancel %q: want exactly one winner", round, a, c)
			}
			v, _ := b.Get(t.Context(), it.ID)
			nComplete, nCancel := countTransitions(t, b, it.ID, board.TComplete), countTransitions(t, b, it.ID, board.TCancel)
			if aOK && (v.Status != board.StatusDone || nComplete != 1 || nCancel != 0) ||
				cOK && (v.Status != board.StatusCancelled || nCancel != 1 || nComplete != 0) {
				t.Fatalf("round %d: status %s, complete events %d, cancel events %d", round, v.Status, nComplete, nCancel)
			}
			if !aOK && !strings.HasSuffix(a, string(board.InvalidClaim)) || !cOK && !strings.HasSuffix(c, string(board.InvalidTransition)) {
				t.Fatalf("round %d: loser codes %q / %q", round, a, c)
			}
		}
	})
}

// A short lease expires in another process; the first holder's renew,
// complete and release are all refused.
func TestRace_FencingAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	contention(t, func(t *testing.T, dir string) {
		b := openBoard(t, dir)
		it := create(t, b, "fenced")
		a := startClient(t, dir, "claim", "alice", []string{it.ID}, nil, "BOARD_TEST_LEASE=150").Wait(t)[0]
		if !strings.HasSuffix(a, " OK 1") {
			t.Fatalf("alice: %q", a)
		}
		time.Sleep(250 * time.Millisecond)
		bob := startClient(t, dir, "claim", "bob", []string{it.ID}, nil).Wait(t)[0]
		if !strings.HasSuffix(bob, " OK 2") {
			t.Fatalf("bob: %q", bob)
		}
		if _, err := b.Renew(t.Context(), it.ID, 1, nil); code(err) != board.InvalidClaim {
			t.Fatalf("stale renew: %v", err)
		}
		if got := startClient(t, dir, "complete", "alice", []string{it.ID}, nil, "BOARD_TEST_TOKEN=1").Wait(t)[0]; !strings.HasSuffix(got, string(board.InvalidClaim)) {
			t.Fatalf("stale complete: %q", got)
		}
		if _, err := b.Release(t.Context(), it.ID, 1, ""); code(err) != board.InvalidClaim {
			t.Fatalf("stale release: %v", err)
		}
		if got := startClient(t, dir, "complete", "bob", []string{it.ID}, nil, "BOARD_TEST_TOKEN=2").Wait(t)[0]; !strings.HasSuffix(got, " OK 0") {
			t.Fatalf("bob's complete: %q", got)
		}
		if got := transitions(t, b, it.ID); got != "create,claim,orphan-recovery,claim,complete" {
			t.Fatalf("history = %s", got)
		}
	})
}

// A claimer killed with SIGKILL: the next get (or sweep) returns the item
// to open with one orphan-recovery event naming the dead holder.
func TestRace_KilledClaimer(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	contention(t, func(t *testing.T, dir string) {
		b := openBoard(t, dir)
		for _, via := range []string{"get", "sweep"} {
			it := create(t, b, "orphan via "+via)
			c := startClient(t, dir, "claim-and-hang", "doomed", []string{it.ID}, nil, "BOARD_TEST_LEASE=150")
			c.WaitOutput(t, " OK ", 10*time.Second)
			if !c.Kill() {
				t.Fatal("the claimer was gone before the kill")
			}
			time.Sleep(200 * time.Millisecond)
			if via == "get" {
				v, err := b.Get(t.Context(), it.ID)
				if err != nil || v.Status != board.StatusOpen || v.Claim != nil {
					t.Fatalf("get after kill: %+v %v", v, err)
				}
			} else if n, err := b.Sweep(t.Context(), ""); n != 1 || err != nil {
				t.Fatalf("sweep after kill: %d %v", n, err)
			}
			evs, _ := b.Events(t.Context(), it.ID)
			if got := transitions(t, b, it.ID); got != "create,claim,orphan-recovery" {
				t.Fatalf("history = %s", got)
			}
			if evs[2].Actor.Human != "doomed" || evs[2].ClaimToken == nil || *evs[2].ClaimToken != 1 {
				t.Fatalf("orphan-recovery event %+v", evs[2])
			}
		}
	})
}
