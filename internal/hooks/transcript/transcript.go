package transcript

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/osproc"
)

// Defaults applied by Options when a field is zero.
const (
	DefaultMaxFiles     = 6
	DefaultMaxDirs      = 6
	DefaultLastTextMax  = 160
	DefaultMaxBytes     = 64 << 20
	DefaultMaxLineBytes = 16 << 20
)

// readBufSize is the bufio buffer; lines that fit are parsed in place.
const readBufSize = 1 << 20

// UnnamedTool is the name counted for a tool_use block without a string name.
const UnnamedTool = "unknown"

// ToolCount is how often one tool was called.
type ToolCount struct {
	Name  string
	Count int
}

// Summary is what a transcript scan found.
type Summary struct {
	UserTurns      int // lines with "type":"user", tool results included
	AssistantTurns int // lines with "type":"assistant" (the host writes one per content block)
	// Prompts counts user lines that carry real text: a non-blank string
	// content or at least one non-blank "text" block, excluding lines marked
	// isMeta or isCompactSummary.
	Prompts   int
	ToolCalls int         // tool_use blocks in assistant lines
	Tools     []ToolCount // per tool name, first-seen order
	// Files holds up to MaxFiles distinct paths from tool_use inputs
	// (file_path, path, notebook_path), cleaned and made relative to Cwd
	// when inside it, in first-seen order.
	Files []string
	// Dirs holds up to MaxDirs distinct directories of every such path
	// (not only of those kept in Files), first-seen order.
	Dirs []string
	// LastAssistantText is the last non-blank assistant text, whitespace
	// collapsed to single spaces, cut to LastTextMax runes plus "…".
	LastAssistantText string
	Lines             int  // non-blank lines read (blank lines are ignored)
	BadLines          int  // lines that are not one valid JSON object, or too long
	PartialTail       bool // the last line had no newline and did not parse (a write in progress)
	Truncated         bool // MaxBytes stopped the scan before the end
}

// Options tune a scan. Zero fields take the defaults; a negative value means
// no limit.
type Options struct {
	Cwd          string // session working directory; paths inside it become relative
	MaxFiles     int    // default 6
	MaxDirs      int    // default 6
	LastTextMax  int    // runes; default 160
	MaxBytes     int64  // bytes read at most; default 64 MiB
	MaxLineBytes int    // longer lines are skipped as bad; default 16 MiB

	bufSize int // read buffer size; tests shrink it to exercise long lines
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		} else if *v < 0 {
			*v = int(^uint(0) >> 1)
		}
	}
	def(&o.MaxFiles, DefaultMaxFiles)
	def(&o.MaxDirs, DefaultMaxDirs)
	def(&o.LastTextMax, DefaultLastTextMax)
	def(&o.MaxLineBytes, DefaultMaxLineBytes)
	if o.bufSize <= 0 {
		o.bufSize = readBufSize
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	} else if o.MaxBytes < 0 {
		o.MaxBytes = 1<<63 - 2
	}
	if o.Cwd != "" {
		o.Cwd = filepath.Clean(o.Cwd)
	}
	return o
}

// ToolList renders Tools as "Bash (3x), Edit (2x)" in first-seen order, or
// "" when no tool was called.
func (s Summary) ToolList() string {
	var b strings.Builder
	for i, t := range s.Tools {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Name)
		b.WriteString(" (")
		b.WriteString(strconv.Itoa(t.Count))
		b.WriteString("x)")
	}
	return b.String()
}

// Summarize scans the transcript file at path. It fails only when the file
// cannot be opened or read; malformed content is counted, never fatal.
func Summarize(path string, opt Options) (Summary, error) {
	// A host's path: a FIFO or a device is refused, not waited on.
	f, _, err := osproc.OpenRegular(path)
	if err != nil {
		return Summary{}, fmt.Errorf("transcript: %w", err)
	}
	defer f.Close()
	return SummarizeReader(f, opt)
}

