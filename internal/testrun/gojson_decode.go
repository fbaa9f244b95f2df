package testrun

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// goEvent is one test2json event, its strings pointing into the line or
// into the decoder's arena (valid until the next decode).
type goEvent struct {
	Action, Package, Test, Output, FailedBuild, ImportPath []byte
}

// eventDecoder reads test2json lines without encoding/json's reflection:
// a 10k-test stream is ~50k lines and must classify in well under 100 ms.
// It agrees with encoding/json on every line encoding/json accepts (the
// fuzz test FuzzDecodeGoEvent checks this).
type eventDecoder struct {
	arena []byte
}

// decode fills ev from one line; false when the line is not a JSON object.
func (d *eventDecoder) decode(b []byte, ev *goEvent) bool {
	*ev = goEvent{}
	d.arena = d.arena[:0]
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		key, j, ok := d.str(b, i)
		if !ok {
			return false
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return false
		}
		if b[i] == '"' {
			val, j, ok := d.str(b, i)
			if !ok {
				return false
			}
			if f := ev.field(key); f != nil {
				*f = val
			}
			i = j
		} else {
			j, ok := skipValue(b, i)
			if !ok {
				return false
			}
			i = j
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
}

// field returns the field a key names, matched as encoding/json matches
// struct fields: exactly, else under its case folding.
func (ev *goEvent) field(key []byte) *[]byte {
	switch {
	case foldEq(key, "Action"):
		return &ev.Action
	case foldEq(key, "Package"):
		return &ev.Package
	case foldEq(key, "Test"):
		return &ev.Test
	case foldEq(key, "Output"):
		return &ev.Output
	case foldEq(key, "FailedBuild"):
		return &ev.FailedBuild
	case foldEq(key, "ImportPath"):
		return &ev.ImportPath
	}
	return nil
}

// foldEq compares key with an ASCII name the way encoding/json folds
// names: each rune through ToUpper(ToLower(r)), so "ſ" matches "S" and the
// Kelvin sign matches "K".
func foldEq(key []byte, name string) bool {
	if len(key) == len(name) {
		eq := true
		for i := 0; i < len(key); i++ {
			c := key[i]
			if c >= 0x80 {
				eq = false
				break
			}
			if c|0x20 != name[i]|0x20 {
				return false
			}
		}
		if eq {
			return true
		}
	}
	j := 0
	for i := 0; i < len(key); {
		r, n := utf8.DecodeRune(key[i:])
		i += n
		if j >= len(name) {
			return false
		}
		if unicode.ToUpper(unicode.ToLower(r)) != unicode.ToUpper(rune(name[j])) {
			return false
		}
		j++
	}
	return j == len(name)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue skips a non-string value: a literal, a number, or a nested
// array or object (strings inside it respected).
func skipValue(b []byte, i int) (int, bool) {
	if b[i] == '{' || b[i] == '[' {
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = j
				continue
			}
			i++
		}
		return 0, false
	}
	start := i
	for i < len(b) {
		c := b[i]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		i++
	}
	return i, i > start
}

func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// str decodes the JSON string starting at b[i] == '"'. It returns a slice
// of b when the string needs no change, else a slice of the arena.
func (d *eventDecoder) str(b []byte, i int) ([]byte, int, bool) {
	start := i + 1
	j := start
	for j < len(b) {
		c := b[j]
		if c == '"' {
			return b[start:j], j + 1, true
		}
		if c == '\\' || c >= utf8.RuneSelf {
			break
		}
		if c < 0x20 {
			return nil, 0, false
		}
		j++
	}
	if j >= len(b) {
		return nil, 0, false
	}
	// Slow path: escapes or non-ASCII bytes.
	from := len(d.arena)
	d.arena = append(d.arena, b[start:j]...)
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			return d.arena[from:len(d.arena):len(d.arena)], j + 1, true
		case c < 0x20:
			return nil, 0, false
		case c == '\\':
			if j+1 >= len(b) {
				return nil, 0, false
			}
			e := b[j+1]
			j += 2
			switch e {
			case '"', '\\', '/':
				d.arena = append(d.arena, e)
			case 'b':
				d.arena = append(d.arena, '\b')
			case 'f':
				d.arena = append(d.arena, '\f')
			case 'n':
				d.arena = append(d.arena, '\n')
			case 'r':
				d.arena = append(d.arena, '\r')
			case 't':
				d.arena = append(d.arena, '\t')
			case 'u':
				r, ok := hex4(b, j)
				if !ok {
					return nil, 0, false
				}
				j += 4
				if utf16.IsSurrogate(r) {
					r2 := unicode.ReplacementChar
					if j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
						if x, ok := hex4(b, j+2); ok {
							if dec := utf16.DecodeRune(r, x); dec != unicode.ReplacementChar {
								r2 = dec
								j += 6
							}
						}
					}
					r = r2
				}
				d.arena = utf8.AppendRune(d.arena, r)
			default:
				return nil, 0, false
			}
		case c < utf8.RuneSelf:
			d.arena = append(d.arena, c)
			j++
		default:
			r, n := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && n == 1 {
				d.arena = utf8.AppendRune(d.arena, unicode.ReplacementChar)
			} else {
				d.arena = append(d.arena, b[j:j+n]...)
			}
			j += n
		}
	}
	return nil, 0, false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
