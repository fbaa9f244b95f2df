// Package symbols is the qualified symbol index: the definitions of a
// set of source files with their identity (language, package or module,
// receiver or class, name, kind), file and byte range, the identifiers
// each file uses, and each file's tokens for clone detection.
//
// # Identity
//
// A bare name is not an identity: `orphan.Format` and `util.Format` are
// two symbols, `A.String` and `B.String` are two, and a Python method and
// a module function of one name are two. Symbol.Key is the identity;
// Symbol.Matches reads a plan's `pkg.Name` or `pkg.Type.Method`.
//
// # Readers
//
// Go is read by the standard library's parser. Python, JavaScript,
// TypeScript and Rust are read by tree-sitter's grammars
// (github.com/tree-sitter/go-tree-sitter and one grammar module per
// language, pinned) in a helper binary, git-ideate-symbols, built with
// cgo and asked over stdin and stdout (helper.go), so that git-ideate
// itself links no C. Without the helper a fallback reader finds
// definitions from tokens and indentation, and marks every definition and
// file it read Weaker, so a verdict resting on it can say the check was
// weaker.
//
// # Uses
//
// A file's Refs count the identifiers it uses, less each definition's own
// name: reachability by name, which errs toward "reached" (a local
// variable of the same name counts). Go's `//go:linkname` and `//export`
// lines count; in Python and JavaScript/TypeScript so do identifier-like
// words in string literals (getattr, `__all__`, string keys).
//
// The package reads bytes it is given (Source); it does not read git.
package symbols
