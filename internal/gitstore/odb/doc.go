// Package odb is a small, read-only git object database: loose objects,
// version 2 pack indexes and packs (mmap'd, each on first use, as git does,
// so a call that reads a few objects of the newest packs opens only those),
// OFS_DELTA and REF_DELTA entries (chains capped at 10,000 links, which
// also stops REF_DELTA cycles; resolved bases kept in an LRU cache keyed by
// pack and offset), and objects/info/alternates up to depth 5. Objects are
// named by SHA-1 only.
//
// Everything read from a file or mapping is bounds-checked: a truncated or
// corrupt file yields an error naming it, not a panic; a memory fault from
// a mapped file truncated underneath (git never does that: it renames) is
// turned into an error too.
//
// Each store (local first, then alternates) is searched packs first,
// newest first, then loose objects. An object found nowhere makes every
// pack directory be listed again once (packs still listed stay mapped,
// vanished ones, removed by a repack, are unmapped) before ErrNotFound.
// A DB is safe for concurrent use: readers share a read lock while in
// mapped memory, so unmapping waits for them.
package odb
