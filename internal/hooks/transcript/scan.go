package transcript

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file holds a small validating JSON scanner specialised for transcript
// lines. It walks one line once, checks that the whole line is a single valid
// JSON object (the same grammar encoding/json accepts, including its nesting
// limit), and records where the few interesting values sit:
//
//	{"type": S, "isMeta": B, "isCompactSummary": B,
//	 "message": {"content": S | [ {"type": S, "text": S, "name": S,
//	                               "input": {"file_path": S, "path": S, "notebook_path": S}} ]}}
//
// Everything else is skipped without allocating. Strings are only decoded
// after the line proved valid, and only the ones the summary needs. When a key
// repeats, the last occurrence wins, as with encoding/json.

// maxDepth is the nesting limit of encoding/json; deeper lines are invalid.
const maxDepth = 10000

// span locates a JSON string token (quotes included) inside the line.
// ok is false when the key was absent or its value was not a string.
type span struct {
	start, end int
	esc        bool // the token contains a backslash escape
	ok         bool
}

// block is one element of message.content that was an object.
type block struct {
	typ, text, name span
	paths           [3]span // file_path, path, notebook_path
}

// Content kinds of message.content.
const (
	contentNone = iota
	contentString
	contentArray
)

// lineInfo is what the scanner extracted from one line.
type lineInfo struct {
	typ         span
	isMeta      bool
	isCompact   bool
	contentKind int
	content     span    // when contentKind == contentString
	blocks      []block // when contentKind == contentArray
}

type scanner struct {
	b     []byte
	i     int
	depth int
	info  lineInfo
}

// notSpecial[c] is true for bytes that can be skipped inside a string.
var notSpecial [256]bool

func init() {
	for c := 0x20; c < 256; c++ {
		notSpecial[c] = c != '"' && c != '\\'
	}
}

// scanLine parses line and reports whether it is one valid JSON object.
// The result's spans index into line and stay valid while line does.
func (s *scanner) scanLine(line []byte) bool {
	s.b = line
	s.i = 0
	s.depth = 0
	blocks := s.info.blocks[:0]
	s.info = lineInfo{blocks: blocks}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	if !s.topObject() {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// enter and leave track container nesting.
func (s *scanner) enter() bool {
	s.depth++
	s.i++ // past '{' or '['
	return s.depth <= maxDepth
}

func (s *scanner) leave() { s.depth--; s.i++ }

// value skips any JSON value.
func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '{':
		return s.object(modeSkip)
	case '[':
		return s.array(modeSkip)
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return s.number()
		}
		return false
	}
}

func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *scanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// str scans a string token starting at the opening quote.
func (s *scanner) str() (span, bool) {
	sp := span{start: s.i, ok: true}
	b := s.b
	i := s.i + 1
	for {
		for i < len(b) && notSpecial[b[i]] {
			i++
		}
		if i >= len(b) {
			return sp, false
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			sp.end = s.i
			return sp, true
		case '\\':
			sp.esc = true
			if i+1 >= len(b) {
				return sp, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return sp, false
				}
				i += 6
			default:
				return sp, false
			}
		default: // control character
			return sp, false
		}
	}
}

// strValue scans a value that is wanted only when it is a string. It reports
// the span (ok false when the value is not a string) and whether the value
// was valid JSON at all.
func (s *scanner) strValue() (span, bool) {
	if s.i < len(s.b) && s.b[s.i] == '"' {
		return s.str()
	}
	return span{}, s.value()
}

// trueValue scans a value and reports whether it is the literal true.
func (s *scanner) trueValue() (isTrue, ok bool) {
	if s.i < len(s.b) && s.b[s.i] == 't' {
		ok = s.lit("true")
		return ok, ok
	}
	return false, s.value()
}

// Modes say what an object or array is, so its members can be routed.
const (
	modeSkip    = iota // anything: skip members and elements
	modeTop            // the line's object
	modeMessage        // the "message" object
	modeContent        // the message.content array
	modeBlock          // one content block object
	modeInput          // a block's "input" object
)

// member consumes the value of the member named key of an object in mode.
func (s *scanner) member(mode int, key span) bool {
	switch mode {
	case modeTop:
		return s.topMember(key)
	case modeMessage:
		return s.messageMember(key)
	case modeBlock:
		return s.blockMember(key)
	case modeInput:
		return s.inputMember(key)
	}
	return s.value()
}

