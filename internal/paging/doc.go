// Package paging holds the shared rules of every bounded read in git ideate:
// the page size, the payload budget, the two payload measures and the keyset
// cursor. The record, work and steering reads, over the CLI and over MCP, all
// call into this one package so that the numbers stay in a single place.
//
// # Page size
//
// A read returns DefaultLimit (100) items when the caller gives no limit.
// A given limit is clamped into 1..MaxLimit (500): zero or a negative value
// becomes 1 and anything above 500 becomes 500. See [Limit]. Rejecting a
// non-integer limit is the job of the flag or schema layer, not of this
// package.
//
// # Payload budget
//
// A page carries at most Budget (40,000) characters of serialized items; the
// result envelope around them is not counted. Characters are counted as
// JavaScript counts them, in UTF-16 code units, so that the figures match the
// reference implementation: a character outside the Basic Multilingual Plane,
// such as an emoji, counts 2.
//
// Two measures exist because the two doors print differently:
//
//   - MCP measures each item as compact JSON ([CompactLen]).
//   - The CLI measures the pretty form it writes ([PrettyLen]): the item
//     indented by 2 spaces, plus 4 characters for each of its lines (the item
//     sits two levels deep in the printed envelope), plus 2 for the separator
//     between items.
//
// Both measures serialize without HTML escaping, so '<', '>' and '&' count 1
// each, and they count the characters that JavaScript writes unescaped
// (U+2028, U+2029 and the replacement character Go substitutes for invalid
// UTF-8) as 1, although encoding/json writes them as six-character escapes.
//
// A page keeps the longest prefix of its items whose sizes add up to no more
// than the budget ([Fit]). Liveness: the first item is always kept, even when
// it alone exceeds the budget, so a page with a cursor is never empty. When
// the budget cuts a page, the caller mints the next cursor from the last kept
// item.
//
// # Cursor
//
// A cursor is opaque to clients. It is the unpadded base64url encoding
// (RFC 4648 §5, alphabet A–Z a–z 0–9 '-' '_') of a compact JSON object with
// exactly these members, in this order and with no whitespace:
//
//	{"v":1,"k":"record","p":["01J…"],"f":"a1b2c3d4e5f6a7b8"}
//
// The members are:
//
//   - v: the format version, currently 1.
//   - k: the collection the cursor pages over ("record", "work", "steering").
//   - p: the keyset position, the sort key of the last item served, as a
//     non-empty array of non-empty strings: [id] for records,
//     [created_at, id] for work items, [updated_at, id] for steering.
//   - f: the filter fingerprint, the first 8 bytes of
//     SHA-256(kind + "\x00" + filter) as 16 lowercase hex digits, where filter
//     is the canonical filter string the caller builds (for example
//     "scope=foo\x00status=open").
//
// Decoding is strict and canonical ([DecodeCursor]): the text must decode as
// base64url and re-encode to exactly the same text (no padding, no '+' or
// '/', no stray trailing bits), and the JSON must re-marshal to exactly the
// same bytes (so no extra, duplicate, reordered or differently escaped
// members and no whitespace). The version, the kind and the number of key
// elements must match what the caller expects, no key element may be empty,
// and a cursor longer than 4,096 characters is refused unread. Any failure of these checks is
// an apperr.Schema error whose sentence never echoes the cursor.
//
// Unlike the reference, whose cursor is tied to its filter by documentation
// only, a cursor here is bound to its filter: a well-formed cursor replayed
// under a different filter is refused with apperr.CursorMismatch, and the
// client starts again without a cursor. A well-formed cursor whose position
// no item has simply selects the items past it; that is the caller's keyset
// query, not this package's concern.
//
// The kind and the key elements are expected to be valid UTF-8 (they are
// constants, ids and timestamps); encoding/json would replace invalid bytes,
// so such a cursor would not decode. The filter string is only hashed, so any
// bytes are fine there.
package paging
