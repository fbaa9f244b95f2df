// Package steering keeps steering items (guiding principles, policies and
// the like) on the ref refs/ideate/steering. Unlike the process record,
// steering is mutable: an item is amended in place, its prior versions
// kept in its history; nothing is ever deleted (an item is retired by
// becoming deprecated or superseded).
//
// # The gate
//
// Steering shapes what an agent attends to, so it ships disabled. A Store
// opened with enabled=false (the CLI reads the ideate.steering setting,
// default false) answers every call (Put, Read, Get) with the typed error
// GATED before it looks at any argument, and reads and writes nothing: no
// object, no ref. Open itself touches nothing either.
//
// # Storage
//
// One ref, refs/ideate/steering; one commit per put, whose first parent is
// the previous tip, so `git log refs/ideate/steering` is the audit trail.
// The commit message is
//
//	<kind> <id>: <first non-blank line of the statement, folded, ≤ 72 chars>
//
//	Ideate-Steering: <id>
//	Ideate-Status: <status>
//	Ideate-Actor: <actor>          (only when the put named one)
//
// The tree holds
//
//	ideate-format       blob "ideate-steering 1\n"
//	items/<id>.md       one file per item
//
// A reader or writer that meets a format number newer than FormatVersion
// stops with FORMAT_VERSION; a writer never writes to such a tree.
//
// # Item file
//
// The file format of the reference implementation's .ideate/steering/<id>.md,
// byte for byte: a front matter of one JSON value per line (encoded as
// JavaScript's JSON.stringify does), in this order, then the closing fence,
// one blank line, the statement verbatim and one newline:
//
//	---
//	id: "GP-1"
//	kind: "guiding-principle"
//	domain: "storage"
//	status: "active"
//	updated_at: "2026-11-29T12:00:00.000Z"
//	history: [{"at":"2026-11-28T09:00:00.000Z","status":"active","statement":"…"}]
//	references: [{"rel":"supersedes","id":"GP-0"}]
//	---
//
//	Keep state in git.
//
// history holds the prior versions newest first; each entry's at is the
// updated_at that version carried. Readers ignore unknown front-matter
// keys; read skips files that do not parse.
//
// # Ids, statuses, edges
//
// Ids are caller-chosen stems [A-Za-z0-9][A-Za-z0-9._-]* of at most 128
// characters. Statuses are active, deprecated and superseded; an invalid
// status, on a put or as a read filter, is a SCHEMA error. Edges
// (references) are forward only: each target must be a valid id (SCHEMA)
// naming an existing, readable item (DANGLING_SUPERSEDES), and not the item
// itself (SCHEMA). referenced_by is derived on every read from all items'
// edges and never stored.
//
// # Put
//
// Put validates, runs the secret gate over kind, domain, statement, the
// actor and every edge's rel and id (an id the gate would change is
// refused), and then commits with gitstore.Transact: the new item is
// computed from the tip the commit lands on, so concurrent puts to one id
// all land, each amending the one before it. An amendment prepends the
// prior {at, status, statement} to history and keeps the prior domain,
// status and edges unless new ones are given.
//
// # Read
//
// Read filters by id (exact), domain (case-insensitive substring), status
// and kind (exact), orders by updated_at descending then id ascending, and
// pages with the paging package's rules. Its cursor is bound to the
// filter: replayed under another filter it is CURSOR_MISMATCH. An amendment
// during a walk restamps updated_at and can move an item behind the
// cursor; re-run a walk that must not miss one.
package steering
