package plan

import (
	"strings"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/textfmt"
)

// mdoc is one Markdown file split into lines, with its front matter
// separated and its fenced code blocks and ATX headings located. Line
// numbers are 1-based and count the front matter, so a finding names the
// line an editor shows.
type mdoc struct {
	path     string
	lines    []string // without line terminators; lines[i] is line i+1
	body     int      // index of the first line after the front matter
	fence    []bool   // lines[i] is a fence marker or inside a fenced block
	blocks   []block  // fenced blocks in order
	heads    []head
	front    FrontMatter
	hasFront bool
	crlf     bool
	problems []Finding
}

// block is a fenced code block: the indexes of its opening and closing
// fence lines (close is len(lines) when the block is never closed).
type block struct{ open, close int }

type head struct {
	level int
	text  string
	norm  string // normHeading(text)
	idx   int    // index into lines
	end   int    // index just past its section (setEnds)
}

// parseMarkdown splits src. It never fails: what it cannot read becomes a
// finding on the document.
func parseMarkdown(path string, src []byte) *mdoc {
	d := &mdoc{path: path}
	s := string(src)
	s = strings.TrimPrefix(s, "\uFEFF")
	if !utf8.ValidString(s) {
		d.problems = append(d.problems, Finding{File: path, Line: 1, Rule: RuleNotUTF8, Message: "the file is not valid UTF-8; invalid bytes are read as U+FFFD", Severity: Error})
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.Contains(s, "\r\n") {
		d.crlf = true
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		d.lines = nil
	} else {
		d.lines = strings.Split(s, "\n")
	}
	for i, l := range d.lines {
		// A lone CR (old Mac line ending) is treated as space.
		if strings.IndexByte(l, '\r') >= 0 {
			d.lines[i] = strings.ReplaceAll(l, "\r", " ")
		}
	}
	d.readFrontMatter()
	d.scan()
	d.setEnds()
	return d
}

var fenceRe = textfmt.Regexp("^ {0,3}(`{3,}|~{3,})")
var headRe = textfmt.Regexp(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)

// scan marks fenced lines and collects headings outside fences.
func (d *mdoc) scan() {
	d.fence = make([]bool, len(d.lines))
	var open string // the fence run that opened the current block
	for i := d.body; i < len(d.lines); i++ {
		l := d.lines[i]
		lead := strings.TrimLeft(l, " ")
		if lead == "" || len(l)-len(lead) > 3 || (lead[0] != '`' && lead[0] != '~' && lead[0] != '#') {
			if open != "" {
				d.fence[i] = true
			}
			continue
		}
		if open != "" {
			d.fence[i] = true
			if m := fenceRe().FindStringSubmatch(l); m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(l[len(m[0]):]) == "" {
				open = ""
				d.blocks[len(d.blocks)-1].close = i
			}
			continue
		}
		if m := fenceRe().FindStringSubmatch(l); m != nil {
			// A backtick fence's info string may not contain a backtick.
			if m[1][0] == '`' && strings.Contains(l[len(m[0]):], "`") {
				goto notFence
			}
			open = m[1]
			d.fence[i] = true
			d.blocks = append(d.blocks, block{open: i, close: len(d.lines)})
			continue
		}
	notFence:
		if m := headRe().FindStringSubmatch(l); m != nil {
			text := strings.TrimSpace(m[2])
			// Strip a closing sequence of #s preceded by a space.
			if j := strings.LastIndex(text, " #"); j >= 0 && strings.Trim(text[j+1:], "#") == "" {
				text = strings.TrimSpace(text[:j])
			} else if strings.Trim(text, "#") == "" {
				text = ""
			}
			d.heads = append(d.heads, head{level: len(m[1]), text: text, norm: normHeading(text), idx: i})
		}
	}
}

// end returns the index just past the section opened by heading h: the
// next heading of the same or a higher level, or the end of the file.
func (d *mdoc) end(h int) int { return d.heads[h].end }

// setEnds computes every heading's section end in one pass.
func (d *mdoc) setEnds() {
	var stack []int
	for j := range d.heads {
		for len(stack) > 0 && d.heads[stack[len(stack)-1]].level >= d.heads[j].level {
			d.heads[stack[len(stack)-1]].end = d.heads[j].idx
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, j)
	}
	for _, k := range stack {
		d.heads[k].end = len(d.lines)
	}
}

// nextHead returns the index of the first line of the next heading of any
// level after line i, or the end of the file.
func (d *mdoc) nextHead(i int) int {
	for _, h := range d.heads {
		if h.idx > i {
			return h.idx
		}
	}
	return len(d.lines)
}

// section finds the first heading whose normalized text is one of names
// and returns its index in heads, or -1.
func (d *mdoc) section(names ...string) int {
	for i, h := range d.heads {
		n := h.norm
		for _, want := range names {
			if n == want {
				return i
			}
		}
	}
	return -1
}

// sectionPrefix finds the first heading whose normalized text starts with
// one of prefixes.
func (d *mdoc) sectionPrefix(prefixes ...string) int {
	for i, h := range d.heads {
		n := h.norm
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				return i
			}
		}
	}
	return -1
}

var numberingRe = textfmt.Regexp(`^\d+(\.\d+)*[.)]?\s+`)
var trailingParenRe = textfmt.Regexp(`\s*\([^)]*\)\s*$`)

