package odb

import (
	"container/list"
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
	key  cacheKey
	typ  oid.ObjectType
	data []byte
}

// baseCache is a byte-bounded LRU of resolved pack objects keyed by
// (pack, offset). Stored slices are never handed to callers of DB.Read
// without copying, so they are immutable once inserted.
type baseCache struct {
	mu    sync.Mutex
	max   int
	used  int
	items map[cacheKey]*list.Element
	lru   list.List // of *cacheEntry, most recent first
}

func newBaseCache(maxBytes int) *baseCache {
	return &baseCache{max: maxBytes, items: make(map[cacheKey]*list.Element)}
}

// get returns the cached object; the slice must not be modified.
func (c *baseCache) get(k cacheKey) (oid.ObjectType, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return oid.InvalidObject, nil, false
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*cacheEntry)
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
	if el, ok := c.items[k]; ok {
		c.remove(el)
	}
	for c.used+cost > c.max && c.lru.Len() > 0 {
		c.remove(c.lru.Back())
	}
	c.items[k] = c.lru.PushFront(&cacheEntry{key: k, typ: typ, data: data})
	c.used += cost
	return true
}

// remove drops el; the caller holds c.mu.
func (c *baseCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	c.used -= len(e.data) + cacheEntryOverhead
	delete(c.items, e.key)
}

// dropPacks forgets every entry of the given packs, in one pass over the
// cache: a rescan drops up to maxAddedPacks packs at once.
func (c *baseCache) dropPacks(ids map[uint64]bool) {
	if len(ids) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, el := range c.items {
		if ids[k.pack] {
			c.remove(el)
		}
	}
}
