package record_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
)

// TestMain lets the test binary act as a writer process, so races and
// crashes involve real OS processes.
func TestMain(m *testing.M) { proctest.Main(m, writerMain) }

func writerMain(role string) int {
	g, err := gitstore.Open(os.Getenv("RECORD_TEST_DIR"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s := record.Open(g)
	n, _ := strconv.Atoi(os.Getenv("RECORD_TEST_N"))
	tag := os.Getenv("RECORD_TEST_TAG")
	var refs []record.Reference
	if id := os.Getenv("RECORD_TEST_REF"); id != "" { // every record references it
		refs = []record.Reference{{Rel: "relates", ID: id}}
	}
	for i := 0; role == "loop" || i < n; i++ {
		_, err := s.Append(context.Background(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("%s-%d", tag, i),
			Scope: tag, Source: record.Source{CapturePoint: "test", SessionID: tag}, Content: strings.Repeat("body ", 40),
			References: refs})
		if err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			return 1
		}
	}
	return 0
}

func startWriter(t *testing.T, dir, role, tag string, n int) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, proctest.Spec{Role: role, Env: []string{"RECORD_TEST_DIR=" + dir,
		"RECORD_TEST_N=" + strconv.Itoa(n), "RECORD_TEST_TAG=" + tag}})
}

// allClaims returns claim → count over every record in the tree, and
// checks each file parses and sits at the path its id computes.
func allClaims(t *testing.T, dir string) map[string]int {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sn, err := record.Open(g).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	files := 0
	err = sn.WalkIDs("", func(id string, blob gitstore.Hash) (bool, error) {
		files++
		data, err := g.ReadBlob(blob)
		if err != nil {
			return false, err
		}
		r, err := record.Parse(data)
		if err != nil || r.ID != id {
			return false, fmt.Errorf("record %s is partial or corrupt: %v", id, err)
		}
		out[r.Claim]++
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(gt.Git(t, dir, "rev-list", "--count", record.RefName)); n != files {
		t.Fatalf("%d commits but %d record files", n, files)
	}
	return out
}

// 8 processes × 100 appends while a loop runs `git pack-refs --all`:
// every record is present exactly once.
func TestAppend_EightProcessesWithPackRefs(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	dir := gt.NewRepo(t)
	const procs, each = 8, 100
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	packs := 0
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			gt.GitErr(dir, "pack-refs", "--all")
			packs++
		}
	}()
	var ps []*proctest.Proc
	for p := 0; p < procs; p++ {
		ps = append(ps, startWriter(t, dir, "count", fmt.Sprintf("w%d", p), each))
	}
	for _, p := range ps {
		if err := p.WaitErr(); err != nil {
			t.Errorf("writer failed: %v\n%s", err, p.Stderr())
		}
	}
	close(stop)
	wg.Wait()
	claims := allClaims(t, dir)
	if len(claims) != procs*each {
		t.Fatalf("%d distinct records, want %d", len(claims), procs*each)
	}
	for p := 0; p < procs; p++ {
		for i := 0; i < each; i++ {
			if c := claims[fmt.Sprintf("w%d-%d", p, i)]; c != 1 {
				t.Fatalf("w%d-%d present %d times", p, i, c)
			}
		}
	}
	t.Logf("pack-refs ran %d times during the race", packs)
	gt.Fsck(t, dir)
}

// A writer killed with SIGKILL at random points, 60 times: the ref stays
// intact, fsck stays clean, no record is partial, and the next append
// works (a lock left by the dead writer is broken by the stale-lock
// policy).
func TestAppend_SurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop")
	}
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.staleLockMs", "200")
	// A first writer runs until the ref exists (how long that takes
	// depends on the machine's file creation speed), so that every kill
	// below lands on a record that already has a tip to keep intact.
	first := startWriter(t, dir, "loop", "k-first", 0)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := gt.GitErr(dir, "rev-parse", "--verify", "-q", record.RefName); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first writer wrote no record in 30 s")
		}
	}
	first.Kill()
	kills := 1
	for round := 0; round < 60; round++ {
		w := startWriter(t, dir, "loop", fmt.Sprintf("k%d", round), 0)
		time.Sleep(time.Duration(5+rand.IntN(40)) * time.Millisecond)
		if w.Kill() {
			kills++
		}
		if _, err := gt.GitErr(dir, "rev-parse", "--verify", "-q", record.RefName); err != nil {
			t.Fatalf("round %d: ref broken or missing", round)
		}
	}
	claims := allClaims(t, dir)
	// The next append works.
	g, _ := gitstore.Open(dir)
	defer g.Close()
	if _, err := record.Open(g).Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "after the crashes"}); err != nil {
		t.Fatalf("append after crashes: %v", err)
	}
	for c, n := range claims {
		if n != 1 {
			t.Fatalf("%s present %d times", c, n)
		}
	}
	t.Logf("%d kills, %d records survived", kills, len(claims))
	gt.Fsck(t, dir)
}
