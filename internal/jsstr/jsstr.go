// Package jsstr writes JSON strings exactly as JavaScript's JSON.stringify
// does (no HTML escaping, U+2028/U+2029 written raw, control characters as
// their short escapes or \u00XX), so files git ideate writes are byte for
// byte those of the existing implementation.
package jsstr

import "strings"

// Write appends the JSON string form of s (valid UTF-8) to b.
func Write(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// Quote returns the JSON string form of s.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	Write(&b, s)
	return b.String()
}
