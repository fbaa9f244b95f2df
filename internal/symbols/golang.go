package symbols

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// parseGo reads a Go file with the standard library's parser: package
// aware (the package clause and the directory place every symbol), no
// cgo, no type checking. Receivers are named by their base type
// (`*T[K]` is `T`).
func parseGo(p string, src []byte) *File {
	f := &File{Path: p, Lang: Go}
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
	if err != nil {
		f.ParseError = err.Error()
	}
	if af == nil {
		return f
	}
	f.Package = af.Name.Name
	tf := fset.File(af.Package)
	off := func(pos token.Pos) int { return tf.Offset(pos) }
	dir := dirOf(p)
	defNames := map[string]int{}
	add := func(s Symbol, namePos token.Pos) {
		s.Lang, s.Dir, s.Package, s.File = Go, dir, f.Package, p
		s.Line = tf.Line(namePos)
		s.Exported = ast.IsExported(s.Name)
		f.Defs = append(f.Defs, s)
		defNames[s.Name]++
	}
	for _, d := range af.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			s := Symbol{Name: d.Name.Name, Kind: Func, Start: off(d.Pos()), End: off(d.End())}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind = Method
				s.Receiver = recvName(d.Recv.List[0].Type)
			}
			sigEnd := s.End
			if d.Body != nil {
				s.BodyStart, s.BodyEnd = off(d.Body.Lbrace), off(d.Body.Rbrace)+1
				sigEnd = s.BodyStart
			}
			s.Sig = oneLine(string(src[s.Start:sigEnd]))
			add(s, d.Name.Pos())
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					k := Type
					if _, ok := sp.Type.(*ast.InterfaceType); ok {
						k = Interface
					}
					start := off(sp.Pos())
					if len(d.Specs) == 1 {
						start = off(d.Pos())
					}
					add(Symbol{Name: sp.Name.Name, Kind: k, Start: start, End: off(sp.End()),
						Sig: oneLine(firstLine(string(src[start:off(sp.End())])))}, sp.Name.Pos())
				case *ast.ValueSpec:
					k := Var
					if d.Tok == token.CONST {
						k = Const
					}
					start := off(sp.Pos())
					if len(d.Specs) == 1 {
						start = off(d.Pos())
					}
					for _, n := range sp.Names {
						if n.Name == "_" {
							continue
						}
						add(Symbol{Name: n.Name, Kind: k, Start: start, End: off(sp.End())}, n.Pos())
					}
				}
			}
		}
	}
	f.tokens, f.Refs = goTokens(src, defNames)
	return f
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// recvName is a receiver's base type name.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// goTokens scans src: its tokens (literals as "L") and the identifiers it
// uses, less one use per definition of a name in the file (the
// definition's own name). `//go:linkname` and cgo `//export` lines name
// symbols too, so their words count as uses.
func goTokens(src []byte, defs map[string]int) ([]Token, map[string]int) {
	var s scanner.Scanner
	fset := token.NewFileSet()
	tf := fset.AddFile("", fset.Base(), len(src))
	s.Init(tf, src, nil, scanner.ScanComments)
	toks := make([]Token, 0, len(src)/4)
	refs := map[string]int{}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		o := tf.Offset(pos)
		switch {
		case tok == token.COMMENT:
			if strings.HasPrefix(lit, "//go:linkname") || strings.HasPrefix(lit, "//export ") {
				for _, w := range strings.Fields(lit)[1:] {
					if i := strings.LastIndexByte(w, '.'); i >= 0 {
						w = w[i+1:]
					}
					refs[w]++
				}
			}
		case tok == token.IDENT:
			toks = append(toks, Token{Off: o, End: o + len(lit), Text: lit, ID: true})
			refs[lit]++
		case tok.IsLiteral():
			toks = append(toks, Token{Off: o, End: o + len(lit), Text: "L"})
		case tok == token.SEMICOLON && lit == "\n":
			// An inserted semicolon is layout, not code.
		default:
			toks = append(toks, Token{Off: o, End: o + len(tok.String()), Text: tok.String()})
		}
	}
	for n, c := range defs {
		refs[n] -= c
		if refs[n] <= 0 {
			delete(refs, n)
		}
	}
	return toks, refs
}
