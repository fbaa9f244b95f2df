package odb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// newPack writes one blob into a pack of its own with git pack-objects and
// returns the pack's base name and the blob.
func newPack(t *testing.T, repo, content string) (string, oid.Hash) {
	t.Helper()
	h := strings.TrimSpace(runGit(t, repo, strings.NewReader(content), "hash-object", "-w", "--stdin"))
	sum := strings.TrimSpace(runGit(t, repo, strings.NewReader(h+"\n"), "pack-objects", "-q", filepath.Join(objectsDir(repo), "pack", "pack")))
	os.Remove(filepath.Join(objectsDir(repo), h[:2], h[2:])) // only in the pack now
	return filepath.Join(objectsDir(repo), "pack", "pack-"+sum), oid.NewHash(h)
}

// TestAddPack: a writer that put a pack in place maps it without listing
// the pack directory, reads its objects at once, and after maxAddedPacks
// such packs scans again, which drops the packs deleted meanwhile.
func TestAddPack(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 5, "main")
	runGit(t, repo, nil, "repack", "-adq")
	db := openDB(t, objectsDir(repo))

	early, earlyBlob := newPack(t, repo, "before the first lookup\n")
	if err := db.AddPack(early); err != nil { // nothing scanned yet: a no-op
		t.Fatal(err)
	}
	if mappedPacks(db) != 0 {
		t.Fatal("AddPack before the first lookup mapped a pack")
	}
	if _, data, err := db.Read(earlyBlob); err != nil || string(data) != "before the first lookup\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	scans := scanCount.Load()
	mapped := mappedPacks(db)

	base, blob := newPack(t, repo, "one write\n")
	if err := db.AddPack(base); err != nil {
		t.Fatal(err)
	}
	if err := db.AddPack(base); err != nil { // already mapped: left alone
		t.Fatal(err)
	}
	if got := mappedPacks(db); got != mapped+1 {
		t.Fatalf("mapped %d packs, want %d", got, mapped+1)
	}
	if _, data, err := db.Read(blob); err != nil || string(data) != "one write\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	if n := scanCount.Load() - scans; n != 0 {
		t.Fatalf("%d scans of the pack directory after AddPack, want none", n)
	}

	// A pack deleted on disk stays mapped until a scan; the scan that
	// AddPack runs past maxAddedPacks drops it.
	os.Remove(base + ".pack")
	os.Remove(base + ".idx")
	for i := 1; i < maxAddedPacks; i++ {
		b, _ := newPack(t, repo, fmt.Sprintf("write %d\n", i))
		if err := db.AddPack(b); err != nil {
			t.Fatal(err)
		}
	}
	if n := scanCount.Load() - scans; n != 0 {
		t.Fatalf("%d scans after %d added packs, want none", n, maxAddedPacks)
	}
	last, lastBlob := newPack(t, repo, "one too many\n")
	if err := db.AddPack(last); err != nil {
		t.Fatal(err)
	}
	if n := scanCount.Load() - scans; n != 1 {
		t.Fatalf("%d scans after %d added packs, want one", n, maxAddedPacks+1)
	}
	if got, want := mappedPacks(db), len(packFiles(t, objectsDir(repo))); got != want {
		t.Fatalf("mapped %d packs after the scan, want the %d on disk", got, want)
	}
	if _, _, err := db.Read(lastBlob); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Read(blob); err == nil {
		t.Fatal("a deleted pack's object is still read after the scan")
	}

	db.Close()
	if err := db.AddPack(last); err == nil {
		t.Fatal("AddPack after Close succeeded")
	}
}

