package paging

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/apperr"
)

// CompactLen returns the MCP measure of v: the length of its compact JSON, in
// UTF-16 code units, as JavaScript's JSON.stringify(v).length would give it.
func CompactLen(v any) (int, error) {
	b, err := encodeJSON(v, false)
	if err != nil {
		return 0, err
	}
	return jsUTF16Len(b), nil
}

// PrettyLen returns the CLI measure of v: the length in UTF-16 code units of
// its JSON indented by 2 spaces, plus 4 for each of its lines (the item sits
// two levels deep in the printed envelope), plus 2 for the separator between
// items.
func PrettyLen(v any) (int, error) {
	b, err := encodeJSON(v, true)
	if err != nil {
		return 0, err
	}
	lines := bytes.Count(b, []byte("\n")) + 1
	return jsUTF16Len(b) + 4*lines + 2, nil
}

// encodeJSON serializes v without HTML escaping, compact or indented by 2
// spaces, without the trailing newline the encoder adds.
func encodeJSON(v any, pretty bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "an item could not be serialized to JSON")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsUTF16Len counts the UTF-16 code units of the JSON text b as JavaScript
// would have written it. Characters outside the Basic Multilingual Plane count
// 2. encoding/json writes a few characters as \uXXXX escapes that
// JSON.stringify writes raw (U+2028, U+2029, and U+FFFD in place of invalid
// UTF-8); those count 1. Escapes of control characters below U+0020 are
// written the same way by both and count 6. A \u escape appears only inside a
// string, and a preceding "\\" is consumed as its own escape, so the scan
// never mistakes an escaped backslash followed by "u" for an escape.
func jsUTF16Len(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u' && i+6 <= len(b):
			if r, ok := hex4(b[i+2 : i+6]); ok && r >= 0x20 {
				n++
			} else {
				n += 6
			}
			i += 6
		case c == '\\' && i+1 < len(b):
			n += 2
			i += 2
		case c < utf8.RuneSelf:
			n++
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r >= 0x10000 {
				n += 2
			} else {
				n++
			}
			i += size
		}
	}
	return n
}

// hex4 parses four hex digits.
func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
