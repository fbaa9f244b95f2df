// Package record is the process record: an append-only log of what was
// decided, found and done in a repository, kept as commits on
// refs/ideate/record. A record is never edited; a correction is a new
// record with a "supersedes" reference to the old one.
//
// # What it owns
//
//   - Ids: ULIDs minted strictly increasing per process (IDSource), and the
//     trie path of a record in the tree (Path): directories on the id's
//     timestamp characters, so a burst never makes a large directory and
//     tree order is time order.
//   - The file format (Marshal, Parse): a front matter of JSON-string
//     scalars, a blank line, the body. The bytes equal the existing
//     JavaScript implementation's; docs/FORMAT.md is the specification and
//     the golden files in testdata hold it.
//   - Append: validation, the secret gate over every text field, the
//     reference checks and the commit.
//   - Reads: Snapshot (one commit's view), Get, the newest-first Walk with a
//     keyset boundary, Select and Page under the paging rules, backlinks,
//     Prime (the digest a session starts with) and Export (the files as
//     the existing implementation lays them out).
//   - The host-neutral captures built on Append: decisions, session
//     outcomes (SessionOutcome, which the host package fills from its own
//     payload), and the commit-boundary record of a commit that landed,
//     with the NoteLine naming it on the commit's note (NotesRef).
//
// # Flow
//
// Append trims and validates the input (a record without a claim, with a
// bad id, timestamp or reference, or with a body over MaxContent is
// refused), passes every text field through secretgate before any object
// exists, and renders the file once. Then one gitstore transaction reads
// the tip's root tree (RootTree checks its format version), checks that a
// supersedes edge names a record and that every other edge names a record
// or, through Store.Resolve, a board item, notes the ids cited in the prose
// that resolve to nothing (AppendResult.Unresolved, never an error),
// writes the blob, makes sure the format entry is present and inserts the
// file at its path. The build is a pure function of the tip, so when
// another writer moves the ref it simply runs again.
//
// A read takes a Snapshot of the current tip and walks the trie from the
// right, newest first; a page stops at its limit or at the payload budget
// and hands back a cursor bound to its filter. Backlinks are derived, not
// stored: an index keyed by root tree is brought up to date by a tree diff,
// so its cost follows the new records. A Store keeps it in memory and
// writes it to a file under .git/ideate/ for the next process (at most once
// a second); a lost or corrupt file is rebuilt from the record. A Store also
// keeps a bounded cache of parsed records by blob name.
//
// # Concurrency
//
// A Store may be used by several goroutines and several processes at once:
// appends serialize on the ref's compare-and-swap and never lose a record,
// two appends of one id leave exactly one (the second is DUPLICATE_ID),
// and a Snapshot is consistent however the ref moves after it was taken
// (its backlinks too: the shared index moves back as well as forward).
// The Observer is called synchronously and must be cheap.
//
// # Errors
//
// Bad input and refused appends are *apperr.Error with nothing written:
// apperr.Schema for a malformed field, apperr.DanglingSupersedes for an
// edge (of any rel) to nothing, Duplicate for an id already present, apperr.FormatVersion for a record written by a newer git
// ideate, apperr.NotFound from Get, and the paging codes for a bad cursor.
// A file in the tree that does not parse is skipped by reads and
// ErrUnparseable from Parse.
package record
