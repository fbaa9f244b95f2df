package symbols

import "strings"

// The fallback reader finds definitions in Python, JavaScript, TypeScript
// and Rust from the token stream: definitions at the top level (and
// methods in a class, impl or trait body), bodies by bracket matching or,
// for Python, by indentation. It is what a build without cgo has (no
// tree-sitter); it knows no grammar, so a construct it does not expect
// can hide or invent a definition, and every verdict that rests on it
// says the check was weaker.

// def is a definition as a reader finds it; parseOther places it.
type def struct {
	name, recv          string
	kind                Kind
	start, end          int
	bodyStart, bodyEnd  int
	exported, decorated bool
	nameOff             int
}

// fallbackDefs reads the definitions of src from its tokens.
func fallbackDefs(lang Lang, src []byte, toks []Token) []def {
	if lang == Python {
		return pyFallback(src, toks)
	}
	return braceFallback(lang, src, toks)
}

// match returns the index of the token closing the bracket at toks[i].
func match(toks []Token, i int) int {
	open := toks[i].Text
	var cl string
	switch open {
	case "{":
		cl = "}"
	case "(":
		cl = ")"
	case "[":
		cl = "]"
	default:
		return i
	}
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].Text {
		case open:
			depth++
		case cl:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks) - 1
}

