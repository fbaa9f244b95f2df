package symbols

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Lang is a source language the index reads.
type Lang string

// The languages the index reads.
const (
	Go         Lang = "go"
	Python     Lang = "python"
	JavaScript Lang = "javascript"
	TypeScript Lang = "typescript"
	Rust       Lang = "rust"
)

// LangOf is the language of a file by its name; "" for a file the index
// does not read.
func LangOf(p string) Lang {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return Go
	case ".py", ".pyi":
		return Python
	case ".js", ".jsx", ".mjs", ".cjs":
		return JavaScript
	case ".ts", ".tsx", ".mts", ".cts":
		return TypeScript
	case ".rs":
		return Rust
	}
	return ""
}

// Kind is what a symbol is.
type Kind string

// The kinds of symbol.
const (
	Func      Kind = "func"
	Method    Kind = "method"
	Type      Kind = "type"
	Var       Kind = "var"
	Const     Kind = "const"
	Class     Kind = "class"
	Interface Kind = "interface"
	Enum      Kind = "enum"
	Trait     Kind = "trait"
)

// Callable reports whether k has a body a stub replaces.
func (k Kind) Callable() bool { return k == Func || k == Method }

// Symbol is one top-level definition (or a method of a type or class),
// with its qualified identity: language, package (Go: the package's
// directory and its package clause; other languages: the module the file
// is), receiver or class, name and kind. Two symbols are the same symbol
// only when their Key is equal: `orphan.Format` and `util.Format` are
// two, and so are `A.String` and `B.String`.
type Symbol struct {
	Lang     Lang   `json:"lang"`
	Dir      string `json:"dir"`     // the file's directory, slash-separated, "." at the root
	Package  string `json:"package"` // Go: the package clause; others: the module (file path without extension, dotted for Python)
	Receiver string `json:"receiver,omitempty"`
	Name     string `json:"name"`
	Kind     Kind   `json:"kind"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Start    int    `json:"start"` // byte range of the definition, doc comment excluded
	End      int    `json:"end"`
	// BodyStart and BodyEnd delimit a callable's body (braces included
	// for brace languages, the indented block for Python); both 0 when it
	// has none.
	BodyStart int  `json:"body_start,omitempty"`
	BodyEnd   int  `json:"body_end,omitempty"`
	Exported  bool `json:"exported"`
	// Decorated is set for a definition under a decorator or attribute
	// (`@app.route`, `#[test]`, `#[no_mangle]`): something registers it,
	// so nothing in the source needs to name it.
	Decorated bool `json:"decorated,omitempty"`
	Test      bool `json:"test,omitempty"` // defined in a test file
	// Weaker is set when the definition was found by the fallback reader
	// (no tree-sitter in this build): names and ranges from patterns, not
	// a syntax tree.
	Weaker bool `json:"weaker,omitempty"`
	// Sig is the definition's text up to its body (a callable's
	// signature), one line.
	Sig string `json:"sig,omitempty"`
}

// QName is the symbol's qualified name as people write it: `pkg.Name`,
// `pkg.Recv.Name`.
func (s Symbol) QName() string {
	q := s.Package
	if s.Receiver != "" {
		q += "." + s.Receiver
	}
	return q + "." + s.Name
}

// Key is the symbol's identity: equal keys are one symbol.
func (s Symbol) Key() string {
	return string(s.Lang) + ":" + s.Dir + ":" + s.Package + ":" + s.Receiver + "." + s.Name
}

// HasBody reports whether the symbol has a body.
func (s Symbol) HasBody() bool { return s.BodyEnd > s.BodyStart }

// Matches reports whether the symbol is the one a plan names: `Name`,
// `pkg.Name`, `pkg.Recv.Name`, `Recv.Name`, or with a longer package path
// (`example.com/m/pkg.Name`, `a/b/pkg.Name`) whose last element is the
// package. A name with a dot in it is read right to left.
func (s Symbol) Matches(decl string) bool {
	decl = strings.TrimSpace(strings.Trim(decl, "`"))
	decl = strings.TrimSuffix(decl, "()")
	if decl == "" {
		return false
	}
	slash := ""
	if i := strings.LastIndex(decl, "/"); i >= 0 {
		slash, decl = decl[:i+1], decl[i+1:]
	}
	parts := strings.Split(decl, ".")
	if s.Lang == Rust {
		parts = strings.Split(strings.ReplaceAll(decl, "::", "."), ".")
	}
	n := len(parts)
	if parts[n-1] != s.Name {
		return false
	}
	// A longer path before the last slash (`example.com/m/pkg.Name`)
	// only places the package; its last element decides.
	_ = slash
	pkgOK := func(p string) bool {
		return p == s.Package || p == path.Base(s.Dir) || strings.HasSuffix(s.Package, "."+p) ||
			strings.HasSuffix(s.Package, "::"+p) || strings.HasSuffix(s.Package, "/"+p)
	}
	switch n {
	case 1:
		return true
	case 2:
		// pkg.Name or Recv.Name.
		return s.Receiver == "" && pkgOK(parts[0]) || s.Receiver == parts[0]
	default:
		// pkg.Recv.Name (a longer package in dots for Python modules).
		if s.Receiver == parts[n-2] {
			return pkgOK(strings.Join(parts[:n-2], "."))
		}
		return s.Receiver == "" && pkgOK(strings.Join(parts[:n-1], "."))
	}
}

