// Package board is the delegation board: work items that agents and people
// create, claim under a lease, and finish, each kept on its own ref under
// ItemsPrefix. The first-parent chain of an item's ref is its audit trail:
// every commit holds the item as it stood after one transition (item.json),
// the event that made it so (event.json) and the format entry.
//
// # What it owns
//
//   - Items: statuses (open, in_progress, done, cancelled; "blocked" is
//     derived, not stored), metadata updates under an expected version,
//     dependencies, a parent, typed references, and the guards that keep
//     them sound (no cycle, no dangling target).
//   - Claims: a lease per claim, a fencing token that only grows, lazy
//     expiry (a verb that meets an expired lease records an
//     orphan-recovery first) and Sweep for the lapsed claims of a tenant.
//   - Reads: Get, Events, List under the paging rules, Ready, ClaimNext,
//     and the backlinks of an item.
//   - The per-clone index under .git/ideate/ that list, sweep,
//     claimability and backlinks read, keyed by each item ref's tip and
//     refreshed on use; it is never the only copy of anything.
//   - Rebase, which replays an item's local transitions onto another
//     clone's head, each checked as its verb would check it there, for the
//     sync above it.
//   - The work-completion record a completion appends to the process
//     record.
//
// # Flow
//
// Every verb is one call of apply: read the item's head, check the verb's
// guards against that head (status, token, lease, dependencies done, no
// open child), write the next tree and move the ref by one
// compare-and-swap from exactly that head. When another writer moved the
// ref first, the step runs again on the new head, so every guard holds for
// the state the commit lands on. A decision taken on other items is made
// part of the swap through gitstore guards: a claim holds its
// dependencies' refs at the heads it found done, and creating a child
// holds its parent's lock, so a claim of the parent, which checks for
// open children under that same lock, cannot miss it.
//
// With an Authority set (teamsync, for a shared board), claim, renew,
// release, complete, cancel and reopen count only once the remote has
// accepted the item's new head; the verb returns the item the remote
// settled on. The board never imports the package that implements it.
//
// # Concurrency
//
// A Store may be used by several goroutines and several processes at once.
// Exactly one of any number of racing claimants wins an item, and a holder
// whose lease was taken over is refused by its stale fencing token. On a
// board that several clones claim from without an authority, a claim
// advances the token by a random stride, so two offline claims of one
// item do not end up with the same token. The in-memory index is guarded
// by its own mutex; the index file is replaced by rename.
//
// # Errors
//
// Refused verbs are *apperr.Error with nothing written: the board's own
// codes (NotClaimable, InvalidClaim, InvalidTransition, InvalidLease,
// VersionConflict, Cycle, ParentCycle, DanglingDependency, DanglingParent,
// SchemaVersion for an item written by a newer git ideate) and the shared
// apperr.Schema, apperr.NotFound and apperr.DanglingSupersedes (for a
// reference to no item). A completion whose record cannot be written still
// completes, and the failure goes to Warn.
package board
