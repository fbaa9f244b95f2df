// Package odb is a small, read-only git object database tuned for fast
// process start and low memory on large repositories.
//
// # Formats
//
// Objects are named by SHA-1 only. Supported storage:
//
//   - Loose objects, objects/xx/yyyy…: a zlib stream of "type size\0content".
//     The header's type and decimal size are validated and the content must
//     have exactly that size.
//   - Packs, objects/pack/pack-*.idx with a matching .pack. Only version 2
//     indexes are accepted (magic "\377tOc"), including the 64-bit
//     large-offset table; packs must have the "PACK" signature, version 2 or
//     3, an object count equal to the index's and a trailing checksum equal to
//     the one recorded in the index. Both files are mmap'd read-only (read
//     into memory on platforms without mmap), each on first use: the index
//     when a lookup first reaches its pack (a scan only lists the packs and
//     stats each .pack for its age), the .pack (and its checks) when an
//     object in it is first read, so a call that reads a few objects of the
//     newest packs opens only those, as git does. An index found deleted
//     then (a repack since the listing) makes its pack empty; an invalid one
//     is an error naming the file. Lookups use the fanout table and
//     a binary search directly on the mapped index; nothing per object is
//     decoded or kept in memory.
//   - Pack entries of type commit, tree, blob and tag, and OFS_DELTA and
//     REF_DELTA entries. A REF_DELTA base may live in the same pack, another
//     pack, or a loose object of any store. Delta chains are resolved
//     iteratively, capped at 10,000 links (which also stops REF_DELTA cycles),
//     and recently resolved objects are kept in an LRU cache (4 MiB by default) keyed by
//     (pack, offset), so walking trees that delta against each other stays
//     cheap.
//   - Alternates: objects/info/alternates (absolute paths or paths relative
//     to the objects directory, '#' comments, blank lines ignored), followed
//     recursively up to depth 5 and searched after the local store.
//
// Everything read from a file or mapping is bounds-checked: a truncated or
// corrupt file yields an error naming the file instead of a panic. Should a
// mapped file be truncated underneath the process (git never does this; it
// replaces files by renaming), the resulting memory fault is turned into an
// error too.
//
// # Lookup and rescan policy
//
// Open only resolves the alternates chain; the pack directories are listed
// and mapped on the first lookup. Each store (local first, then alternates) is
// searched packs first (newest pack first), then loose objects. If the object
// is not found anywhere, every pack directory is rescanned once — packs that
// are still listed stay mapped, new ones are mapped, vanished ones (removed by
// a concurrent git gc or git repack) are dropped — and the search is
// repeated before reporting ErrNotFound. A deleted pack file stays readable
// while mapped; it is unmapped only when a rescan drops it or on Close.
//
// A DB is safe for concurrent use. Readers share a read lock while touching
// mapped memory, so unmapping waits for in-flight reads to finish.
package odb
