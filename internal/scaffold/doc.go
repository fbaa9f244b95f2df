// Package scaffold is the mechanical part of the post-RED scaffold pass
// (`git ideate scaffold --task T`) and the symbol look-ups over a working
// tree (`git ideate symbols find|defs`, MCP symbols_find|symbols_defs).
//
// # Markers
//
// A RED shim is marked with `agentic:shim` (standards.md may name
// another) in a comment: on a file's first line, the whole file is the
// shim and is deleted; on the line just above a definition (or on its
// first line), that definition is the shim and is cut from its file.
// Shim files are named per task (`zz_agentic_shim_s1_01_t1.go`) so
// parallel RED worktrees do not collide. A stub's body fails with the
// stub marker, `SUB-AGENT-TODO: implement <qualified name>`: Go
// `panic(…)`, Python `raise NotImplementedError(…)`, JavaScript and
// TypeScript `throw new Error(…)`, Rust `todo!(…)`.
//
// # What it decides, and what it leaves
//
// The shim gives the signature, the task's Files: the home: a non-test
// file in the shim's directory and language, preferring one named after
// the symbol. A Go stub carries the shim file's imports its text uses: a
// new file gets an import block, an existing one gains the imports it
// lacks; Go is written as gofmt writes it (go/format), and the other
// files it writes are run through the language's formatter when one is
// on PATH (ruff format or black for Python, prettier for JavaScript and
// TypeScript, rustfmt for Rust; Result.Formatted says which ran and
// whether it failed). A formatter runs the project's own configuration,
// which a worker may have written, so where the operating system confines
// it writes only the worktree and a scratch directory. A symbol defined outside a shim is never
// touched, with or without a body (outside Go, where a module is its
// file, a declared name the shim's symbol answers to that is defined in
// another module counts); a second run finds nothing to do. A declared symbol
// with no shim to copy its signature from, or a method inside a class,
// impl or trait body outside Go, is reported Undecided: the post-planner
// sub-agent writes it. Every action goes to the execution log (phase
// scaffold, event create|update|delete, the file, the qualified symbol).
// Nothing is committed.
package scaffold
