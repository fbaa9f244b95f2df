package record

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// The parsed-record cache stays within its bound however many records go
// through it, keeps what is read again, and never keeps a large body.
func TestRecCache_Bound(t *testing.T) {
	var c recCache
	hash := func(i int) oid.Hash { return oid.ComputeHash(oid.BlobObject, []byte(fmt.Sprint(i))) }
	hot := &Record{ID: "HOT", Claim: "read on every page"}
	c.put(hash(-1), hot)
	body := strings.Repeat("b", 1000)
	for i := 0; i < 20000; i++ {
		c.put(hash(i), &Record{ID: fmt.Sprint(i), Content: body})
		if i%100 == 0 {
			if r, ok := c.get(hash(-1)); !ok || r.Claim != hot.Claim {
				t.Fatalf("after %d records the record read on every page is gone", i)
			}
		}
		if n, b := c.size(); b > 2*recCacheBytes+recCacheLarge {
			t.Fatalf("after %d records the cache holds %d records, %d bytes", i, n, b)
		}
	}
	c.put(hash(-2), &Record{ID: "BIG", Content: strings.Repeat("x", recCacheLarge+1)})
	if _, ok := c.get(hash(-2)); ok {
		t.Fatal("a large record was cached")
	}
	if _, ok := c.get(hash(0)); ok {
		t.Fatal("the first of 20000 records is still cached")
	}
	if n, b := c.size(); n < 100 || b < recCacheBytes/2 {
		t.Fatalf("the cache holds only %d records, %d bytes", n, b)
	}
}

// size returns the number of cached records and their approximate bytes.
func (c *recCache) size() (n, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range []map[gitstore.Hash]cachedRecord{c.young, c.old} {
		for _, e := range g {
			n++
			bytes += e.size
		}
	}
	return n, bytes
}