// normHeading lowercases a heading, drops a leading "1." numbering, a
// trailing parenthetical and colon, and folds typographic apostrophes.
func normHeading(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return s
	}
	if c := s[0]; c >= '0' && c <= '9' {
		s = numberingRe().ReplaceAllString(s, "")
	}
	if strings.HasSuffix(s, ")") {
		s = trailingParenRe().ReplaceAllString(s, "")
	}
	s = strings.ReplaceAll(s, "’", "'")
	s = strings.ReplaceAll(s, "*", "")
	s = strings.TrimRight(s, ": ")
	return strings.Join(strings.Fields(s), " ")
}

// sectionText joins the non-blank lines of a section after its heading.
func (d *mdoc) sectionText(h int) string {
	var b strings.Builder
	for i, end := d.heads[h].idx+1, d.end(h); i < end; i++ {
		if t := strings.TrimSpace(d.lines[i]); t != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}

// section returns a parsed Section for heading h (or a zero Section for -1).
func (d *mdoc) sectionOf(h int) Section {
	if h < 0 {
		return Section{}
	}
	return Section{Title: d.heads[h].text, Line: d.heads[h].idx + 1, Text: d.sectionText(h)}
}

// table is one GitHub-flavoured table: a header row, a delimiter row and
// body rows.
type table struct {
	headIdx int
	header  []string
	rows    []tableRow
}

type tableRow struct {
	idx   int
	cells []string
}

var delimRe = textfmt.Regexp(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)

// tables returns the tables between lines from and to (not in fences).
func (d *mdoc) tables(from, to int) []table {
	var out []table
	for i := from; i < to; i++ {
		if d.fence[i] || !isTableLine(d.lines[i]) || i+1 >= to || d.fence[i+1] {
			continue
		}
		if !delimRe().MatchString(strings.TrimSpace(d.lines[i+1])) {
			continue
		}
		t := table{headIdx: i, header: splitRow(d.lines[i])}
		j := i + 2
		for ; j < to && !d.fence[j] && isTableLine(d.lines[j]); j++ {
			t.rows = append(t.rows, tableRow{idx: j, cells: splitRow(d.lines[j])})
		}
		out = append(out, t)
		i = j - 1
	}
	return out
}

func isTableLine(l string) bool {
	return strings.HasPrefix(strings.TrimSpace(l), "|")
}

// splitRow splits a table row into trimmed cells. A `\|` is a literal
// pipe inside a cell (code spans included) and is unescaped.
func splitRow(l string) []string {
	s := strings.TrimSpace(l)
	s = strings.TrimPrefix(s, "|")
	if strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		s = s[:len(s)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteByte('|')
			i++
		case s[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(s[i])
		}
	}
	cells = append(cells, strings.TrimSpace(b.String()))
	return cells
}

// codeSpans returns the contents of the inline code spans of s in order.
// A span opened by n backticks closes at the next run of exactly n. It is
// linear in len(s): the runs are found once, and for each length the
// search for a closing run resumes where the last one stopped.
func codeSpans(s string) []string {
	var out []string
	for _, sp := range spanRanges(s) {
		out = append(out, spanContent(s[sp[0]:sp[1]]))
	}
	return out
}

// spanRanges returns, for each code span of s, the start and end of its
// content (between the backtick runs).
func spanRanges(s string) [][2]int {
	if strings.IndexByte(s, '`') < 0 {
		return nil
	}
	type brun struct{ pos, n int }
	var runs []brun
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := run(s, i)
		runs = append(runs, brun{i, n})
		i += n
	}
	// byLen[n] lists the indexes into runs of the runs of length n.
	byLen := map[int][]int{}
	for k, r := range runs {
		byLen[r.n] = append(byLen[r.n], k)
	}
	cursor := map[int]int{} // next candidate position in byLen[n]
	var out [][2]int
	for k := 0; k < len(runs); k++ {
		r := runs[k]
		idx := byLen[r.n]
		c := cursor[r.n]
		for c < len(idx) && idx[c] <= k {
			c++
		}
		cursor[r.n] = c
		if c == len(idx) {
			continue // never closed: the run is literal text
		}
		closeK := idx[c]
		cursor[r.n] = c + 1
		out = append(out, [2]int{r.pos + r.n, runs[closeK].pos})
		k = closeK
	}
	return out
}

func spanContent(c string) string {
	if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
		return c[1 : len(c)-1]
	}
	return c
}

// spanAt reads a code span whose opening run starts at s[i]. It returns
// the content, the index after the span (or after the opening run when
// it never closes) and whether it closed.
func spanAt(s string, i int) (string, int, bool) {
	n := run(s, i)
	for j := i + n; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := run(s, j)
		if m == n {
			return spanContent(s[i+n : j]), j + m, true
		}
		j += m
	}
	return "", i + n, false
}

func run(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// singleCodeSpan reports whether s (trimmed) is exactly one code span and
// returns its content.
func singleCodeSpan(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] != '`' {
		return "", false
	}
	c, next, ok := spanAt(s, 0)
	if !ok || next != len(s) {
		return "", false
	}
	return c, true
}

var bulletRe = textfmt.Regexp(`^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$`)
var checkboxRe = textfmt.Regexp(`^(\s*)[-*+]\s+\[([ xX])\]\s*(.*)$`)
