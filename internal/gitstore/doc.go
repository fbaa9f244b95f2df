// Package gitstore is every touch of git in git ideate: objects, trees,
// commits, refs, notes, configuration, remotes and maintenance of one
// repository. The stores above it (record, steering, board, teamsync) keep
// their state as commits on refs under refs/ideate/ and never learn where
// a file lives in .git; nothing above this package runs git or opens a
// file under .git itself.
//
// # What it owns
//
//   - Discovery: Discover finds the repository the way git does ($GIT_DIR,
//     a subdirectory, a linked worktree's gitfile, a bare repository) and
//     refuses one it cannot write (SHA-256 objects, reftable refs);
//     Repo.StateDir is the per-clone directory for caches and telemetry.
//   - Objects: a transaction's writes as one pack (see pending: two files
//     instead of one per object, put in place holding the ref's lock),
//     other writes as loose objects (temporary file, then rename); reads
//     through odb (loose objects and mmap'd packs); the tree and commit
//     codecs; Insert and Lookup by path, DiffTrees and UnionTrees, whose
//     cost follows what differs because equal subtrees are skipped unread.
//   - Refs: reads of loose refs and packed-refs (parsed once, re-read when
//     the file changes), and UpdateRef, a compare-and-swap with git's
//     <ref>.lock protocol plus an flock on the lock file (see LockPolicy).
//   - Format: the version entry a store keeps at the top of its trees
//     (Format). RootTree reads a tip's root tree and checks that entry;
//     EnsureFormat adds it before a write. A newer or unreadable version is
//     the store's error, never a misread.
//   - Durability as git's core.fsync says for the same write (see
//     syncSet): a write's pack and index as git's loose objects (not
//     forced by git's default), its ref as git's references.
//   - A worktree's changes against a base (WorktreeChanges): git brings a
//     copy of its index to what `git add -A` would stage and compares it
//     with the base.
//   - Notes on refs/notes/ideate, the git configuration as `git config
//     --list --includes` prints it, the commit identity, fetch into a tracking namespace and leased
//     atomic pushes (TrackingRoot, ShadowRoot), and background repacks.
//
// # Flow and concurrency
//
// A writer appends a commit with Transact (build the next tree from the
// tip, retried on a moved tip), TransactGuarded (also holding other refs'
// locks, which must still name what build saw) or CommitOn (one attempt
// from a tip the caller read: a claim). A reader takes Ref, then RootTree,
// Lookup and ReadBlob, and sees one commit's snapshot.
//
// A Store is safe for concurrent use by goroutines, and several processes
// and git itself may use one repository at once: a ref moves only by
// compare-and-swap, a lock file is broken only when unheld and older than
// LockPolicy.StaleAfter, objects are immutable, and nothing is deleted
// after a call has answered (see maintenance). Every git process a call
// waits for runs in its own process group under the caller's context.
//
// # Errors
//
// Failures the caller can act on are *apperr.Error: Conflict wrapping
// ErrStale when a compare-and-swap lost (Transact retries it; CommitOn
// and UpdateRef return it), Locked when a ref lock stays held past
// LockPolicy.Timeout, NotARepo outside a repository, UnsupportedRepo
// for a SHA-256 or reftable one, Schema for a bad ref
// name or object name, NotFound for a name that resolves to nothing, the
// Format's code for a store written by a newer git ideate, NoRemote and
// RemoteFailed for remotes. I/O failures are returned wrapped as they are.
package gitstore