// braceFallback reads JavaScript, TypeScript and Rust.
func braceFallback(lang Lang, src []byte, toks []Token) []def {
	reserved := keywords()[lang]
	var out []def
	var walk func(lo, hi int, recv string, inClass bool)
	walk = func(lo, hi int, recv string, inClass bool) {
		i := lo
		for i < hi {
			start := i
			exported, decorated := false, false
			// Modifiers, attributes and decorators.
			for i < hi {
				t := toks[i].Text
				switch {
				case t == "#" && i+1 < hi && toks[i+1].Text == "[" && lang == Rust:
					i = match(toks, i+1) + 1
					decorated = true
					start = i
					continue
				case t == "@" && lang != Rust && i+1 < hi && toks[i+1].ID:
					i += 2
					for i < hi && toks[i].Text == "." && i+1 < hi {
						i += 2
					}
					if i < hi && toks[i].Text == "(" {
						i = match(toks, i) + 1
					}
					decorated = true
					start = i
					continue
				case t == "export" || t == "pub":
					exported = true
					if t == "pub" && i+1 < hi && toks[i+1].Text == "(" {
						i = match(toks, i+1)
					}
				case t == "default" || t == "async" || t == "declare" || t == "abstract" || t == "static" ||
					t == "unsafe" || t == "extern" || t == "public" || t == "private" || t == "protected" ||
					t == "readonly" || t == "override" || t == "L" && lang == Rust && i > lo && toks[i-1].Text == "extern":
					if t == "private" || t == "protected" {
						exported = false
					}
				default:
					goto head
				}
				i++
			}
		head:
			if i >= hi {
				return
			}
			t := toks[i].Text
			next := func(k int) string {
				if i+k < hi {
					return toks[i+k].Text
				}
				return ""
			}
			isID := func(k int) bool {
				return i+k < hi && (toks[i+k].ID || lang != Rust && reserved[toks[i+k].Text] && toks[i+k].Text != "function")
			}
			// stmtEnd is the end of a statement with no body of interest.
			stmtEnd := func(from int) int {
				for j := from; j < hi; j++ {
					switch toks[j].Text {
					case ";":
						return j + 1
					case "{", "(", "[":
						j = match(toks, j)
						if toks[j].Text == "}" && lang != Rust && j+1 < hi && !continues(toks[j+1].Text) && sameLineBreak(src, toks[j], toks[j+1]) {
							return j + 1
						}
					default:
						if j > from && lang != Rust && sameLineBreak(src, toks[j-1], toks[j]) && !continues(toks[j-1].Text) && !continues(toks[j].Text) {
							return j
						}
					}
				}
				return hi
			}
			add := func(d def, endTok int) {
				d.start = toks[start].Off
				if endTok >= len(toks) {
					endTok = len(toks) - 1
				}
				d.end = toks[endTok].End
				d.exported = d.exported || exported
				d.decorated = decorated
				if recv != "" {
					d.recv = recv
				}
				out = append(out, d)
			}
			// body finds a callable's body from the token after its name:
			// the parameter list, then `{` before any `;` (none: a
			// declaration without a body).
			body := func(from int) (lb, rb, endTok int) {
				depth := 0
				for j := from; j < hi; j++ {
					switch toks[j].Text {
					case "(", "[", "<":
						if toks[j].Text == "<" && depth == 0 && j > from && toks[j-1].Text != ")" {
							// generics before the parameters
						}
						depth++
					case ")", "]", ">":
						if depth > 0 {
							depth--
						}
					case "{":
						if depth == 0 {
							e := match(toks, j)
							return j, e, e
						}
					case ";":
						if depth == 0 {
							return -1, -1, j
						}
					case "=":
						if depth == 0 && lang != Rust && j+1 < hi && toks[j+1].Text == ">" {
							// an arrow: a brace body or an expression
							if j+2 < hi && toks[j+2].Text == "{" {
								e := match(toks, j+2)
								return j + 2, e, e
							}
							e := stmtEnd(j + 2)
							return j + 2, e - 1, e - 1
						}
					}
					if toks[j].Text == "-" && j+1 < hi && toks[j+1].Text == ">" {
						j++
					}
				}
				return -1, -1, hi - 1
			}
			withBody := func(d def, from int) int {
				lb, rb, e := body(from)
				if lb >= 0 {
					d.bodyStart, d.bodyEnd = toks[lb].Off, toks[rb].End
				}
				add(d, e)
				return e + 1
			}
			switch {
			case lang != Rust && t == "function":
				k := 1
				if next(1) == "*" {
					k = 2
				}
				if isID(k) {
					i = withBody(def{name: toks[i+k].Text, kind: Func, nameOff: toks[i+k].Off}, i+k+1)
					continue
				}
			case lang == Rust && t == "fn" && isID(1):
				kind := Func
				if recv != "" {
					kind = Method
				}
				i = withBody(def{name: toks[i+1].Text, kind: kind, nameOff: toks[i+1].Off}, i+2)
				continue
			case t == "class" && lang != Rust && isID(1) && !inClass:
				j := i + 2
				for j < hi && toks[j].Text != "{" {
					j++
				}
				if j < hi {
					e := match(toks, j)
					add(def{name: toks[i+1].Text, kind: Class, nameOff: toks[i+1].Off}, e)
					walk(j+1, e, toks[i+1].Text, true)
					i = e + 1
					continue
				}
			case lang == Rust && (t == "impl" || t == "trait") && !inClass:
				j := i + 1
				name := ""
				depth := 0
				for j < hi && toks[j].Text != "{" && toks[j].Text != ";" {
					switch toks[j].Text {
					case "<":
						depth++
					case ">":
						depth--
					case "for":
						name = ""
					case "where":
						depth = 99
					default:
						if depth == 0 && toks[j].ID && (name == "" || t == "impl" && toks[j-1].Text == "::") {
							name = toks[j].Text
						}
					}
					j++
				}
				if j < hi && toks[j].Text == "{" {
					e := match(toks, j)
					if t == "trait" && isID(1) {
						name = toks[i+1].Text
						add(def{name: name, kind: Trait, nameOff: toks[i+1].Off}, e)
					}
					walk(j+1, e, name, true)
					i = e + 1
					continue
				}
			case lang == Rust && (t == "struct" || t == "enum" || t == "union" || t == "type" || t == "const" || t == "static" || t == "mod") && isID(1):
				kind := map[string]Kind{"struct": Type, "enum": Enum, "union": Type, "type": Type, "const": Const, "static": Var}[t]
				j := i + 2
				for j < hi && toks[j].Text != "{" && toks[j].Text != ";" {
					if toks[j].Text == "(" || toks[j].Text == "[" {
						j = match(toks, j)
					}
					j++
				}
				e := j
				if j < hi && toks[j].Text == "{" {
					e = match(toks, j)
					if t == "const" || t == "static" {
						e = stmtEnd(j)
						e--
					}
				}
				if t != "mod" {
					add(def{name: toks[i+1].Text, kind: kind, nameOff: toks[i+1].Off}, e)
				}
				i = e + 1
				continue
			case lang != Rust && (t == "interface" || t == "enum") && isID(1):
				j := i + 2
				for j < hi && toks[j].Text != "{" {
					j++
				}
				e := j
				if j < hi {
					e = match(toks, j)
				}
				kind := Interface
				if t == "enum" {
					kind = Enum
				}
				add(def{name: toks[i+1].Text, kind: kind, nameOff: toks[i+1].Off}, e)
				i = e + 1
				continue
			case lang != Rust && t == "type" && isID(1) && !inClass:
				e := stmtEnd(i + 2)
				add(def{name: toks[i+1].Text, kind: Type, nameOff: toks[i+1].Off}, e-1)
				i = e
				continue
			case lang != Rust && (t == "const" || t == "let" || t == "var") && isID(1) && !inClass:
				name := toks[i+1].Text
				j := i + 2
				if next(2) == ":" {
					for j < hi && toks[j].Text != "=" && toks[j].Text != ";" {
						if toks[j].Text == "(" || toks[j].Text == "{" || toks[j].Text == "[" {
							j = match(toks, j)
						}
						j++
					}
				}
				if j < hi && toks[j].Text == "=" {
					k := j + 1
					if k < hi && toks[k].Text == "async" {
						k++
					}
					if k < hi && (toks[k].Text == "function" || toks[k].Text == "(" && arrowAfter(toks, k, hi) || toks[k].ID && k+2 < hi && toks[k+1].Text == "=" && toks[k+2].Text == ">") {
						i = withBody(def{name: name, kind: Func, nameOff: toks[i+1].Off}, k)
						continue
					}
				}
				kind := Var
				if t == "const" {
					kind = Const
				}
				e := stmtEnd(i + 2)
				add(def{name: name, kind: kind, nameOff: toks[i+1].Off}, e-1)
				i = e
				continue
			case inClass && lang != Rust && isID(0) && (next(1) == "(" || next(1) == "<"):
				i = withBody(def{name: t, kind: Method, nameOff: toks[i].Off}, i+1)
				continue
			case inClass && lang != Rust && (t == "get" || t == "set") && isID(1) && next(2) == "(":
				i = withBody(def{name: toks[i+1].Text, kind: Method, nameOff: toks[i+1].Off}, i+2)
				continue
			case inClass && lang != Rust && isID(0) && next(1) == "=" && (next(2) == "(" || next(2) == "async"):
				k := i + 2
				if next(2) == "async" {
					k++
				}
				if k < hi && toks[k].Text == "(" && arrowAfter(toks, k, hi) {
					i = withBody(def{name: t, kind: Method, nameOff: toks[i].Off}, k)
					continue
				}
			}
			// Anything else: skip the statement (a bracketed group whole).
			if toks[i].Text == "{" || toks[i].Text == "(" || toks[i].Text == "[" {
				i = match(toks, i) + 1
				continue
			}
			i++
			_ = start
		}
	}
	walk(0, len(toks), "", false)
	return out
}

