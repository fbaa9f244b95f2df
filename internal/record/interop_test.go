package record_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
)

// The record keeps working while git repacks, gcs, is cloned and fetched.
func TestInterop_GCCloneFetch(t *testing.T) {
	s, dir := newStore(t)
	appendN(t, s, 40, func(i int) string { return "before-gc" })
	gt.Git(t, dir, "gc", "--quiet", "--aggressive")
	appendN(t, s, 10, func(i int) string { return "after-gc" })
	gt.Git(t, dir, "repack", "-adq", "--depth=50", "--window=250")
	p, err := s.ReadPage(record.PageRequest{})
	if err != nil || len(p.Rows) != 50 {
		t.Fatalf("after gc and repack: %d rows, %v", len(p.Rows), err)
	}

	// A clone fetches refs/ideate/* with a refspec and reads the same records.
	clone := filepath.Join(t.TempDir(), "clone")
	gt.Git(t, dir, "clone", "-q", dir, clone)
	gt.Git(t, clone, "fetch", "-q", "origin", "+refs/ideate/*:refs/ideate/*")
	g2, err := gitstore.Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	s2 := record.Open(g2)
	p2, err := s2.ReadPage(record.PageRequest{})
	if err != nil || len(p2.Rows) != 50 {
		t.Fatalf("clone reads %d rows, %v", len(p2.Rows), err)
	}
	for i := range p.Rows {
		if p.Rows[i].ID != p2.Rows[i].ID {
			t.Fatalf("row %d differs between origin and clone", i)
		}
	}
	// The clone appends; the origin fetches it back (fast-forward).
	appendN(t, s2, 5, func(i int) string { return "from-clone" })
	gt.Git(t, dir, "fetch", "-q", clone, "refs/ideate/record:refs/ideate/record")
	p, _ = s.ReadPage(record.PageRequest{Filter: record.Filter{Scope: "from-clone"}})
	if len(p.Rows) != 5 {
		t.Fatalf("origin sees %d records from the clone", len(p.Rows))
	}
	appendN(t, s, 1, func(i int) string { return "after-fetch" })
	gt.Fsck(t, dir)
	gt.Fsck(t, clone)
}

// Loose objects do not pile up: past gc.auto, an append starts a repack in
// the background and the loose count falls.
func TestMaintenance_BackgroundGC(t *testing.T) {
	dir := gt.NewRepo(t)
	os.Unsetenv("GIT_IDEATE_NO_MAINTENANCE")
	gt.Git(t, dir, "config", "gc.auto", "256")
	gt.Git(t, dir, "config", "gc.autoDetach", "false")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := record.Open(g)
	// git's test (more than ceil(256/256) = 1 object in objects/17) depends
	// on how hashes fall, so append until a repack has started.
	lock := filepath.Join(dir, ".git", "ideate", "maintenance.lock")
	appended := 0
	for ; appended < 3000; appended++ {
		if _, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("c%d", appended)}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(lock); err == nil && appended >= 100 {
			break
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := gt.Git(t, dir, "count-objects", "-v")
		packs := 0
		for _, l := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(l, "packs: "); ok {
				packs, _ = strconv.Atoi(v)
			}
		}
		if packs > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background gc made no pack:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Wait for the repack to let go of the repository before the temp dir goes.
	for time.Now().Before(deadline) {
		if _, err := os.Stat(lock); os.IsNotExist(err) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "gc.log")); err == nil {
		t.Fatal("maintenance left a gc.log, which would stop git gc --auto for a day")
	}
	p, err := s.ReadPage(record.PageRequest{})
	if err != nil || len(p.Rows) != 100 || p.NextCursor == nil {
		t.Fatalf("read after gc: %d rows, %v", len(p.Rows), err)
	}
	gt.Fsck(t, dir)
}
