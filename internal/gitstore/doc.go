// Package gitstore is every touch of git in git ideate: objects, trees,
// commits, refs, notes, configuration, remotes and maintenance of one
// repository. The stores above it keep their state as commits on refs
// under refs/ideate/; nothing above this package runs git or opens a file
// under .git itself.
//
// Objects: a transaction's writes go as one pack, put in place holding the
// ref's lock (see pending); other writes as loose objects; reads go
// through odb. Refs: loose files and packed-refs (parsed once, re-read
// when the file changes); UpdateRef is a compare-and-swap with git's
// <ref>.lock protocol plus an flock on the lock file (see LockPolicy).
// Format: the version entry a store keeps at the top of its trees, checked
// by RootTree and added by EnsureFormat, so a newer store is an error,
// never a misread. Durability is what git's core.fsync gives the same
// write (see syncSet): the pack and index as git's loose objects, the ref
// as git's references.
//
// A writer appends a commit with Transact (build the next tree from the
// tip, retried on a moved tip), TransactGuarded (also holding other refs'
// locks, which must still name what build saw) or CommitOn (one attempt
// from a tip the caller read). A reader takes Ref, then RootTree, Lookup
// and ReadBlob, and sees one commit's snapshot.
//
// A Store is safe for concurrent use, and several processes and git itself
// may use one repository at once: a ref moves only by compare-and-swap, a
// lock file is broken only when git ideate made it and it is unheld and
// older than LockPolicy.StaleAfter (a git's lock never is), objects are
// immutable, and nothing is deleted after a call has answered (see
// maintenance). Every git process a call waits for runs in its own
// process group under the caller's context.
//
// Failures the caller can act on are *apperr.Error: Conflict wrapping
// ErrStale when a compare-and-swap lost, Locked when a ref lock stays held
// past LockPolicy.Timeout, NotARepo, UnsupportedRepo (SHA-256 or reftable),
// Schema for a bad name, NotFound, the Format's code for a store written by
// a newer git ideate, NoRemote and RemoteFailed. I/O failures are returned
// wrapped as they are.
package gitstore