// object scans an object, routing each member's value through member.
func (s *scanner) object(mode int) bool {
	if !s.enter() {
		return false
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.leave()
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		key, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if mode == modeSkip {
			ok = s.value()
		} else {
			ok = s.member(mode, key)
		}
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.leave()
			return true
		default:
			return false
		}
	}
}

// array scans an array; in modeContent each element goes to contentElem.
func (s *scanner) array(mode int) bool {
	if !s.enter() {
		return false
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.leave()
		return true
	}
	for {
		var ok bool
		if mode == modeContent {
			ok = s.contentElem()
		} else {
			ok = s.value()
		}
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.leave()
			return true
		default:
			return false
		}
	}
}

// is reports whether the string token sp decodes to lit.
func (s *scanner) is(sp span, lit string) bool {
	if !sp.ok {
		return false
	}
	raw := s.b[sp.start+1 : sp.end-1]
	if !sp.esc {
		return string(raw) == lit
	}
	return decode(s.b[sp.start:sp.end], true) == lit
}

// text decodes the string token sp.
func (s *scanner) text(sp span) string {
	return decode(s.b[sp.start:sp.end], sp.esc)
}

// decode turns a valid JSON string token into a Go string, replacing invalid
// UTF-8 byte by byte with U+FFFD exactly as encoding/json does.
func decode(tok []byte, esc bool) string {
	raw := tok[1 : len(tok)-1]
	if !esc && utf8.Valid(raw) {
		return string(raw)
	}
	var out string
	if json.Unmarshal(tok, &out) != nil {
		return "" // unreachable for tokens the scanner accepted
	}
	return out
}

func (s *scanner) topObject() bool {
	return s.object(modeTop)
}

func (s *scanner) topMember(key span) bool {
	var ok bool
	switch {
	case s.is(key, "type"):
		s.info.typ, ok = s.strValue()
	case s.is(key, "isMeta"):
		s.info.isMeta, ok = s.trueValue()
	case s.is(key, "isCompactSummary"):
		s.info.isCompact, ok = s.trueValue()
	case s.is(key, "message"):
		s.info.contentKind = contentNone
		s.info.blocks = s.info.blocks[:0]
		if s.i < len(s.b) && s.b[s.i] == '{' {
			return s.object(modeMessage)
		}
		ok = s.value()
	default:
		ok = s.value()
	}
	return ok
}

func (s *scanner) messageMember(key span) bool {
	if !s.is(key, "content") {
		return s.value()
	}
	s.info.contentKind = contentNone
	s.info.blocks = s.info.blocks[:0]
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		sp, ok := s.str()
		s.info.content = sp
		s.info.contentKind = contentString
		return ok
	case '[':
		s.info.contentKind = contentArray
		return s.array(modeContent)
	}
	return s.value()
}

func (s *scanner) contentElem() bool {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.value()
	}
	s.info.blocks = append(s.info.blocks, block{})
	return s.object(modeBlock)
}

func (s *scanner) cur() *block { return &s.info.blocks[len(s.info.blocks)-1] }

func (s *scanner) blockMember(key span) bool {
	var ok bool
	bl := s.cur()
	switch {
	case s.is(key, "type"):
		bl.typ, ok = s.strValue()
	case s.is(key, "text"):
		bl.text, ok = s.strValue()
	case s.is(key, "name"):
		bl.name, ok = s.strValue()
	case s.is(key, "input"):
		bl.paths = [3]span{}
		if s.i < len(s.b) && s.b[s.i] == '{' {
			return s.object(modeInput)
		}
		ok = s.value()
	default:
		ok = s.value()
	}
	return ok
}

// pathKeys are the tool input keys that name files, in the order they are
// reported when one input carries several.
var pathKeys = [3]string{"file_path", "path", "notebook_path"}

func (s *scanner) inputMember(key span) bool {
	for k, name := range pathKeys {
		if s.is(key, name) {
			var ok bool
			s.cur().paths[k], ok = s.strValue()
			return ok
		}
	}
	return s.value()
}

// blank reports whether a line holds only JSON whitespace.
func blank(line []byte) bool {
	return len(bytes.Trim(line, " \t\r\n")) == 0
}
