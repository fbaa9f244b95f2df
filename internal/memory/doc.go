// Package memory is the team's retrospective memory: docs/agents/memory.md,
// terse role-scoped lessons the archivist (or a human) distilled from
// recurring patterns of earlier sprints, injected into each new attempt's
// init.md (its "# Memory" section, through ForRole). Memory is advisory:
// an entry that would relax an invariant is refused, however it is worded.
//
// # File
//
// The file is Markdown with a fixed shape, read and checked line by line:
//
//	# Memory
//
//	Any prose before the first role heading is kept as it is.
//
//	## green-worker
//
//	- Run the task's own package before stopping; the whole suite
//	  timed the green gate out twice.
//	  evidence: exec 01JD3Q…, exec 01JD4R…
//	  date: 2026-11-30
//
// A "## <role>" heading opens a role's section (a lower-case word with
// dashes; "all" applies to every role). An entry is a "- " line, at most
// one continuation line indented two spaces, then "  evidence: " (where
// it came from: exec entry ids, record ids, commits — never empty) and
// "  date: " (YYYY-MM-DD). Check names every line that breaks this
// shape, every duplicate within a role (text compared without case,
// punctuation or spacing), every role over its bound (DefaultBound), and
// every entry a Relaxes rule refuses.
//
// # Writing
//
// Add appends one entry at the end of its role's section (a new section at
// the end of the file), after the whole file passed Check and the entry
// passed the secret gate, the refusal rules, the dedupe and the bound; the
// file is replaced whole (temporary file + rename) under an flock on its
// directory, so two writers take turns and a reader sees the old file or
// the new. A refused entry is a typed error (INVARIANT, DUPLICATE,
// MEMORY_FULL, SCHEMA) and nothing is written. The file is part of the
// tracked tree: who writes it commits it.
//
// # Reading
//
// ForRole renders a role's entries (its own section, then "all") as one
// line each, for init.md; a missing file is no memory at all (nil, nil).
package memory
