package record_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
)

// walkedBacklinks derives a snapshot's backlinks the slow way, from every
// record file it holds, without any index or cache: a fresh gitstore, and
// each blob parsed here.
func walkedBacklinks(t *testing.T, dir string, root gitstore.Hash) map[string][]record.Reference {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	out := map[string][]record.Reference{}
	err = g.DiffTrees(gitstore.ZeroHash, root, func(path string, _, e gitstore.TreeEntry) error {
		if filepath.Ext(path) != ".md" {
			return nil
		}
		data, err := g.ReadBlob(e.Hash)
		if err != nil {
			return err
		}
		r, err := record.Parse(data)
		if err != nil {
			return nil
		}
		for _, ref := range r.References {
			out[ref.ID] = append(out[ref.ID], record.Reference{Rel: ref.Rel, ID: r.ID})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, refs := range out {
		sortByReferrer(refs)
	}
	return out
}

func sortByReferrer(refs []record.Reference) {
	for i := 1; i < len(refs); i++ { // newest referrer first, then rel
		for j := i; j > 0 && (refs[j].ID > refs[j-1].ID || refs[j].ID == refs[j-1].ID && refs[j].Rel < refs[j-1].Rel); j-- {
			refs[j], refs[j-1] = refs[j-1], refs[j]
		}
	}
}

// checkNewStore is checkBacklinks through a Store opened afresh, as the
// next process opens one: it starts from the edge file alone.
func checkNewStore(t *testing.T, what, dir string) {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	checkBacklinks(t, what, dir, mustSnapshot(t, record.Open(g)))
}

func checkBacklinks(t *testing.T, what, dir string, sn *record.Snapshot) {
	t.Helper()
	got, err := sn.Backlinks()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(walkedBacklinks(t, dir, sn.Root), got); d != "" {
		t.Fatalf("%s: backlinks differ from the records (-walked +index):\n%s", what, d)
	}
}

func mustSnapshot(t *testing.T, s *record.Store) *record.Snapshot {
	t.Helper()
	sn, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

func refAppend(t *testing.T, s *record.Store, claim string, refs ...record.Reference) string {
	t.Helper()
	res, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: claim, References: refs,
		Source: record.Source{CapturePoint: "test", SessionID: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Record.ID
}

// A long-lived Store keeps its backlinks in memory; records appended by
// another process (which reads and writes the edge file itself) must show
// in its next read, on the page and in Backlinks.
func TestBacklinks_FollowAnotherProcess(t *testing.T) {
	s, dir := newStore(t)
	a := refAppend(t, s, "A")
	b := refAppend(t, s, "B", record.Reference{Rel: "supersedes", ID: a})
	checkBacklinks(t, "first read", dir, mustSnapshot(t, s))

	proctest.Start(t, proctest.Spec{Role: "n", Env: []string{"RECORD_TEST_DIR=" + dir, "RECORD_TEST_N=3",
		"RECORD_TEST_TAG=other", "RECORD_TEST_REF=" + a}}).Wait(t)
	page, err := s.ReadPage(record.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Rows) != 5 {
		t.Fatalf("%d rows, want 5 (the other process's records)", len(page.Rows))
	}
	var rowA record.Row
	for _, r := range page.Rows {
		if r.ID == a {
			rowA = r
		}
	}
	if len(rowA.ReferencedBy) != 4 || rowA.ReferencedBy[3] != (record.Reference{Rel: "supersedes", ID: b}) {
		t.Fatalf("A is referenced by %+v, want the other process's 3 records and B", rowA.ReferencedBy)
	}
	checkBacklinks(t, "after the other process", dir, mustSnapshot(t, s))

	// And the other way: this Store appends, a second Store over the same
	// repository (a new process would start from the edge file) follows.
	g2, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	s2 := record.Open(g2)
	checkBacklinks(t, "second store", dir, mustSnapshot(t, s2))
	refAppend(t, s, "C", record.Reference{Rel: "refutes", ID: b})
	checkBacklinks(t, "second store after the first appended", dir, mustSnapshot(t, s2))
	checkBacklinks(t, "first store", dir, mustSnapshot(t, s))
}

// A snapshot older than the index's root (another goroutine read a newer
// tip first) gets its own backlinks, not the newer ones; and a ref moved
// back by git (a rewrite) drops the edges of the records it no longer has.
func TestBacklinks_OlderSnapshotAndRewrittenRef(t *testing.T) {
	s, dir := newStore(t)
	a := refAppend(t, s, "A")
	old := mustSnapshot(t, s)
	oldTip := old.Tip
	b := refAppend(t, s, "B", record.Reference{Rel: "supersedes", ID: a})
	refAppend(t, s, "C", record.Reference{Rel: "relates", ID: a}, record.Reference{Rel: "relates", ID: b})
	checkBacklinks(t, "new", dir, mustSnapshot(t, s))
	checkBacklinks(t, "old after new", dir, old)
	if got, _ := old.Backlinks(); len(got) != 0 {
		t.Fatalf("the snapshot before any reference has backlinks %v", got)
	}
	checkBacklinks(t, "new after old", dir, mustSnapshot(t, s))

	gt.Git(t, dir, "update-ref", record.RefName, oldTip.String())
	sn := mustSnapshot(t, s)
	if sn.Root != old.Root {
		t.Fatal("the ref did not move back")
	}
	checkBacklinks(t, "rewritten ref", dir, sn)
	p, err := s.ReadPage(record.PageRequest{})
	if err != nil || len(p.Rows) != 1 || len(p.Rows[0].ReferencedBy) != 0 {
		t.Fatalf("page after the rewrite: %+v %v", p, err)
	}
}

// The edge file is a cache for the next process: one that is stale (an
// older root) is brought forward, and one that is corrupt or names a tree
// this repository does not have is rebuilt; either way the backlinks are
// those of the records.
func TestBacklinks_EdgeFileStaleOrCorrupt(t *testing.T) {
	s, dir := newStore(t)
	a := refAppend(t, s, "A")
	refAppend(t, s, "B", record.Reference{Rel: "supersedes", ID: a})
	checkBacklinks(t, "first", dir, mustSnapshot(t, s))
	path := filepath.Join(dir, ".git", "ideate", "record-edges.v1")
	stale, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the first read of a process writes the edge file: %v", err)
	}
	refAppend(t, s, "C", record.Reference{Rel: "relates", ID: a})
	for _, c := range []struct{ what, data string }{
		{"stale", string(stale)},
		{"corrupt", "ideate-record-edges 1 zz\nnot\ta line\n"},
		{"foreign tree", "ideate-record-edges 1 " + "0123456789abcdef0123456789abcdef01234567\n" + a + "\trelates\t" + a + "\n"},
	} {
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		checkNewStore(t, c.what, dir)
	}
}

// A long-lived Store rewrites the edge file at most about once a second,
// not on every read after the tip moved; a new process still reads right
// backlinks from the file however stale it is.
func TestBacklinks_EdgeFileWrittenRarely(t *testing.T) {
	s, dir := newStore(t)
	a := refAppend(t, s, "A")
	path := filepath.Join(dir, ".git", "ideate", "record-edges.v1")
	mustSnapshot(t, s).Backlinks()
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	last := first.ModTime()
	t0 := time.Now()
	for i := 0; i < 20; i++ {
		refAppend(t, s, "R"+strconv.Itoa(i), record.Reference{Rel: "relates", ID: a})
		mustSnapshot(t, s).Backlinks()
		if st, err := os.Stat(path); err == nil && !st.ModTime().Equal(last) {
			writes++
			last = st.ModTime()
		}
	}
	if max := int(time.Since(t0)/time.Second) + 1; writes > max {
		t.Fatalf("the edge file was rewritten %d times in %v of reads", writes, time.Since(t0))
	}
	checkNewStore(t, "a new store over the rarely written file", dir)
}

// Records come from a cache of parsed records by blob: what a caller does
// to a record it got does not change what the next read returns, and a
// record appended by another process reads whole.
func TestRecordCache_CopiesAndOtherWriters(t *testing.T) {
	s, dir := newStore(t)
	a := refAppend(t, s, "A")
	refAppend(t, s, "B", record.Reference{Rel: "supersedes", ID: a})
	sn := mustSnapshot(t, s)
	for i := 0; i < 2; i++ { // the first parses, the second comes from the cache
		recs, _, err := sn.Select(record.Filter{}, "", 10)
		if err != nil || len(recs) != 2 {
			t.Fatal(recs, err)
		}
		recs[0].Claim = "changed by the caller"
		recs[0].References[0].ID = "changed"
	}
	recs, _, err := sn.Select(record.Filter{}, "", 10)
	if err != nil || len(recs) != 2 {
		t.Fatal(recs, err)
	}
	recs[0].Claim = "changed by the caller"
	recs[0].References[0].ID = "changed"
	again, err := sn.Get(recs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Claim != "B" || again.References[0].ID != a {
		t.Fatalf("a caller's change reached the cache: %+v", again)
	}
	proctest.Start(t, proctest.Spec{Role: "n", Env: []string{"RECORD_TEST_DIR=" + dir, "RECORD_TEST_N=2",
		"RECORD_TEST_TAG=other"}}).Wait(t)
	page, err := s.ReadPage(record.PageRequest{IncludeContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Rows) != 4 || page.Rows[0].Claim != "other-1" || page.Rows[1].Claim != "other-0" ||
		page.Rows[0].Content == nil || *page.Rows[0].Content == "" || page.Rows[2].Claim != "B" {
		t.Fatalf("page after another process appended: %+v", page.Rows)
	}
}

// Goroutines reading snapshots of different roots through one Store while
// it appends: each gets the backlinks of its own root (run with -race).
func TestBacklinks_ConcurrentSnapshots(t *testing.T) {
	s, dir := newStore(t)
	ids := []string{refAppend(t, s, "seed")}
	var snaps []*record.Snapshot
	for i := 0; i < 12; i++ {
		ids = append(ids, refAppend(t, s, "R"+strconv.Itoa(i), record.Reference{Rel: "relates", ID: ids[i/2]}))
		snaps = append(snaps, mustSnapshot(t, s))
	}
	want := make([]map[string][]record.Reference, len(snaps))
	for i, sn := range snaps {
		want[i] = walkedBacklinks(t, dir, sn.Root)
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for k := 0; k < 30; k++ {
				i := (k*7 + g*5) % len(snaps)
				got, err := snaps[i].Backlinks()
				if err == nil && !cmp.Equal(want[i], got) {
					err = fmt.Errorf("snapshot %d: backlinks %v, want %v", i, got, want[i])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for i := 0; i < 3; i++ { // the tip moves meanwhile
		refAppend(t, s, "late", record.Reference{Rel: "relates", ID: ids[0]})
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A new process (a CLI read) that finds the edge file a few records
// behind diffs them and leaves the file alone; once it is edgeSaveAfter
// (32) records behind, the next process rewrites it. Backlinks are right
// either way.
func TestBacklinks_EdgeFileNotRewrittenByEveryProcess(t *testing.T) {
	s, dir := newStore(t)
	a := refAppend(t, s, "A")
	path := filepath.Join(dir, ".git", "ideate", "record-edges.v1")
	checkBacklinks(t, "first", dir, mustSnapshot(t, s))
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the first read did not write the edge file: %v", err)
	}
	for i := 0; i < 5; i++ {
		refAppend(t, s, "R"+strconv.Itoa(i), record.Reference{Rel: "relates", ID: a})
		checkNewStore(t, "a process 1-5 records behind the file", dir)
		if now, _ := os.ReadFile(path); !bytes.Equal(now, before) {
			t.Fatalf("a process %d record(s) behind rewrote the edge file", i+1)
		}
	}
	for i := 0; i < 32; i++ {
		refAppend(t, s, "S"+strconv.Itoa(i), record.Reference{Rel: "relates", ID: a})
	}
	checkNewStore(t, "a process 37 records behind", dir)
	if now, _ := os.ReadFile(path); bytes.Equal(now, before) {
		t.Fatal("a process 37 records behind the file left it as it was")
	}
	checkNewStore(t, "a process after the rewrite", dir)
}