// SummarizeReader scans a transcript from r. On a read error it returns the
// summary of what was read so far together with the error.
func SummarizeReader(r io.Reader, opt Options) (Summary, error) {
	opt = opt.withDefaults()
	a := newAccumulator(opt)
	limit := opt.MaxBytes
	br := bufio.NewReaderSize(io.LimitReader(r, limit+1), opt.bufSize)

	var (
		off      int64  // bytes consumed before the current line
		n        int64  // bytes of the current line so far
		long     []byte // the current line when it outgrew the buffer
		inLong   bool   // the current line spans several reads
		tooLong  bool   // the current line exceeds MaxLineBytes
		readErr  error
		lastLine bool
	)
	for !lastLine {
		frag, err := br.ReadSlice('\n')
		n += int64(len(frag))
		switch {
		case err == bufio.ErrBufferFull:
			inLong = true
			if !tooLong {
				if len(long)+len(frag) > opt.MaxLineBytes {
					tooLong = true
					long = long[:0]
				} else {
					long = append(long, frag...)
				}
			}
			continue
		case err == io.EOF:
			lastLine = true
		case err != nil:
			readErr = err
			lastLine = true
		}
		if off+n > limit {
			a.sum.Truncated = true
			break
		}
		line := frag
		if inLong && !tooLong {
			long = append(long, frag...)
			line = long
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		size := len(line)
		if complete {
			size--
		}
		switch {
		case tooLong || size > opt.MaxLineBytes:
			a.sum.Lines++
			a.sum.BadLines++
		case n > 0:
			a.line(line, lastLine && !complete && readErr == nil)
		}
		off += n
		n = 0
		inLong, tooLong = false, false
		if cap(long) > 4*opt.bufSize {
			long = nil // do not keep a huge line's buffer around
		} else {
			long = long[:0]
		}
	}
	if readErr != nil {
		readErr = fmt.Errorf("transcript: read: %w", readErr)
	}
	return a.finish(), readErr
}

// accumulator folds parsed lines into a Summary.
type accumulator struct {
	opt      Options
	sum      Summary
	sc       scanner
	rawIdx   map[string]int // name token as written → index in Tools
	nameIdx  map[string]int // decoded name → index in Tools
	seen     map[string]struct{}
	dirSeen  map[string]struct{}
	lastText string
}

func newAccumulator(opt Options) *accumulator {
	return &accumulator{
		opt:     opt,
		rawIdx:  map[string]int{},
		nameIdx: map[string]int{},
		seen:    map[string]struct{}{},
		dirSeen: map[string]struct{}{},
	}
}

// line handles one raw line (its newline may still be attached). tail says
// the line is the unterminated end of the input.
func (a *accumulator) line(line []byte, tail bool) {
	if blank(line) {
		return
	}
	a.sum.Lines++
	sc := &a.sc
	if !sc.scanLine(line) {
		a.sum.BadLines++
		if tail {
			a.sum.PartialTail = true
		}
		return
	}
	info := &sc.info
	switch {
	case sc.is(info.typ, "user"):
		a.sum.UserTurns++
		if !info.isMeta && !info.isCompact && a.hasPrompt() {
			a.sum.Prompts++
		}
	case sc.is(info.typ, "assistant"):
		a.sum.AssistantTurns++
		a.assistant()
	}
}

func (a *accumulator) hasPrompt() bool {
	sc := &a.sc
	switch sc.info.contentKind {
	case contentString:
		return !isBlank(sc.text(sc.info.content))
	case contentArray:
		for i := range sc.info.blocks {
			bl := &sc.info.blocks[i]
			if bl.text.ok && sc.is(bl.typ, "text") && !isBlank(sc.text(bl.text)) {
				return true
			}
		}
	}
	return false
}

func (a *accumulator) assistant() {
	sc := &a.sc
	switch sc.info.contentKind {
	case contentString:
		a.text(sc.info.content)
	case contentArray:
		for i := range sc.info.blocks {
			bl := &sc.info.blocks[i]
			switch {
			case sc.is(bl.typ, "text"):
				if bl.text.ok {
					a.text(bl.text)
				}
			case sc.is(bl.typ, "tool_use"):
				a.toolUse(bl)
			}
		}
	}
}

func (a *accumulator) text(sp span) {
	if t := a.sc.text(sp); !isBlank(t) {
		a.lastText = t
	}
}

func (a *accumulator) toolUse(bl *block) {
	sc := &a.sc
	a.sum.ToolCalls++
	var raw []byte // the name token as written, nil when absent
	if bl.name.ok {
		raw = sc.b[bl.name.start:bl.name.end]
	}
	idx, ok := a.rawIdx[string(raw)]
	if !ok {
		name := ""
		if bl.name.ok {
			name = sc.text(bl.name)
		}
		if name == "" {
			name = UnnamedTool
		}
		// Different spellings (escapes) can decode to one name.
		if idx, ok = a.nameIdx[name]; !ok {
			idx = len(a.sum.Tools)
			a.sum.Tools = append(a.sum.Tools, ToolCount{Name: name})
			a.nameIdx[name] = idx
		}
		a.rawIdx[string(raw)] = idx
	}
	a.sum.Tools[idx].Count++
	for _, p := range bl.paths {
		if p.ok {
			a.path(sc.text(p))
		}
	}
}

func (a *accumulator) path(p string) {
	filesFull := len(a.sum.Files) >= a.opt.MaxFiles
	dirsFull := len(a.sum.Dirs) >= a.opt.MaxDirs
	if p == "" || (filesFull && dirsFull) {
		return
	}
	p = a.relative(p)
	if !filesFull {
		if _, dup := a.seen[p]; !dup {
			a.seen[p] = struct{}{}
			a.sum.Files = append(a.sum.Files, p)
		}
	}
	if d := filepath.Dir(p); !dirsFull {
		if _, dup := a.dirSeen[d]; !dup {
			a.dirSeen[d] = struct{}{}
			a.sum.Dirs = append(a.sum.Dirs, d)
		}
	}
}

// relative cleans p and, when it is absolute and inside Cwd, makes it
// relative to Cwd.
func (a *accumulator) relative(p string) string {
	p = filepath.Clean(p)
	cwd := a.opt.Cwd
	if cwd == "" || !filepath.IsAbs(p) || !filepath.IsAbs(cwd) {
		return p
	}
	rel, err := filepath.Rel(cwd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}

func (a *accumulator) finish() Summary {
	a.sum.LastAssistantText = Shorten(a.lastText, a.opt.LastTextMax)
	return a.sum
}

func isBlank(s string) bool {
	return strings.TrimFunc(s, unicode.IsSpace) == ""
}

// Shorten collapses runs of white space in s to single spaces, trims it, and
// cuts it to max runes, appending "…" when it cut. A max of zero or less
// means no cut.
func Shorten(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
		}
		n++
	}
	return s
}
