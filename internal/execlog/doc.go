// Package execlog is the execution log: an append-only ledger of what
// happened while a sprint executed — gate verdicts above all, and the
// starts, completions, kills, replans and escalations around them — kept as
// commits on refs/ideate/exec. An entry is never edited; a later entry says
// what changed.
//
// # Layout
//
// One commit per entry. The tree is cumulative: a format entry at the root
// and one directory per 9.3 hours of ULID time (the id's first five
// characters) holding <ULID>.json, the entry as one JSON object. An append
// writes four objects (the entry's blob, its directory, the root, the
// commit) and moves the ref; the directories stay small whatever the
// history's length, and a union of two clones' trees is the union of their
// entries, so sync merges the log like the record. docs/FORMAT.md has the
// layout and the measurements behind it.
//
// # Flow
//
// Append checks the entry (a lower-case phase and event word, a result only
// on a verdict and then PASS, FAIL or UNVERIFIABLE, full object names, a
// task id that could name a task, labels without control characters, the
// encoded size under MaxEntry), passes every text field through secretgate,
// mints the id and time, and commits with gitstore.Transact; a bad entry is
// an apperr.Schema error and nothing is written. A verdict about a commit
// then appends NoteLine to that commit's note on refs/notes/ideate through
// gitstore.AppendNote, keeping every line other writers put there.
//
// Reads (List, Latest) walk the current tip's tree from the newest
// directory and entry down. Line renders an entry as the playbook's
// execution.log line.
//
// # Concurrency
//
// A Log may be used by several goroutines and processes at once: each
// append is one compare-and-swap of the ref, rebuilt on a moved tip, so
// concurrent appends all land, and entries are ordered by id. A process
// killed mid-append leaves the log as it was or with the whole entry; a
// verdict whose note was not yet written then lacks its note, never the
// reverse.
package execlog
