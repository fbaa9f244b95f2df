package odb

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

func TestLooseOnly(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	for c := 0; c < 3; c++ {
		for i := 0; i < 40; i++ {
			if (i+c)%3 != 0 && c > 0 {
				continue
			}
			p := filepath.Join(repo, fmt.Sprintf("dir%d", i%4), fmt.Sprintf("sub%d", i%3), fmt.Sprintf("f%d.txt", i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("file %d commit %d\n", i, c), i+1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// An empty file exercises the zero-size object.
		if err := os.WriteFile(filepath.Join(repo, "empty"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		runGit(t, repo, nil, "add", "-A")
		runGit(t, repo, nil, "commit", "-q", "-m", fmt.Sprintf("commit %d", c))
	}
	runGit(t, repo, nil, "tag", "-a", "-m", "a tag", "v1")
	if got := packFiles(t, objectsDir(repo)); len(got) != 0 {
		t.Fatalf("expected no packs, found %v", got)
	}
	db := openDB(t, objectsDir(repo))
	n := compareAll(t, repo, db)
	t.Logf("compared %d loose objects", n)

	var missing oid.Hash
	missing[0] = 0xab
	if _, _, err := db.Read(missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read(missing) = %v, want ErrNotFound", err)
	}
}

func TestPackedDeepDeltas(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 200, "main")
	runGit(t, repo, nil, "repack", "-adfq", "--depth=50", "--window=50")
	if got := packFiles(t, objectsDir(repo)); len(got) != 1 {
		t.Fatalf("expected one pack, found %v", got)
	}
	// verify-pack -v reports chain lengths; make sure deep chains exist.
	vp := runGit(t, repo, nil, "verify-pack", "-v", packFiles(t, objectsDir(repo))[0])
	if !strings.Contains(vp, "chain length = 10:") && !strings.Contains(vp, "chain length = 20:") {
		t.Logf("verify-pack:\n%s", vp[strings.Index(vp, "non delta"):])
		t.Fatal("pack has no long delta chains")
	}
	db := openDB(t, objectsDir(repo))
	before := ofsDeltaCount.Load()
	n := compareAll(t, repo, db)
	counts := entryTypeCounts(t, db)
	t.Logf("compared %d objects; entry types %v; ofs deltas applied %d", n, counts, ofsDeltaCount.Load()-before)
	if counts[typOfsDelta] < 100 {
		t.Fatalf("expected many OFS_DELTA entries, got %v", counts)
	}
	if counts[typRefDelta] != 0 {
		t.Fatalf("unexpected REF_DELTA entries: %v", counts)
	}
	if ofsDeltaCount.Load() == before {
		t.Fatal("OFS_DELTA branch not exercised")
	}
}

func TestRefDeltaPack(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 120, "main")
	runGit(t, repo, nil, "-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq", "--depth=50", "--window=20")
	db := openDB(t, objectsDir(repo))
	before := refDeltaCount.Load()
	n := compareAll(t, repo, db)
	counts := entryTypeCounts(t, db)
	t.Logf("compared %d objects; entry types %v; ref deltas applied %d", n, counts, refDeltaCount.Load()-before)
	if counts[typRefDelta] < 50 || counts[typOfsDelta] != 0 {
		t.Fatalf("expected only REF_DELTA entries, got %v", counts)
	}
	if refDeltaCount.Load() == before {
		t.Fatal("REF_DELTA branch not exercised")
	}
}

func TestMixedLooseAndPacks(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 60, "one") // fast-import writes pack 1
	deepHistory(t, repo, 60, "two") // pack 2
	// Loose objects, then an incremental repack of them into pack 3.
	for i := 0; i < 10; i++ {
		runGit(t, repo, strings.NewReader(fmt.Sprintf("lonely blob %d\n", i)), "hash-object", "-w", "--stdin")
	}
	writeAndCommit(t, repo, "loose-a", 20)
	runGit(t, repo, nil, "repack", "-dq")
	writeAndCommit(t, repo, "loose-b", 20) // stay loose
	packs := packFiles(t, objectsDir(repo))
	if len(packs) < 3 {
		t.Fatalf("expected at least 3 packs, found %d", len(packs))
	}
	db := openDB(t, objectsDir(repo))
	n := compareAll(t, repo, db)
	if mappedPacks(db) != len(packs) {
		t.Fatalf("mapped %d packs, want %d", mappedPacks(db), len(packs))
	}
	t.Logf("compared %d objects across %d packs and loose", n, len(packs))
}

// writeAndCommit commits n new files under dir using the porcelain.
func writeAndCommit(t *testing.T, repo, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		p := filepath.Join(repo, dir, fmt.Sprintf("g%d", i%5), fmt.Sprintf("f%d", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%s %d\n", dir, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, repo, nil, "add", "-A")
	runGit(t, repo, nil, "commit", "-q", "-m", dir)
}

func TestAlternates(t *testing.T) {
	root := t.TempDir()
	src := initRepo(t, filepath.Join(root, "src"))
	deepHistory(t, src, 40, "main")
	writeAndCommit(t, src, "srcloose", 5)
	runGit(t, root, nil, "clone", "-q", "--shared", src, filepath.Join(root, "clone"))
	clone := filepath.Join(root, "clone")
	writeAndCommit(t, clone, "cloneloose", 5)
	if _, err := os.Stat(filepath.Join(objectsDir(clone), "info", "alternates")); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, objectsDir(clone))
	if len(db.stores) != 2 {
		t.Fatalf("stores = %d, want 2", len(db.stores))
	}
	n := compareAll(t, clone, db)
	t.Logf("compared %d objects through alternates", n)

	// A chain of relative alternates with comments: c -> b -> src.
	b := initRepo(t, filepath.Join(root, "b"))
	c := initRepo(t, filepath.Join(root, "c"))
	writeAlternates(t, objectsDir(b), "# comment\n\n../../../src/.git/objects\n/nonexistent/objects\n")
	writeAlternates(t, objectsDir(c), "../../../b/.git/objects\n")
	writeAndCommit(t, c, "conly", 3)
	dbc := openDB(t, objectsDir(c))
	if len(dbc.stores) != 3 {
		t.Fatalf("stores = %d, want 3", len(dbc.stores))
	}
	n = compareAll(t, c, dbc)
	t.Logf("compared %d objects through nested relative alternates", n)
}

func writeAlternates(t *testing.T, objects, content string) {
	t.Helper()
	p := filepath.Join(objects, "info", "alternates")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAlternatesCycleAndDepth(t *testing.T) {
	root := t.TempDir()
	var objs []string
	for i := 0; i < 8; i++ {
		objs = append(objs, objectsDir(initRepo(t, filepath.Join(root, fmt.Sprint(i)))))
	}
	for i := 0; i < 7; i++ {
		writeAlternates(t, objs[i], objs[i+1]+"\n")
	}
	writeAlternates(t, objs[7], objs[0]+"\n") // cycle
	db := openDB(t, objs[0])
	if len(db.stores) != maxAlternateDepth+1 {
		t.Fatalf("stores = %d, want %d", len(db.stores), maxAlternateDepth+1)
	}
}

func TestRepackWhileOpen(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 50, "main")
	writeAndCommit(t, repo, "loose1", 10)
	runGit(t, repo, nil, "repack", "-dq") // second pack
	oldPacks := packFiles(t, objectsDir(repo))
	db := openDB(t, objectsDir(repo))
	compareAll(t, repo, db)
	if got := mappedPacks(db); got != len(oldPacks) {
		t.Fatalf("mapped %d packs, want %d", got, len(oldPacks))
	}

	// New objects, then a full repack: old packs are deleted, the new
	// objects exist only in a pack this DB has never seen.
	writeAndCommit(t, repo, "loose2", 10)
	deepHistory(t, repo, 10, "side")
	runGit(t, repo, nil, "repack", "-adq")
	newPacks := packFiles(t, objectsDir(repo))
	if len(newPacks) != 1 {
		t.Fatalf("expected one pack after repack, got %v", newPacks)
	}
	for _, p := range oldPacks {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("old pack %s still exists", p)
		}
	}
	head := oid.NewHash(strings.TrimSpace(runGit(t, repo, nil, "rev-parse", "HEAD")))
	if _, _, err := db.Read(head); err != nil { // needs the rescan
		t.Fatalf("Read new HEAD: %v", err)
	}
	if got := mappedPacks(db); got != 1 {
		t.Fatalf("after rescan mapped %d packs, want 1 (old ones dropped)", got)
	}
	t.Logf("compared %d objects after repack", compareAll(t, repo, db))

	// More loose objects are found without any rescan.
	writeAndCommit(t, repo, "loose3", 3)
	t.Logf("compared %d objects with new loose ones", compareAll(t, repo, db))

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Read(head); err == nil {
		t.Fatal("Read after Close succeeded")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDeletedPackStaysReadable: a pack deleted on disk stays readable while
// mapped, as long as no rescan drops it.
func TestDeletedPackStaysReadable(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 30, "main")
	runGit(t, repo, nil, "repack", "-adq")
	db := openDB(t, objectsDir(repo))
	objs := allObjects(t, repo)
	if _, _, err := db.Read(objs[0].hash); err != nil {
		t.Fatal(err)
	}
	for _, p := range packFiles(t, objectsDir(repo)) {
		os.Remove(p)
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
	}
	for _, o := range objs {
		_, data, err := db.Read(o.hash)
		if err != nil || string(data) != string(o.data) {
			t.Fatalf("Read %s after delete: %v", o.hash, err)
		}
	}
	var missing oid.Hash
	if _, _, err := db.Read(missing); !errors.Is(err, ErrNotFound) { // rescan drops the pack
		t.Fatalf("Read(missing) = %v", err)
	}
	if mappedPacks(db) != 0 {
		t.Fatal("deleted pack still mapped after rescan")
	}
	if _, _, err := db.Read(objs[0].hash); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read after drop = %v, want ErrNotFound", err)
	}
}

func TestLargeOffsetTable(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 40, "main")
	runGit(t, repo, nil, "repack", "-adq")
	pk := packFiles(t, objectsDir(repo))[0]
	idx := strings.TrimSuffix(pk, ".pack") + ".idx"
	// Force every offset above 0x40 into the 64-bit table.
	runGit(t, repo, nil, "index-pack", "--index-version=2,0x40", "-o", idx+".tmp", pk)
	if err := os.Rename(idx+".tmp", idx); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, objectsDir(repo))
	n := compareAll(t, repo, db)
	db.mu.RLock()
	nLarge := db.stores[0].packs[0].nLarge
	db.mu.RUnlock()
	if nLarge < n/2 {
		t.Fatalf("large offset table has %d entries for %d objects", nLarge, n)
	}
	t.Logf("compared %d objects, %d via 64-bit offsets", n, nLarge)
}

