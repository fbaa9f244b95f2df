package odb

import (
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// dropPacks forgets exactly the entries of the packs named, keeps the
// others readable, and gives their bytes back to the budget.
func TestBaseCache_DropPacks(t *testing.T) {
	c := newBaseCache(1 << 20)
	for pack := uint64(1); pack <= 3; pack++ {
		for off := uint64(0); off < 5; off++ {
			if !c.put(cacheKey{pack, off}, oid.BlobObject, make([]byte, 100)) {
				t.Fatal("put refused")
			}
		}
	}
	before := c.used
	c.dropPacks(map[uint64]bool{1: true, 3: true})
	for pack := uint64(1); pack <= 3; pack++ {
		for off := uint64(0); off < 5; off++ {
			_, _, ok := c.get(cacheKey{pack, off})
			if want := pack == 2; ok != want {
				t.Fatalf("pack %d offset %d cached: %v, want %v", pack, off, ok, want)
			}
		}
	}
	if want := before / 3; c.used != want {
		t.Fatalf("%d bytes in use after dropping two packs of three, want %d", c.used, want)
	}
	c.dropPacks(nil)
	if _, _, ok := c.get(cacheKey{2, 0}); !ok {
		t.Fatal("dropping no packs dropped an entry")
	}
}

// Puts past the budget evict: the cache never holds more than it.
func TestBaseCache_Budget(t *testing.T) {
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 64 {
		db.cache.put(cacheKey{pack: 1, off: uint64(i)}, 3, make([]byte, 100<<10))
	}
	if db.cache.used > cacheBytes {
		t.Fatalf("budget %d: the cache holds %d bytes", cacheBytes, db.cache.used)
	}
}
