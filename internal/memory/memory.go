package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// File is the memory file, relative to the top of the working tree.
const File = "docs/agents/memory.md"

// DefaultBound is how many entries a role's section holds at most.
const DefaultBound = 20

// MaxLine is the longest line of an entry's text, evidence or date, in
// characters; an entry's text is one or two such lines.
const MaxLine = 240

// AllRoles is the section whose entries every role receives.
const AllRoles = "all"

// Codes of the errors Add returns beside apperr.Schema.
const (
	Invariant apperr.Code = "INVARIANT"   // the entry would relax an invariant
	Duplicate apperr.Code = "DUPLICATE"   // the role already holds this entry
	Full      apperr.Code = "MEMORY_FULL" // the role's section is at its bound
)

// Entry is one lesson of one role.
type Entry struct {
	Role     string `json:"role"`
	Text     string `json:"text"` // one line, or two joined by "\n"
	Evidence string `json:"evidence"`
	Date     string `json:"date"` // YYYY-MM-DD
	Line     int    `json:"line"` // where it starts in the file (from 1); 0 for a new entry
}

// Render is the entry as one line, the form init.md quotes.
func (e Entry) Render() string {
	return fmt.Sprintf("%s (evidence: %s; %s)", strings.Join(strings.Fields(e.Text), " "), e.Evidence, e.Date)
}

