// Package pathglob matches slash-separated repository paths against globs:
// the matcher behind a task's scope ("which paths may this task change")
// and behind gitstore's reading of .gitignore files.
//
// # Syntax
//
// The syntax is git's pathname wildmatch (the one .gitignore and
// pathspecs with :(glob) use):
//
//   - '*' matches any run of characters within one path component;
//   - '?' matches one character other than '/';
//   - "[a-z]", "[!0-9]", "[^x]", "[[:alpha:]]" match one character of a
//     class, never '/';
//   - "**" as a whole component matches any number of components, none
//     included: "a/**/b" matches a/b and a/x/y/b, "**/x.go" matches x.go
//     at any depth, "dir/**" everything under dir; "**" inside a
//     component ("a**b") is one '*';
//   - '\' quotes the next character.
//
// Nothing is shell-expanded and nothing is relative to a current
// directory.
//
// # Sets
//
// A [Set] is an ordered glob list in which '!' negates: the last glob
// matching a path decides whether it is in, as in .gitignore. A scope of
// ["internal/**", "!internal/gen/**", "internal/gen/keep.go"] lets a task
// change internal/ except internal/gen/, but keep.go there. [Compile]
// refuses globs that would silently match nothing.
package pathglob
