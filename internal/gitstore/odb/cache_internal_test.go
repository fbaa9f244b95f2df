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

// OpenCache sets the resolved-object cache's budget, and puts past it
// evict: the cache never holds more than the budget.
func TestOpenCache_Budget(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ ask, want int }{{0, defaultCacheBytes}, {-1, defaultCacheBytes}, {1 << 20, 1 << 20}} {
		db, err := OpenCache(dir, c.ask)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.CacheBytes(); got != c.want {
			t.Fatalf("OpenCache(%d): budget %d, want %d", c.ask, got, c.want)
		}
		for i := range 64 {
			db.cache.put(cacheKey{pack: 1, off: uint64(i)}, 3, make([]byte, 100<<10))
		}
		if db.cache.used > c.want {
			t.Fatalf("budget %d: the cache holds %d bytes", c.want, db.cache.used)
		}
		db.Close()
	}
}
