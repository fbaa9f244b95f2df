package symbols

import "context"

// parseOther reads a Python, JavaScript, TypeScript or Rust file: tokens
// and uses from the lexer, definitions from tree-sitter through the
// helper binary where there is one and from the fallback reader where
// there is not.
func parseOther(ctx context.Context, lang Lang, p string, src []byte) (*File, error) {
	f := &File{Path: p, Lang: lang, Package: moduleOf(lang, p)}
	f.tokens, f.Refs = lexGeneric(lang, src)
	defs, weaker, perr, err := readDefs(ctx, lang, p, src, f.tokens)
	if err != nil {
		return nil, err
	}
	f.Weaker = weaker
	f.ParseError = perr
	ls := newLines(src)
	dir := dirOf(p)
	for _, d := range defs {
		s := Symbol{Lang: lang, Dir: dir, Package: f.Package, Receiver: d.recv, Name: d.name, Kind: d.kind,
			File: p, Line: ls.at(d.nameOff), Start: d.start, End: d.end, BodyStart: d.bodyStart, BodyEnd: d.bodyEnd,
			Exported: d.exported, Decorated: d.decorated}
		sigEnd := s.End
		if s.HasBody() {
			sigEnd = s.BodyStart
		}
		if sigEnd > len(src) {
			sigEnd = len(src)
		}
		if s.Start <= sigEnd {
			s.Sig = oneLine(string(src[s.Start:sigEnd]))
		}
		if len(s.Sig) > 300 {
			s.Sig = s.Sig[:300]
		}
		f.Defs = append(f.Defs, s)
		if f.Refs[d.name] > 0 {
			f.Refs[d.name]--
			if f.Refs[d.name] == 0 {
				delete(f.Refs, d.name)
			}
		}
	}
	return f, nil
}
