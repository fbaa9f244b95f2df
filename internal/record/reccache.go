package record

import (
	"sync"

	"github.com/ideate/git-ideate/internal/gitstore"
)

// recCache keeps parsed records by blob name. A blob never changes under
// its name, so a hit is always right; the cache only bounds memory and
// saves the inflate and Parse of a record read again (the first page read
// after an append parses the one new record, not the whole page).
//
// It holds two generations: a record is put in the young one, a hit in the
// old one moves it to the young one, and when the young one holds
// recCacheBytes the old one is dropped and the young one becomes old. So a
// record read on every page stays, a long scan evicts at most what it
// passed, and the whole is at most about 2×recCacheBytes.
type recCache struct {
	mu         sync.Mutex
	young, old map[gitstore.Hash]cachedRecord
	bytes      int // approximate size of young
}

type cachedRecord struct {
	r    *Record // nil when the blob is not a record file
	size int
}

const (
	recCacheBytes = 512 << 10 // per generation
	recCacheLarge = 64 << 10
)

// recordSize is the approximate memory a parsed record holds.
func recordSize(r *Record) int {
	n := 160 + len(r.ID) + len(r.Kind) + len(r.Claim) + len(r.VerificationAnchor) + len(r.Scope) +
		len(r.Source.CapturePoint) + len(r.Source.SessionID) + len(r.Source.TaskID) + len(r.Source.Timestamp) + len(r.Content)
	for _, ref := range r.References {
		n += 32 + len(ref.Rel) + len(ref.ID)
	}
	return n
}

// get returns a copy of the cached record (a caller may change what it
// gets) and whether the blob was cached; a nil record with true means the
// blob is not a record file.
func (c *recCache) get(h gitstore.Hash) (*Record, bool) {
	c.mu.Lock()
	e, ok := c.young[h]
	if !ok {
		if e, ok = c.old[h]; ok {
			delete(c.old, h)
			c.insert(h, e)
		}
	}
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return e.r.copy(), true
}

// put caches the parse of blob h (r nil: not a record). Records with a
// body over recCacheLarge are not kept.
func (c *recCache) put(h gitstore.Hash, r *Record) {
	e := cachedRecord{size: 64}
	if r != nil {
		e.r, e.size = r.copy(), recordSize(r)
	}
	if e.size > recCacheLarge {
		return
	}
	c.mu.Lock()
	if _, ok := c.young[h]; !ok {
		c.insert(h, e)
	}
	c.mu.Unlock()
}

func (c *recCache) insert(h gitstore.Hash, e cachedRecord) {
	if c.young == nil || c.bytes+e.size > recCacheBytes {
		c.old, c.young, c.bytes = c.young, make(map[gitstore.Hash]cachedRecord, 256), 0
	}
	c.young[h] = e
	c.bytes += e.size
}

func (r *Record) copy() *Record {
	if r == nil {
		return nil
	}
	c := *r
	if r.References != nil {
		c.References = append([]Reference(nil), r.References...)
	}
	return &c
}
