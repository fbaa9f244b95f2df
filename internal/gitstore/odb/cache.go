package odb

import (
	"sync"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// cacheEntryOverhead approximates the bookkeeping bytes of one cache entry so
// that many tiny objects cannot exceed the budget by much.
const cacheEntryOverhead = 96

type cacheKey struct {
	pack uint64 // pack.id
	off  uint64 // entry offset inside the pack
}

type cacheEntry struct {
	key        cacheKey
	typ        oid.ObjectType
	data       []byte
	prev, next *cacheEntry
}

// baseCache is a byte-bounded LRU of resolved pack objects keyed by
// (pack, offset). Stored slices are never handed to callers of DB.Read
// without copying, so they are immutable once inserted.
type baseCache struct {
	mu    sync.Mutex
	max   int
	used  int
	items map[cacheKey]*cacheEntry
	root  cacheEntry // sentinel: root.next is most recent, root.prev least
}

func newBaseCache(maxBytes int) *baseCache {
	c := &baseCache{max: maxBytes, items: make(map[cacheKey]*cacheEntry)}
	c.root.next, c.root.prev = &c.root, &c.root
	return c
}

func (c *baseCache) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *baseCache) pushFront(e *cacheEntry) {
	e.prev, e.next = &c.root, c.root.next
	c.root.next.prev = e
	c.root.next = e
}

// get returns the cached object; the slice must not be modified.
func (c *baseCache) get(k cacheKey) (oid.ObjectType, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return oid.InvalidObject, nil, false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.typ, e.data, true
}

// put stores data (which the caller must no longer modify) and reports
// whether it was retained. Objects larger than a quarter of the budget are
// not cached.
func (c *baseCache) put(k cacheKey, typ oid.ObjectType, data []byte) bool {
	cost := len(data) + cacheEntryOverhead
	if cost > c.max/4 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.unlink(e)
		c.used -= len(e.data) + cacheEntryOverhead
		delete(c.items, k)
	}
	for c.used+cost > c.max && c.root.prev != &c.root {
		old := c.root.prev
		c.unlink(old)
		c.used -= len(old.data) + cacheEntryOverhead
		delete(c.items, old.key)
	}
	e := &cacheEntry{key: k, typ: typ, data: data}
	c.pushFront(e)
	c.items[k] = e
	c.used += cost
	return true
}

// dropPacks forgets every entry of the given packs, in one pass over the
// cache: a rescan drops up to maxAddedPacks packs at once.
func (c *baseCache) dropPacks(ids map[uint64]bool) {
	if len(ids) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if ids[k.pack] {
			c.unlink(e)
			c.used -= len(e.data) + cacheEntryOverhead
			delete(c.items, k)
		}
	}
}

func (c *baseCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = make(map[cacheKey]*cacheEntry)
	c.root.next, c.root.prev = &c.root, &c.root
	c.used = 0
}
