package gitstore

import (
	"sync"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// objCache keeps recently read trees and commits. Objects are immutable by
// name, so a hit is always right; the cache only bounds memory. An append
// touches the same few trees several times (format check, reference
// checks, insert), and a page walk revisits parent trees for each leaf.
type objCache struct {
	mu    sync.Mutex
	m     map[Hash]object
	bytes int
}

const objCacheMax = 2 << 20

func (c *objCache) get(h Hash) (object, bool) {
	c.mu.Lock()
	o, ok := c.m[h]
	c.mu.Unlock()
	return o, ok
}

func (c *objCache) put(h Hash, t oid.ObjectType, data []byte) {
	if t != oid.TreeObject && t != oid.CommitObject || len(data) > objCacheMax/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+len(data) > objCacheMax {
		c.m, c.bytes = make(map[Hash]object, 256), 0 // crude but bounded: start over
	}
	if _, ok := c.m[h]; !ok {
		c.m[h] = object{h, t, data}
		c.bytes += len(data)
	}
}
