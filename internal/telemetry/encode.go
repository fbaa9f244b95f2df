package telemetry

import (
	"strconv"
	"unicode/utf8"
)

// field is one key of an event, in the order it is written.
type field struct {
	key   string
	s     string
	n     int
	isNum bool
}

func str(k, v string) field { return field{key: k, s: v} }
func num(k string, v int) field {
	return field{key: k, n: v, isNum: true}
}

// encode renders {"counter":…,<fields>…,"at":…}\n. Keys are fixed ASCII
// names; string values are escaped and cut to MaxField bytes.
func encode(counter string, fields []field, at string) []byte {
	b := make([]byte, 0, 160)
	b = append(b, `{"counter":`...)
	b = appendString(b, counter)
	for _, f := range fields {
		b = append(b, ',', '"')
		b = append(b, f.key...)
		b = append(b, '"', ':')
		if f.isNum {
			b = strconv.AppendInt(b, int64(f.n), 10)
		} else {
			b = appendString(b, f.s)
		}
	}
	b = append(b, `,"at":`...)
	b = appendString(b, at)
	return append(b, '}', '\n')
}

const hexDigits = "0123456789abcdef"

// ellipsis ends a cut value.
const ellipsis = "…"

// appendString appends s as a JSON string whose escaped content takes at
// most MaxField bytes; a longer value is cut at a character boundary and
// ends with "…". Invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	limit := MaxField
	if escapedLen(s) > MaxField {
		limit = MaxField - len(ellipsis)
	}
	b = append(b, '"')
	used := 0
	var tmp [6]byte
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		esc := escapeRune(tmp[:0], c)
		if used+len(esc) > limit {
			return append(append(b, ellipsis...), '"')
		}
		b = append(b, esc...)
		used += len(esc)
		i += size
	}
	return append(b, '"')
}

func escapedLen(s string) int {
	n := 0
	var tmp [6]byte
	for _, c := range s { // invalid bytes range as U+FFFD
		n += len(escapeRune(tmp[:0], c))
	}
	return n
}

// escapeRune appends the JSON form of c to b.
func escapeRune(b []byte, c rune) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(b, '\\', byte(c))
	case c == '\n':
		return append(b, '\\', 'n')
	case c == '\r':
		return append(b, '\\', 'r')
	case c == '\t':
		return append(b, '\\', 't')
	case c < 0x20 || c == 0x7f:
		return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	case c == '\u2028' || c == '\u2029':
		return append(b, '\\', 'u', '2', '0', '2', hexDigits[c&0xf])
	}
	return utf8.AppendRune(b, c)
}