// Finding is one thing Check found wrong, at a line of the file.
type Finding struct {
	Line    int    `json:"line"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", File, f.Line, f.Rule, f.Message)
}

// Doc is the memory file as read.
type Doc struct {
	Lines    []string // the file's lines, without their newlines
	Entries  []Entry  // in file order
	Findings []Finding
	sections map[string]int // role → index of its heading line
	ends     map[string]int // role → index just past its last entry line
	order    []string       // roles in file order
}

var (
	roleRe = textfmt.BoundedRegexp(`^[a-z][a-z0-9-]*$`, 64)
	dateRe = textfmt.Regexp(`^\d{4}-\d{2}-\d{2}$`)
)

// ValidRole reports whether s can name a role's section.
func ValidRole(s string) bool { return roleRe().MatchString(s) }

// Parse reads the memory file's text and checks it against bound (0:
// DefaultBound). It never fails: what breaks the shape is a Finding.
func Parse(text string, bound int) *Doc {
	if bound <= 0 {
		bound = DefaultBound
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	d := &Doc{sections: map[string]int{}, ends: map[string]int{}}
	if text != "" {
		d.Lines = strings.Split(text, "\n")
	}
	find := func(line int, rule, format string, args ...any) {
		d.Findings = append(d.Findings, Finding{Line: line, Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	role := ""
	var cur *Entry
	// state of the current entry: 0 text, 1 continuation seen, 2 evidence seen, 3 date seen
	state := 0
	finish := func(end int) {
		if cur == nil {
			return
		}
		if cur.Evidence == "" {
			find(cur.Line, "entry.evidence", "the entry has no \"  evidence:\" line naming where it came from")
		}
		if cur.Date == "" {
			find(cur.Line, "entry.date", "the entry has no \"  date: YYYY-MM-DD\" line")
		}
		d.Entries = append(d.Entries, *cur)
		d.ends[role] = end
		cur = nil
	}
	for i, l := range d.Lines {
		n := i + 1
		switch {
		case strings.HasPrefix(l, "## "):
			finish(i)
			role = strings.TrimSpace(l[3:])
			if !ValidRole(role) {
				find(n, "role.name", "%q is not a role name (lower-case letters, digits and dashes)", role)
			} else if _, dup := d.sections[role]; dup {
				find(n, "role.duplicate", "role %s has a second section; keep one", role)
			} else {
				d.sections[role] = i
				d.ends[role] = i + 1
				d.order = append(d.order, role)
			}
		case strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "### "):
			finish(i)
			if role != "" {
				find(n, "heading", "only \"## <role>\" headings may follow the first role section")
			}
		case strings.HasPrefix(l, "- "):
			finish(i)
			if role == "" {
				// Prose before the first role may hold lists.
				continue
			}
			cur = &Entry{Role: role, Text: strings.TrimSpace(l[2:]), Line: n}
			state = 0
			if cur.Text == "" {
				find(n, "entry.text", "the entry's text is empty")
			}
		case strings.HasPrefix(l, "  ") && cur != nil:
			v := strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(v, "evidence:"):
				if state >= 2 {
					find(n, "entry.order", "a second evidence line, or evidence after the date")
				}
				cur.Evidence = strings.TrimSpace(strings.TrimPrefix(v, "evidence:"))
				state = 2
				if cur.Evidence == "" {
					find(n, "entry.evidence", "the evidence line is empty")
				}
			case strings.HasPrefix(v, "date:"):
				if state >= 3 {
					find(n, "entry.order", "a second date line")
				}
				cur.Date = strings.TrimSpace(strings.TrimPrefix(v, "date:"))
				state = 3
				if _, err := time.Parse("2006-01-02", cur.Date); err != nil || !dateRe().MatchString(cur.Date) {
					find(n, "entry.date", "%q is not a date YYYY-MM-DD", cur.Date)
				}
			default:
				if state != 0 {
					find(n, "entry.lines", "an entry's text is at most two lines, before its evidence and date")
					continue
				}
				cur.Text += "\n" + v
				state = 1
			}
		case strings.TrimSpace(l) == "":
			if cur != nil {
				finish(i)
			}
		default:
			if role != "" {
				finish(i)
				find(n, "line", "inside a role's section only entries (\"- \"), their indented lines and blank lines may stand")
			}
		}
	}
	finish(len(d.Lines))
	// Per entry: length, refusal; per role: duplicates and the bound.
	seen := map[string]int{}
	count := map[string]int{}
	for _, e := range d.Entries {
		for _, part := range append(strings.Split(e.Text, "\n"), e.Evidence) {
			if len([]rune(part)) > MaxLine {
				find(e.Line, "entry.length", "a line of the entry is longer than %d characters", MaxLine)
				break
			}
		}
		if r := Relaxes(e.Text); r != nil {
			find(e.Line, "invariant."+r.Name, "%s", r.Why)
		}
		key := e.Role + "\x00" + normalize(e.Text)
		if first, dup := seen[key]; dup {
			find(e.Line, "entry.duplicate", "the same entry as line %d of role %s", first, e.Role)
		} else {
			seen[key] = e.Line
		}
		count[e.Role]++
		if count[e.Role] == bound+1 {
			find(e.Line, "role.bound", "role %s holds more than %d entries", e.Role, bound)
		}
	}
	return d
}

// normalize folds a text for dedupe: lower case, letters and digits only,
// single spaces.
func normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// Path is the memory file of the working tree at top.
// MaxFile caps the memory file read.
const MaxFile = 4 << 20

func Path(top string) string { return filepath.Join(top, filepath.FromSlash(File)) }

// Read reads and checks the memory file of the working tree at top. ok is
// false when there is none.
func Read(top string, bound int) (d *Doc, ok bool, err error) {
	b, err := osproc.ReadRegular(Path(top), MaxFile)
	if errors.Is(err, os.ErrNotExist) {
		return Parse("", bound), false, nil
	}
	if err != nil {
		return nil, false, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", File, err)
	}
	return Parse(string(b), bound), true, nil
}

// For returns role's entries, then those of AllRoles.
func (d *Doc) For(role string) []Entry {
	var own, all []Entry
	for _, e := range d.Entries {
		switch e.Role {
		case role:
			own = append(own, e)
		case AllRoles:
			if role != AllRoles {
				all = append(all, e)
			}
		}
	}
	return append(own, all...)
}

// ForRole is role's memory for its init.md: each string one rendered
// entry (Entry.Render), the role's own first, then those every role gets.
// nil, nil when the working tree at repoDir has no memory file. A file
// that breaks its shape is an apperr.Schema error naming the first finding:
// a broken memory is not quietly half-read.
func ForRole(ctx context.Context, repoDir, role string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, ok, err := Read(repoDir, 0)
	if err != nil || !ok {
		return nil, err
	}
	if len(d.Findings) > 0 {
		return nil, apperr.New(apperr.Schema, "%s does not pass git ideate memory check (%d findings; first %s)", File, len(d.Findings), d.Findings[0])
	}
	var out []string
	for _, e := range d.For(role) {
		out = append(out, e.Render())
	}
	return out, nil
}

// Options tune Add.
type Options struct {
	Bound int              // entries per role; 0: DefaultBound
	Now   func() time.Time // the clock for a missing date; nil: time.Now
}

// Add writes e into the memory file of the working tree at top (creating
// it), after checking it (see the package doc, "Writing"). It returns the
// entry as written (redacted, dated) and its line.
func Add(ctx context.Context, top string, e Entry, o Options) (Entry, error) {
	e.Role = strings.TrimSpace(e.Role)
	if !ValidRole(e.Role) {
		return Entry{}, apperr.New(apperr.Schema, "%q is not a role name (lower-case letters, digits and dashes, e.g. green-worker, or %q for every role)", e.Role, AllRoles)
	}
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(strings.TrimSpace(e.Text), "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	switch {
	case len(lines) == 0:
		return Entry{}, apperr.New(apperr.Schema, "the entry's text is empty")
	case len(lines) > 2:
		return Entry{}, apperr.New(apperr.Schema, "an entry is one or two lines, not %d", len(lines))
	}
	e.Text = strings.Join(lines, "\n")
	e.Evidence = textfmt.OneLine(e.Evidence)
	if e.Evidence == "" {
		return Entry{}, apperr.New(apperr.Schema, "an entry needs its evidence (exec entry ids, record ids, commits)")
	}
	secretgate.Fields(&e.Text, &e.Evidence)
	for _, part := range append(strings.Split(e.Text, "\n"), e.Evidence) {
		if strings.HasPrefix(part, "- ") || strings.HasPrefix(part, "#") || strings.HasPrefix(part, "evidence:") || strings.HasPrefix(part, "date:") {
			return Entry{}, apperr.New(apperr.Schema, "a line of the entry may not start with %q", strings.Fields(part)[0])
		}
		if len([]rune(part)) > MaxLine {
			return Entry{}, apperr.New(apperr.Schema, "a line of the entry is longer than %d characters", MaxLine)
		}
	}
	if e.Date == "" {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		e.Date = now().UTC().Format("2006-01-02")
	} else if _, err := time.Parse("2006-01-02", e.Date); err != nil || !dateRe().MatchString(e.Date) {
		return Entry{}, apperr.New(apperr.Schema, "%q is not a date YYYY-MM-DD", e.Date)
	}
	if r := Relaxes(e.Text); r != nil {
		return Entry{}, apperr.New(Invariant, "memory never relaxes an invariant (%s): %s", r.Name, r.Why)
	}
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	path := Path(top)
	unlock, err := lockDir(ctx, filepath.Dir(path))
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	d, _, err := Read(top, o.Bound)
	if err != nil {
		return Entry{}, err
	}
	if len(d.Findings) > 0 {
		return Entry{}, apperr.New(apperr.Schema, "%s does not pass git ideate memory check (%d findings; first %s); fix it first", File, len(d.Findings), d.Findings[0])
	}
	bound := o.Bound
	if bound <= 0 {
		bound = DefaultBound
	}
	n := 0
	for _, x := range d.Entries {
		if x.Role != e.Role {
			continue
		}
		n++
		if normalize(x.Text) == normalize(e.Text) {
			return Entry{}, apperr.New(Duplicate, "role %s already holds this entry (line %d)", e.Role, x.Line)
		}
	}
	if n >= bound {
		return Entry{}, apperr.New(Full, "role %s holds its bound of %d entries; remove or merge one in %s first", e.Role, bound, File)
	}
	block := []string{"- " + strings.SplitN(e.Text, "\n", 2)[0]}
	if i := strings.IndexByte(e.Text, '\n'); i >= 0 {
		block = append(block, "  "+e.Text[i+1:])
	}
	block = append(block, "  evidence: "+e.Evidence, "  date: "+e.Date)
	lines = d.Lines
	if len(lines) == 0 {
		lines = []string{"# Memory", "", "Advisory lessons from earlier sprints, by role (`git ideate memory`). They never relax an invariant or a gate."}
	}
	if at, ok := d.ends[e.Role]; ok {
		if at > 0 && strings.TrimSpace(lines[at-1]) != "" {
			block = append([]string{""}, block...)
		}
		if at < len(lines) && strings.TrimSpace(lines[at]) != "" {
			block = append(block, "")
		}
		lines = append(append(append([]string{}, lines[:at]...), block...), lines[at:]...)
	} else {
		for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
			lines = lines[:len(lines)-1]
		}
		lines = append(append(lines, "", "## "+e.Role, ""), block...)
	}
	text := strings.Join(lines, "\n") + "\n"
	chk := Parse(text, bound)
	if len(chk.Findings) > 0 {
		return Entry{}, apperr.New(apperr.Schema, "the entry would break %s: %s", File, chk.Findings[0])
	}
	for _, x := range chk.Entries {
		if x.Role == e.Role && normalize(x.Text) == normalize(e.Text) {
			e.Line = x.Line
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return Entry{}, apperr.Wrap(apperr.Write, err, "cannot create %s: %v", filepath.Dir(path), err)
	}
	if err := atomicfile.Replace(path, []byte(text), atomicfile.Options{Sync: true}); err != nil {
		return Entry{}, apperr.Wrap(apperr.Write, err, "cannot write %s: %v", File, err)
	}
	return e, nil
}

// lockDir takes an exclusive flock on dir (created when missing), waiting
// while ctx allows.
func lockDir(ctx context.Context, dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot create %s: %v", dir, err)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot open %s: %v", dir, err)
	}
	if err := osproc.LockContext(ctx, f, osproc.Exclusive); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, apperr.Wrap(apperr.Write, err, "cannot lock %s: %v", dir, err)
	}
	return func() { osproc.Unlock(f); f.Close() }, nil
}

// Rule is one kind of invariant an entry may not relax.
type Rule struct {
	Name string
	Why  string
	re   func() *regexp.Regexp
}

// A few words in between: "skip the slow red tests".
const gap = `(?:\W+[\w'.-]+){0,3}?\W+`

var rules = []Rule{
	{Name: "suppression", Why: "it suppresses a finding (lint, type or test suppressions stay out of the work)",
		re: textfmt.Regexp(`(?i)(nolint|noqa|eslint-disable|@ts-ignore|@ts-nocheck|@ts-expect-error|pylint:\s*disable|#\[allow\(|@suppresswarnings|rubocop:\s*disable|istanbul\s+ignore|type:\s*ignore|--no-verify|\bsuppress(?:es|ed|ing)?\b)`)},
	{Name: "skip-tests", Why: "it skips or disables tests",
		re: textfmt.Regexp(`(?i)(\bt\.skip|\bskipnow\b|pytest\.mark\.(?:skip|xfail)|\bxfail\b|\b(?:it|test|describe)\.(?:skip|todo)\b|\bxit\(|@disabled\b|#\[ignore\]|\b(?:skip|skipping|disable|disabling|comment(?:ing)? out|delete|deleting|remove|removing)` + gap + `(?:tests?|assertions?|specs?)\b)`)},
	{Name: "gate", Why: "it relaxes a gate or a guard (gates decide from facts; memory is advisory)",
		re: textfmt.Regexp(`(?i)\b(?:skip|skipping|bypass|bypassing|disable|disabling|turn(?:ing)? off|switch(?:ing)? off|ignore|ignoring|override|overriding|circumvent|work(?:ing)? around|get(?:ting)? around|silence|weaken|relax|loosen|defeat|deactivate|evade|dodge)` + gap + `(?:gates?|guards?|hooks?|verdicts?|invariants?|checks?|linters?|lint|(?:red|green|final|scaffold|cost|plan|secret) gates?|secret scan|scope)\b`)},
	{Name: "self-pass", Why: "only a stored PASS verdict advances or ticks a task",
		re: textfmt.Regexp(`(?i)(\b(?:mark|close|complete|finish)(?:ed|ing|s)?\b[^.;]{0,40}\b(?:without|before|no)\b[^.;]{0,20}\b(?:pass|verdict|gate)\b|\bmark(?:ed|ing)?` + gap + `(?:as )?(?:pass|passed|passing|done|green|complete)\b|\btick` + gap + `(?:box|boxes|checkbox(?:es)?)\b|\b(?:report|claim)(?:ed|ing)?` + gap + `pass(?:ed)?\b)`)},
	{Name: "panic-stubs", Why: "the scaffolder's stubs panic until the green-worker implements them",
		re: textfmt.Regexp(`(?i)(\b(?:instead of|rather than|without|no|drop|dropping|remove|removing|replace|replacing|avoid)` + gap + `panic|\bstubs?` + gap + `(?:return|returns|implement|with real)\b|\bscaffold(?:er|ing)?` + gap + `(?:implement|write the (?:real|actual)|fill in)\b)`)},
	{Name: "human-planning", Why: "planning is the human's: agents do not write or approve the plan",
		re: textfmt.Regexp(`(?i)(\b(?:edit|editing|change|changing|modify|modifying|rewrite|rewriting|amend|amending|approve|approving|update|updating|replan|re-plan|adjust|adjusting)` + gap + `(?:the |a )?(?:plan|plans|plan-ready|stories|story|backlog|acceptance criteria|standards(?:\.md)?)\b|\bwithout` + gap + `(?:human|user|approval|review|sign-off)\b)`)},
	{Name: "tests-frozen", Why: "the tests are frozen after RED: the code changes to meet them, never the other way",
		re: textfmt.Regexp(`(?i)(\b(?:weaken|weakening|loosen|loosening|relax|relaxing|soften|softening|lower|lowering|dilute|diluting)` + gap + `(?:tests?|assertions?|asserts?|expectations?|thresholds?|coverage|checks?)\b` +
			`|\b(?:change|changing|edit|editing|modify|modifying|adjust|adjusting|rewrite|rewriting|update|updating|alter|altering|tweak|tweaking|fix|fixing|correct|correcting)` + gap + `(?:tests?|assertions?|asserts?|expectations?|expected values?|test files?)\b(?:\W+[\w'.-]+){0,4}?\W+(?:to match|to fit|to agree|when|whenever|if|so (?:that )?(?:it|they) pass|until)\b` +
			`|\b(?:edit|editing|change|changing|touch|touching|modify|modifying|rewrite|rewriting|unfreeze|unfreezing)` + gap + `frozen\b` +
			`|\b(?:hard-?cod(?:e|es|ed|ing)|special-?cas(?:e|es|ed|ing))\b[^.;]{0,40}\b(?:tests?|expected|inputs?|fixtures?)\b)`)},
	{Name: "scope", Why: "a task changes only the files of its scope",
		re: textfmt.Regexp(`(?i)((?:^|[.;!?]\s+)(?:[\w']+\s+){0,3}?(?:touch|edit|change|write|modify|create|commit|update|fix)\w*\b[^.;]{0,60}\b(?:outside|beyond|out of)\b[^.;]{0,20}\bscope\b` +
			`|\b(?:ignore|ignoring|widen|widening|extend|extending|expand|expanding|stretch|stretching)` + gap + `scope\b` +
			`|\b(?:commit|push|write|edit)\w*\b[^.;]{0,30}\b(?:directly|straight)\b[^.;]{0,10}\b(?:main|master|the main checkout)\b)`)},
	{Name: "tdd-order", Why: "RED comes first: tests fail before any production code, and no step is skipped",
		re: textfmt.Regexp(`(?i)(\b(?:skip|skipping|omit|omitting|bypass|bypassing|drop|dropping|leave out|leaving out|forgo)` + gap + `(?:red|green|scaffold|tdd|review|refactor)(?:\W+(?:step|phase|stage|pass))?\b` +
			`|\b(?:implement|write|code)\w*\b[^.;]{0,40}\bbefore\b[^.;]{0,20}\b(?:tests?|red)\b` +
			`|\btests?\b[^.;]{0,20}\b(?:later|afterwards)\b` +
			`|\b(?:re-?run|retry|retrying|rerunning)\b[^.;]{0,40}\buntil\b[^.;]{0,20}\bpass(?:es)?\b` +
			`|\breturn\w*\b[^.;]{0,20}\b(?:zero|nil|null|none|empty|0|a default)\b[^.;]{0,40}\b(?:pass|passes|green)\b)`)},
	{Name: "append-only", Why: "the record and the execution log are append-only",
		re: textfmt.Regexp(`(?i)\b(?:edit|rewrite|delete|remove|amend|truncate|reset|force-push|force push)` + gap + `(?:records?|exec(?:ution)? log|execution\.log|refs/ideate\S*|notes)\b`)},
}

// Relaxes returns the first rule text breaks, or nil when it relaxes no
// invariant the rules know.
func Relaxes(text string) *Rule {
	for i := range rules {
		if rules[i].re().MatchString(text) {
			return &rules[i]
		}
	}
	return nil
}
