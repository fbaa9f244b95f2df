package pathglob

// Match reports whether the slash-separated path matches pattern with
// pathname semantics: '*' and '?' and classes never match '/', "**" as a
// whole path component matches any number of components (zero included),
// and '\\' quotes the next character. A malformed class ("[a") matches
// nothing. Match does no allocation.
func Match(pattern, path string) bool {
	return match(pattern, path, true) == matched
}

type result int

const (
	notMatched result = iota
	matched
	// abortAll ends every enclosing '*' retry: the text ran out, so no
	// later split point can match either.
	abortAll
	// abortToStar ends the retries of enclosing single '*'s, which cannot
	// cross a '/' the rest of the pattern failed to reach.
	abortToStar
)

// match is a backtracking matcher in the manner of git's wildmatch: each
// '*' tries every split point of the text, and the abort results keep that
// from going exponential on patterns such as "*a*a*a*a*b". compStart says
// whether p begins a path component (the pattern's start, or after '/').
func match(p, t string, compStart bool) result {
	for len(p) > 0 {
		c := p[0]
		if c == '*' {
			return matchStar(p, t, compStart)
		}
		if len(t) == 0 {
			return abortAll
		}
		switch c {
		case '\\':
			if len(p) < 2 || t[0] != p[1] {
				return notMatched // a trailing backslash matches nothing
			}
			p, t = p[2:], t[1:]
		case '?':
			if t[0] == '/' {
				return notMatched
			}
			p, t = p[1:], t[1:]
		case '[':
			in, rest, ok := matchClass(p, t[0])
			if !ok {
				return abortAll
			}
			if !in || t[0] == '/' {
				return notMatched
			}
			p, t = rest, t[1:]
		default:
			if t[0] != c {
				return notMatched
			}
			p, t = p[1:], t[1:]
		}
		compStart = c == '/'
	}
	if len(t) == 0 {
		return matched
	}
	return notMatched
}

// matchStar handles a run of '*' at the head of p against t.
func matchStar(p, t string, compStart bool) result {
	n := 0
	for n < len(p) && p[n] == '*' {
		n++
	}
	rest := p[n:]
	// "**" is the any-depth wildcard only as a whole component; elsewhere
	// it is one '*'.
	if n >= 2 && compStart && (len(rest) == 0 || rest[0] == '/') {
		return doubleStar(rest, t)
	}
	if len(rest) == 0 {
		// A trailing '*' matches the rest of this component only.
		for i := 0; i < len(t); i++ {
			if t[i] == '/' {
				return abortToStar
			}
		}
		return matched
	}
	for i := 0; ; i++ {
		if r := match(rest, t[i:], false); r != notMatched {
			return r
		}
		if i >= len(t) {
			return abortAll
		}
		if t[i] == '/' {
			return abortToStar
		}
	}
}

// doubleStar matches "**" followed by rest ("" or "/..."): any sequence of
// whole components, including none.
func doubleStar(rest string, t string) result {
	if len(rest) == 0 {
		return matched // "**" at the end matches everything left
	}
	after := rest[1:] // rest is "/..."
	// Zero components: "a/**/b" matches "a/b".
	if match(after, t, true) == matched {
		return matched
	}
	for i := 0; i < len(t); i++ {
		if t[i] == '/' {
			switch match(after, t[i+1:], true) {
			case matched:
				return matched
			case abortAll:
				return abortAll
			}
		}
	}
	return abortAll
}

// matchClass matches one character c against the class at the head of p
// ("[...]"). It returns whether c is in it, the pattern after the class,
// and false as the last value when the class is unterminated.
func matchClass(p string, c byte) (in bool, rest string, ok bool) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	first := true
	var prev byte
	havePrev := false
	for {
		if i >= len(p) {
			return false, "", false
		}
		ch := p[i]
		if ch == ']' && !first {
			i++
			break
		}
		first = false
		switch {
		case ch == '\\' && i+1 < len(p):
			i++
			ch = p[i]
			if ch == c {
				in = true
			}
			prev, havePrev = ch, true
			i++
		case ch == '-' && havePrev && i+1 < len(p) && p[i+1] != ']':
			hi := p[i+1]
			if hi == '\\' && i+2 < len(p) {
				hi = p[i+2]
				i++
			}
			if prev <= c && c <= hi {
				in = true
			}
			havePrev = false
			i += 2
		case ch == '[' && i+1 < len(p) && p[i+1] == ':':
			end := -1
			for j := i + 2; j+1 < len(p); j++ {
				if p[j] == ':' && p[j+1] == ']' {
					end = j
					break
				}
			}
			if end < 0 {
				if c == '[' {
					in = true
				}
				prev, havePrev = '[', true
				i++
				continue
			}
			name := p[i+2 : end]
			known, hit := namedClass(name, c)
			if !known {
				return false, "", false
			}
			if hit {
				in = true
			}
			havePrev = false
			i = end + 2
		default:
			if ch == c {
				in = true
			}
			prev, havePrev = ch, true
			i++
		}
	}
	return in != negate, p[i:], true
}

func namedClass(name string, c byte) (known, hit bool) {
	switch name {
	case "alnum":
		return true, isAlpha(c) || isDigit(c)
	case "alpha":
		return true, isAlpha(c)
	case "blank":
		return true, c == ' ' || c == '\t'
	case "cntrl":
		return true, c < 0x20 || c == 0x7f
	case "digit":
		return true, isDigit(c)
	case "graph":
		return true, c > 0x20 && c < 0x7f
	case "lower":
		return true, c >= 'a' && c <= 'z'
	case "print":
		return true, c >= 0x20 && c < 0x7f
	case "punct":
		return true, c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c)
	case "space":
		return true, c == ' ' || (c >= '\t' && c <= '\r')
	case "upper":
		return true, c >= 'A' && c <= 'Z'
	case "xdigit":
		return true, isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
	}
	return false, false
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