// TestPackDataMappedOnFirstRead: a scan maps every index but no .pack; a
// read maps the one pack it reads from, and a .pack gone from under its
// index is not found (the read's rescan drops an index without its pack,
// as git does), never read from a stale mapping.
func TestPackDataMappedOnFirstRead(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 3, "main")
	runGit(t, repo, nil, "repack", "-adq")
	var blobs []oid.Hash
	var bases []string
	for i := 0; i < 3; i++ {
		b, h := newPack(t, repo, fmt.Sprintf("pack %d\n", i))
		bases, blobs = append(bases, b), append(blobs, h)
	}
	db := openDB(t, objectsDir(repo))
	mappedData := func() int { return countPacks(db, func(p *pack) bool { return p.data != nil }) }
	if _, data, err := db.Read(blobs[1]); err != nil || string(data) != "pack 1\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	if got := mappedPacks(db); got != 4 {
		t.Fatalf("%d indexes mapped, want 4", got)
	}
	if got := mappedData(); got != 1 {
		t.Fatalf("%d .pack files mapped after one read, want 1", got)
	}
	os.Remove(bases[2] + ".pack")
	if _, _, err := db.Read(blobs[2]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read of an object whose .pack is gone = %v, want ErrNotFound", err)
	}
	if got := mappedPacks(db); got != 3 {
		t.Fatalf("%d indexes mapped after the rescan, want 3", got)
	}
	if _, _, err := db.Read(blobs[2]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read of an object whose .pack is gone = %v, want ErrNotFound", err)
	}
}

// TestAddPack_ManyPacksOnDisk: with more packs on disk than roll-ups keep
// up with (260 here), AddPack still maps a new pack without listing the
// directory; only the 65th added pack scans.
func TestAddPack_ManyPacksOnDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 260 packs")
	}
	repo := initRepo(t, t.TempDir())
	var blob oid.Hash
	for i := 0; i < 260; i++ {
		_, blob = newPack(t, repo, fmt.Sprintf("pack %d\n", i))
	}
	db := openDB(t, objectsDir(repo))
	if _, _, err := db.Read(blob); err != nil {
		t.Fatal(err)
	}
	scans := scanCount.Load()
	for i := 0; i < 3; i++ {
		b, h := newPack(t, repo, fmt.Sprintf("new %d\n", i))
		if err := db.AddPack(b); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Read(h); err != nil {
			t.Fatal(err)
		}
	}
	if n := scanCount.Load() - scans; n != 0 {
		t.Fatalf("%d scans of a 260-pack directory for 3 added packs, want none", n)
	}
}

// TestIndexMappedOnFirstLookup: a scan lists the packs without mapping
// their indexes; a lookup maps them newest first until it finds the
// object, so a read of new objects leaves the old packs' indexes alone. An
// index deleted after the listing (a repack) counts as an empty pack, and
// the read finds its object in the new pack after listing again.
func TestIndexMappedOnFirstLookup(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 3, "main")
	runGit(t, repo, nil, "repack", "-adq")
	var blobs []oid.Hash
	for i := 0; i < 3; i++ {
		b, h := newPack(t, repo, fmt.Sprintf("lazy %d\n", i))
		when := time.Now().Add(time.Duration(i+1) * time.Minute) // newer than the repacked pack
		if err := os.Chtimes(b+".pack", when, when); err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, h)
	}
	db := openDB(t, objectsDir(repo))
	ready := func() int { return countPacks(db, func(p *pack) bool { return p.idx != nil }) }
	if _, data, err := db.Read(blobs[2]); err != nil || string(data) != "lazy 2\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	if got := ready(); got != 1 {
		t.Fatalf("%d indexes mapped after reading the newest pack's object, want 1", got)
	}
	if _, data, err := db.Read(blobs[0]); err != nil || string(data) != "lazy 0\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	if got := ready(); got != 3 {
		t.Fatalf("%d indexes mapped after reading the third newest pack's object, want 3", got)
	}
	head := oid.NewHash(strings.TrimSpace(runGit(t, repo, nil, "rev-parse", "main")))
	runGit(t, repo, nil, "repack", "-Adq") // deletes the packs, the oldest not yet mapped; unreachable blobs go loose
	if typ, _, err := db.Read(head); err != nil || typ != oid.CommitObject {
		t.Fatalf("Read of a commit whose pack was repacked away = %v, %v", typ, err)
	}
	if _, _, err := db.Read(blobs[1]); err != nil {
		t.Fatalf("Read of an object of a deleted pack, now loose: %v", err)
	}
}

// countPacks counts the local store's packs for which f holds.
func countPacks(db *DB, f func(*pack) bool) int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	n := 0
	for _, p := range db.stores[0].packs {
		if f(p) {
			n++
		}
	}
	return n
}