// arrowAfter reports whether the parenthesised group at toks[k] is an
// arrow function's parameters.
func arrowAfter(toks []Token, k, hi int) bool {
	e := match(toks, k)
	j := e + 1
	if j < hi && toks[j].Text == ":" {
		for j < hi && !(toks[j].Text == "=" && j+1 < hi && toks[j+1].Text == ">") && toks[j].Text != ";" && toks[j].Text != "{" {
			j++
		}
	}
	return j+1 < hi && toks[j].Text == "=" && toks[j+1].Text == ">"
}

// sameLineBreak reports whether a newline separates tokens a and b.
func sameLineBreak(src []byte, a, b Token) bool {
	if a.End > b.Off || b.Off > len(src) {
		return false
	}
	return strings.IndexByte(string(src[a.End:b.Off]), '\n') >= 0
}

// continues reports whether a token joins the lines around it.
func continues(t string) bool {
	switch t {
	case ".", ",", "+", "-", "*", "/", "%", "=", "&", "|", "?", ":", "<", ">", "!", "(", "[", "{":
		return true
	}
	return false
}

// pyFallback reads Python by indentation: `def` and `class` first on
// their line, methods one level into a class, module-level assignments.
func pyFallback(src []byte, toks []Token) []def {
	ls := newLines(src)
	type frame struct {
		col       int
		class     string // "" for a function or a skipped container
		memberCol int
	}
	var stack []frame
	var out []def
	colOf := func(off int) int { return off - ls[ls.at(off)-1] }
	// dep[i] is the bracket depth before toks[i]: a token inside brackets
	// is on a continuation line.
	dep := make([]int, len(toks)+1)
	for j, t := range toks {
		dep[j+1] = dep[j]
		switch t.Text {
		case "(", "[", "{":
			dep[j+1]++
		case ")", "]", "}":
			if dep[j+1] > 0 {
				dep[j+1]--
			}
		}
	}
	inOpenBracket := func(_ []Token, i int) bool { return dep[i] > 0 }
	firstOnLine := func(i int) bool {
		return i == 0 || ls.at(toks[i-1].Off) != ls.at(toks[i].Off) && dep[i] == 0
	}
	// bodyEnd is the index of the last token of the block opened by the
	// statement at column col.
	blockEnd := func(from, col int) int {
		depth := 0
		last := from
		for j := from; j < len(toks); j++ {
			switch toks[j].Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			if j > from && depth <= 0 && ls.at(toks[j-1].Off) != ls.at(toks[j].Off) && colOf(toks[j].Off) <= col && !inOpenBracket(toks, j) {
				return last
			}
			last = j
		}
		return last
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !firstOnLine(i) {
			continue
		}
		col := colOf(t.Off)
		for len(stack) > 0 && stack[len(stack)-1].col >= col {
			stack = stack[:len(stack)-1]
		}
		start := i
		decorated := false
		for i < len(toks) && toks[i].Text == "@" {
			decorated = true
			// skip to the next line's first token
			l := ls.at(toks[i].Off)
			j := i + 1
			for j < len(toks) && (ls.at(toks[j].Off) == l || inOpenBracket(toks, j)) {
				j++
			}
			i = j
		}
		if i >= len(toks) {
			break
		}
		k := i
		if toks[k].Text == "async" {
			k++
		}
		if k+1 >= len(toks) {
			break
		}
		kw := toks[k].Text
		if (kw == "def" || kw == "class") && toks[k+1].ID {
			name := toks[k+1].Text
			// the signature's colon
			j := k + 2
			depth := 0
			for j < len(toks) {
				switch toks[j].Text {
				case "(", "[", "{":
					depth++
				case ")", "]", "}":
					depth--
				}
				if depth == 0 && toks[j].Text == ":" {
					break
				}
				j++
			}
			e := blockEnd(j, col)
			d := def{name: name, kind: Func, nameOff: toks[k+1].Off, exported: !strings.HasPrefix(name, "_"), decorated: decorated,
				start: toks[start].Off, end: toks[e].End}
			if j+1 < len(toks) && j+1 <= e {
				d.bodyStart, d.bodyEnd = toks[j+1].Off, toks[e].End
			}
			if kw == "class" {
				d.kind = Class
				d.bodyStart, d.bodyEnd = 0, 0
			}
			keep := true
			if len(stack) > 0 {
				top := &stack[len(stack)-1]
				if top.class != "" && kw == "def" && (top.memberCol < 0 || top.memberCol == col) {
					top.memberCol = col
					d.kind, d.recv = Method, top.class
				} else {
					keep = false
				}
			}
			if keep {
				out = append(out, d)
			}
			fr := frame{col: col, memberCol: -1}
			if kw == "class" && keep && len(stack) == 0 {
				fr.class = name
			}
			stack = append(stack, fr)
			continue
		}
		if len(stack) > 0 {
			if top := &stack[len(stack)-1]; top.class != "" && top.memberCol < 0 {
				top.memberCol = col
			}
			continue
		}
		// A module-level assignment: NAME = … or NAME: T = …
		if col == 0 && toks[i].ID && i+1 < len(toks) && (toks[i+1].Text == "=" && !(i+2 < len(toks) && toks[i+2].Text == "=") || toks[i+1].Text == ":") {
			name := toks[i].Text
			e := blockEnd(i, -1)
			// a statement ends at the next line's first token outside brackets
			for j := i + 1; j < len(toks); j++ {
				if ls.at(toks[j].Off) != ls.at(toks[j-1].Off) && !inOpenBracket(toks, j) {
					e = j - 1
					break
				}
				e = j
			}
			kind := Var
			if strings.ToUpper(name) == name {
				kind = Const
			}
			out = append(out, def{name: name, kind: kind, nameOff: toks[i].Off, exported: !strings.HasPrefix(name, "_"),
				start: toks[i].Off, end: toks[e].End})
			i = e
		}
	}
	return out
}