// Token is one lexical token of a file, as the clone detector sees it.
type Token struct {
	Off  int    // byte offset
	End  int    // just past the token
	Text string // identifiers and keywords as written; literals as "L"
	ID   bool   // an identifier (not a keyword)
}

// File is what the index knows of one file.
type File struct {
	Path    string   `json:"path"`
	Lang    Lang     `json:"lang"`
	Package string   `json:"package"`
	Defs    []Symbol `json:"defs"`
	// Refs counts, per name, the identifiers in the file that are not a
	// definition's own name: what reachability is decided from.
	Refs map[string]int `json:"-"`
	// Generated is set for a file that says it is generated ("Code
	// generated … DO NOT EDIT." and the like).
	Generated bool `json:"generated,omitempty"`
	Test      bool `json:"test,omitempty"`
	// Weaker is set when the fallback reader read the file.
	Weaker bool `json:"weaker,omitempty"`
	// ParseError is the reader's complaint about a file it could not read
	// whole; the definitions found before it are kept.
	ParseError string `json:"parse_error,omitempty"`
	tokens     []Token
}

// Tokens is the file's tokens (comments left out).
func (f *File) Tokens() []Token { return f.tokens }

// Unsupported is the error code for a file in a language the index does
// not read.
const Unsupported apperr.Code = "UNSUPPORTED_LANGUAGE"

// Parse reads one file's definitions, references and tokens. p is the
// file's slash-separated path from the repository root. ctx bounds the
// helper that reads languages other than Go.
func Parse(ctx context.Context, p string, src []byte) (*File, error) {
	lang := LangOf(p)
	var f *File
	switch lang {
	case Go:
		f = parseGo(p, src)
	case "":
		return nil, apperr.New(Unsupported, "%s is not a file the symbol index reads (Go, Python, JavaScript, TypeScript, Rust)", p)
	default:
		var err error
		if f, err = parseOther(ctx, lang, p, src); err != nil {
			return nil, err
		}
	}
	f.Generated = isGenerated(src)
	f.Test = IsTestFile(p)
	for i := range f.Defs {
		f.Defs[i].Test = f.Test
		if f.Weaker {
			f.Defs[i].Weaker = true
		}
	}
	return f, nil
}

// IsTestFile reports whether p is a test file by the usual conventions of
// its language.
func IsTestFile(p string) bool {
	base := path.Base(p)
	switch LangOf(p) {
	case Go:
		return strings.HasSuffix(base, "_test.go")
	case Python:
		return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" || hasDir(p, "tests")
	case JavaScript, TypeScript:
		return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || hasDir(p, "__tests__")
	case Rust:
		return hasDir(p, "tests") || strings.HasSuffix(base, "_test.rs") || base == "tests.rs"
	}
	return false
}

func hasDir(p, d string) bool {
	return strings.HasPrefix(p, d+"/") || strings.Contains(p, "/"+d+"/")
}

// isGenerated looks for the generated-code header in the first lines.
func isGenerated(src []byte) bool {
	head := src
	if len(head) > 2048 {
		head = head[:2048]
	}
	for _, line := range strings.Split(string(head), "\n") {
		l := strings.TrimSpace(line)
		if strings.Contains(l, "DO NOT EDIT") && (strings.Contains(l, "generated") || strings.Contains(l, "Generated")) {
			return true
		}
		if strings.Contains(l, "@generated") {
			return true
		}
	}
	return false
}

// dirOf is p's directory, "." at the root.
func dirOf(p string) string { return path.Dir(p) }

// ModuleOf is the module a non-Go file is: Python dotted (a package's
// __init__ is the package), Rust `::`-separated (mod.rs and lib.rs are
// their directory), the others the path without its extension.
func ModuleOf(lang Lang, p string) string { return moduleOf(lang, p) }

func moduleOf(lang Lang, p string) string {
	m := strings.TrimSuffix(p, path.Ext(p))
	switch lang {
	case Python:
		m = strings.TrimSuffix(m, "/__init__")
		return strings.ReplaceAll(m, "/", ".")
	case Rust:
		m = strings.TrimSuffix(strings.TrimSuffix(m, "/mod"), "/lib")
		return strings.ReplaceAll(m, "/", "::")
	}
	return m
}

// lines maps byte offsets to 1-based lines.
type lines []int

func newLines(src []byte) lines {
	ls := lines{0}
	for i, c := range src {
		if c == '\n' {
			ls = append(ls, i+1)
		}
	}
	return ls
}

// at is the line of byte offset off.
func (ls lines) at(off int) int { return sort.SearchInts(ls, off+1) }

// oneLine squeezes a signature onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
