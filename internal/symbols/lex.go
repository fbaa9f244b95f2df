package symbols

import "sync"

// lexGeneric splits Python, JavaScript, TypeScript or Rust source into
// tokens: identifiers and keywords as written, literals as "L",
// punctuation one character at a time (brackets are what the readers
// count), comments and whitespace dropped. It also counts identifiers
// used, and for Python and JavaScript/TypeScript the identifier-like words
// inside string literals (names reached through getattr, __all__, a
// string key).
func lexGeneric(lang Lang, src []byte) ([]Token, map[string]int) {
	toks := make([]Token, 0, len(src)/4)
	refs := map[string]int{}
	reserved := keywords()[lang]
	wordsIn := lang == Python || lang == JavaScript || lang == TypeScript
	n := len(src)
	countWords := func(b []byte) {
		if !wordsIn {
			return
		}
		for i := 0; i < len(b); {
			if isIdentStart(b[i]) {
				j := i + 1
				for j < len(b) && isIdentChar(b[j]) {
					j++
				}
				refs[string(b[i:j])]++
				i = j
				continue
			}
			i++
		}
	}
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\\' && lang == Python:
			i++
		case c == '#' && lang == Python:
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '/' && lang != Python:
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*' && lang != Python:
			depth := 0
			for i < n {
				if src[i] == '/' && i+1 < n && src[i+1] == '*' {
					depth++
					i += 2
					continue
				}
				if src[i] == '*' && i+1 < n && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 || lang != Rust {
						break
					}
					continue
				}
				i++
			}
		case c == '"' || c == '`' || c == '\'' && lang != Rust:
			start := i
			end := skipString(lang, src, i)
			countWords(src[start:end])
			toks = append(toks, Token{Off: start, End: end, Text: "L"})
			i = end
		case c == '\'' && lang == Rust:
			// A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
			if i+2 < n && src[i+1] != '\\' && src[i+2] == '\'' {
				toks = append(toks, Token{Off: i, End: i + 3, Text: "L"})
				i += 3
			} else if i+1 < n && src[i+1] == '\\' {
				j := i + 2
				for j < n && src[j] != '\'' && src[j] != '\n' {
					j++
				}
				toks = append(toks, Token{Off: i, End: j + 1, Text: "L"})
				i = j + 1
			} else {
				j := i + 1
				for j < n && isIdentChar(src[j]) {
					j++
				}
				toks = append(toks, Token{Off: i, End: j, Text: "'"})
				i = j
			}
		case isDigit(c):
			j := i + 1
			for j < n && (isIdentChar(src[j]) || src[j] == '.' && j+1 < n && isDigit(src[j+1])) {
				j++
			}
			toks = append(toks, Token{Off: i, End: j, Text: "L"})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentChar(src[j]) {
				j++
			}
			w := string(src[i:j])
			// String prefixes: f"", b'', r"" (Python), r#""# b"" (Rust).
			if j < n && (src[j] == '"' || src[j] == '\'' && lang == Python) && len(w) <= 3 && isStrPrefix(w) {
				end := skipString(lang, src, j)
				countWords(src[j:end])
				toks = append(toks, Token{Off: i, End: end, Text: "L"})
				i = end
				continue
			}
			if lang == Rust && j+1 < n && src[j] == '#' && (w == "r" || w == "br") {
				k := j
				hashes := 0
				for k < n && src[k] == '#' {
					hashes++
					k++
				}
				if k < n && src[k] == '"' {
					k++
					for k < n {
						if src[k] == '"' {
							m := k + 1
							h := 0
							for m < n && src[m] == '#' && h < hashes {
								h++
								m++
							}
							if h == hashes {
								k = m
								break
							}
						}
						k++
					}
					toks = append(toks, Token{Off: i, End: k, Text: "L"})
					i = k
					continue
				}
			}
			kw := reserved[w]
			toks = append(toks, Token{Off: i, End: j, Text: w, ID: !kw})
			if !kw {
				refs[w]++
			}
			i = j
		default:
			toks = append(toks, Token{Off: i, End: i + 1, Text: string(c)})
			i++
		}
	}
	return toks, refs
}

// skipString returns the offset just past the string literal at i.
func skipString(lang Lang, src []byte, i int) int {
	n := len(src)
	q := src[i]
	if lang == Python && i+2 < n && src[i+1] == q && src[i+2] == q {
		j := i + 3
		for j+2 < n {
			if src[j] == '\\' {
				j += 2
				continue
			}
			if src[j] == q && src[j+1] == q && src[j+2] == q {
				return j + 3
			}
			j++
		}
		return n
	}
	j := i + 1
	for j < n {
		switch {
		case src[j] == '\\':
			j += 2
			continue
		case src[j] == q:
			return j + 1
		case src[j] == '\n' && q != '`' && lang != Rust:
			return j
		}
		j++
	}
	return n
}

func isStrPrefix(w string) bool {
	for _, c := range w {
		switch c {
		case 'r', 'R', 'b', 'B', 'f', 'F', 'u', 'U', 'c':
		default:
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func set(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// keywords are each language's reserved words, built on first use: as
// package-level maps they cost every git-ideate process 0.1 ms of init
// (GODEBUG=inittrace=1).
var keywords = sync.OnceValue(func() map[Lang]map[string]bool {
	jsKeywords := set("async", "await", "break", "case", "catch", "class", "const", "continue", "debugger",
		"default", "delete", "do", "else", "enum", "export", "extends", "false", "finally", "for", "function", "if",
		"import", "in", "instanceof", "let", "new", "null", "return", "super", "switch", "this", "throw", "true",
		"try", "typeof", "var", "void", "while", "with", "yield", "interface", "type", "implements", "private",
		"protected", "public", "static", "readonly", "abstract", "declare", "undefined", "of", "get", "set")
	return map[Lang]map[string]bool{
		Python: set("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
			"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
			"lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "self"),
		JavaScript: jsKeywords,
		TypeScript: jsKeywords,
		Rust: set("as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
			"false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
			"return", "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
			"while"),
	}
})