func TestConcurrentReads(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 80, "main")
	runGit(t, repo, nil, "repack", "-adfq", "--depth=50", "--window=50")
	writeAndCommit(t, repo, "loose", 10)
	objs := allObjects(t, repo)
	db := openDB(t, objectsDir(repo))

	var wg sync.WaitGroup
	errc := make(chan error, 16)
	stop := make(chan struct{})
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for round := 0; round < 3; round++ {
				for i := range objs {
					o := objs[(i*7+g*131+round)%len(objs)]
					typ, data, err := db.Read(o.hash)
					if err != nil {
						errc <- fmt.Errorf("goroutine %d: %v", g, err)
						return
					}
					if typ.String() != o.typ || string(data) != string(o.data) {
						errc <- fmt.Errorf("goroutine %d: %s differs", g, o.hash)
						return
					}
				}
			}
		}(g)
	}
	// Meanwhile force rescans (misses) and swap the packs underneath.
	var rw sync.WaitGroup
	rw.Add(1)
	go func() {
		defer rw.Done()
		var missing oid.Hash
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			missing[19] = byte(i)
			db.Read(missing)
			if i == 5 {
				cmd := exec.Command("git", "-c", "gc.auto=0", "repack", "-adq")
				cmd.Dir, cmd.Env = repo, gitEnv(repo)
				if out, err := cmd.CombinedOutput(); err != nil {
					errc <- fmt.Errorf("repack: %v: %s", err, out)
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	rw.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
