package odb

import (
	"os"
	"sync"
	"testing"
)

// TestDropPacks: the packs named are unmapped and forgotten (nothing of
// theirs stays mapped, so their files can be recycled); their objects
// are still read, from the pack that holds them too, by a rescan on the
// miss; packs not named stay mapped. Readers running meanwhile read
// every object whole (run with -race).
func TestDropPacks(t *testing.T) {
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 5, "main")
	runGit(t, repo, nil, "repack", "-adq")
	db := openDB(t, objectsDir(repo))
	compareAll(t, repo, db) // maps the full pack

	small, blob := newPack(t, repo, "merged later\n")
	other, otherBlob := newPack(t, repo, "stays\n")
	for _, b := range []string{small, other} {
		if err := db.AddPack(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, data, err := db.Read(blob); err != nil || string(data) != "merged later\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	// The roll-up: one pack for all, the two blobs in it too (they are
	// unreachable: -k keeps them); then the small pack is dropped.
	runGit(t, repo, nil, "repack", "-a", "-d", "-k", "-q")

	var dropped *pack
	db.mu.RLock()
	for _, p := range db.stores[0].packs {
		if p.base == small {
			dropped = p
		}
	}
	db.mu.RUnlock()
	if dropped == nil || dropped.data == nil {
		t.Fatal("the small pack is not mapped before the drop")
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, data, err := db.Read(otherBlob); err != nil || string(data) != "stays\n" {
					t.Errorf("Read during the drop = %q, %v", data, err)
					return
				}
			}
		}()
	}
	db.DropPacks([]string{small})
	close(stop)
	wg.Wait()

	db.mu.RLock()
	for _, p := range db.stores[0].packs {
		if p.base == small {
			t.Error("the dropped pack is still listed")
		}
	}
	db.mu.RUnlock()
	if dropped.data != nil || dropped.idx != nil {
		t.Error("the dropped pack is still mapped")
	}
	os.Remove(small + ".pack")
	os.Remove(small + ".idx")
	if _, data, err := db.Read(blob); err != nil || string(data) != "merged later\n" {
		t.Fatalf("Read after the drop = %q, %v", data, err)
	}
	compareAll(t, repo, db)
}
