package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/testrun"

	"github.com/ideate/git-ideate/internal/textfmt"
)

func (d *mdoc) doc() Doc {
	return Doc{Path: d.path, FrontMatter: d.front, HasFront: d.hasFront, CRLF: d.crlf}
}

// finding records a problem on the document.
func (d *mdoc) finding(line int, rule, msg string) {
	d.problems = append(d.problems, Finding{File: d.path, Line: line, Rule: rule, Message: msg, Severity: Error})
}

// ---- intake.md

func parseIntake(d *mdoc) *Intake {
	in := &Intake{Doc: d.doc()}
	for i, h := range d.heads {
		if k := intentKey(h.text); k != "" {
			if p := in.Intent.part(k); p.Line == 0 {
				*p = Part{Line: h.idx + 1, Text: d.sectionText(i)}
			}
		}
	}
	in.InScope = d.sectionOf(d.section("in scope"))
	in.OutOfScope = d.sectionOf(d.section("out of scope"))
	in.OpenQuestions = d.sectionOf(d.sectionPrefix("open questions"))
	return in
}

// ---- stories.md

var storyHeadRe = textfmt.Regexp(`^(S\d+-\d+)\b\s*(?:[—–:-]+\s*)?(.*)$`)
var labelRe = textfmt.Regexp(`^(\s*)(?:[-*+]\s+)?\*\*([^*]+?)\*\*\s*:?\s*(.*)$`)

func parseStories(d *mdoc) *Stories {
	st := &Stories{Doc: d.doc()}
	st.Goal = d.sectionOf(d.section("sprint goal"))
	demo := d.section("sprint demo")
	st.Demo = d.sectionOf(demo)
	st.DemoSteps = d.listItems(demo, true)
	done := d.section("definition of done")
	st.Done = d.sectionOf(done)
	st.DoneItems = d.listItems(done, false)
	st.OutOfScope = d.sectionOf(d.section("out of scope"))
	us := d.section("user stories")
	st.UserStories = d.sectionOf(us)
	st.Graph = d.sectionOf(d.section("story dependency graph", "dependency graph"))
	from, to := 0, len(d.heads)
	if us >= 0 {
		from = us + 1
		for to = from; to < len(d.heads) && d.heads[to].level > d.heads[us].level; to++ {
		}
	}
	for i := from; i < to; i++ {
		h := d.heads[i]
		m := storyHeadRe().FindStringSubmatch(h.text)
		if m == nil {
			continue
		}
		s := &Story{ID: m[1], Title: strings.TrimSpace(m[2]), Line: h.idx + 1}
		d.readLabels(h.idx+1, d.end(i), func(label string, line int, text string) {
			if k := intentKey(label); k != "" {
				if p := s.Intent.part(k); p.Line == 0 {
					*p = Part{Line: line, Text: text}
				}
				return
			}
			switch normHeading(label) {
			case "owned files", "owned file", "files":
				if s.OwnedLine == 0 {
					s.OwnedLine = line
					s.OwnedFiles = codeSpans(text)
				}
			case "definition of done", "done":
				s.Done = Part{Line: line, Text: text}
			case "demo", "sprint demo":
				s.Demo = Part{Line: line, Text: text}
			}
		})
		st.Stories = append(st.Stories, s)
	}
	return st
}

// readLabels calls fn for each `**Label:** text` line (bulleted or not)
// between lines from and to, with the text of its continuation lines.
func (d *mdoc) readLabels(from, to int, fn func(label string, line int, text string)) {
	for i := from; i < to; i++ {
		if d.fence[i] {
			continue
		}
		m := labelRe().FindStringSubmatch(d.lines[i])
		if m == nil {
			continue
		}
		indent := len(m[1])
		parts := []string{strings.TrimSpace(m[3])}
		j := i + 1
		for ; j < to && !d.fence[j]; j++ {
			l := d.lines[j]
			if strings.TrimSpace(l) == "" || labelRe().MatchString(l) || headRe().MatchString(l) {
				break
			}
			if bm := bulletRe().FindStringSubmatch(l); bm != nil && len(bm[1]) <= indent {
				break
			}
			parts = append(parts, strings.TrimSpace(l))
		}
		fn(strings.TrimSpace(m[2]), i+1, strings.TrimSpace(strings.Join(parts, " ")))
		i = j - 1
	}
}

// listItems returns the list items of section h (numbered only, or any).
func (d *mdoc) listItems(h int, numbered bool) []string {
	if h < 0 {
		return nil
	}
	var out []string
	for i, end := d.heads[h].idx+1, d.end(h); i < end; i++ {
		if d.fence[i] {
			continue
		}
		m := bulletRe().FindStringSubmatch(d.lines[i])
		if m == nil {
			if len(out) > 0 && strings.TrimSpace(d.lines[i]) != "" && strings.HasPrefix(d.lines[i], " ") {
				out[len(out)-1] += " " + strings.TrimSpace(d.lines[i])
			}
			continue
		}
		t := strings.TrimSpace(d.lines[i])
		if numbered && !(t[0] >= '0' && t[0] <= '9') {
			continue
		}
		if m[1] != "" {
			continue // nested item
		}
		out = append(out, strings.TrimSpace(m[2]))
	}
	return out
}

// ---- standards.md

func parseStandards(d *mdoc) *Standards {
	s := &Standards{Doc: d.doc(), ShimMarker: "agentic:shim"}
	s.Stack = d.sectionOf(d.section("detected stack", "stack"))
	if h := d.sectionContains("active rules"); h >= 0 {
		s.RulesLine = d.heads[h].idx + 1
		for i, end := d.heads[h].idx+1, d.nextHead(d.heads[h].idx); i < end; i++ {
			if d.fence[i] {
				continue
			}
			if m := bulletRe().FindStringSubmatch(d.lines[i]); m != nil && m[1] == "" && !strings.HasPrefix(strings.TrimSpace(d.lines[i]), "1") {
				s.Rules = append(s.Rules, Rule{Line: i + 1, Text: strings.TrimSpace(m[2])})
			} else if len(s.Rules) > 0 && strings.HasPrefix(d.lines[i], " ") && strings.TrimSpace(d.lines[i]) != "" {
				s.Rules[len(s.Rules)-1].Text += " " + strings.TrimSpace(d.lines[i])
			}
		}
	}
	s.Matrix = d.gateMatrix()
	s.Suppressions = d.patterns(d.section("suppression patterns", "suppressions"))
	s.StubMarkers = d.patterns(d.section("stub markers", "stub marker"))
	if len(s.StubMarkers) == 0 {
		s.StubMarkers = []Pattern{{Text: "SUB-AGENT-TODO"}}
	}
	if p := d.patterns(d.section("shim marker", "shim markers")); len(p) > 0 {
		s.ShimMarker = p[0].Text
	}
	if h := d.section("test runners", "runners", "languages"); h >= 0 {
		end := d.end(h)
		for j := h + 1; j < len(d.heads) && d.heads[j].idx < end; j++ {
			if d.heads[j].level != d.heads[h].level+1 {
				continue
			}
			s.Runners = append(s.Runners, d.runner(j))
		}
	}
	s.Cost = d.costRules()
	for _, r := range s.Runners {
		for _, c := range r.Costly {
			if s.Cost == nil {
				s.Cost = &CostRules{Line: r.Line}
			}
			s.Cost.Costly = append(s.Cost.Costly, Pattern{Line: r.keyLines["costly"], Text: c})
		}
	}
	return s
}

var costLineRe = textfmt.Regexp(`^\s*(?:[-*+]\s+)?([A-Za-z][A-Za-z _-]*?)\s*:\s*(.*)$`)

// costRules reads the `## Cost rules` (or `Bounded cost`) section.
func (d *mdoc) costRules() *CostRules {
	h := d.sectionContains("cost rules", "bounded cost", "bounded-cost")
	if h < 0 {
		return nil
	}
	c := &CostRules{Line: d.heads[h].idx + 1}
	for i, end := d.heads[h].idx+1, d.end(h); i < end; i++ {
		l := d.lines[i]
		t := strings.TrimSpace(l)
		if t == "" || fenceRe().MatchString(l) || strings.HasPrefix(t, "#") {
			continue
		}
		if !d.fence[i] && bulletRe().FindStringSubmatch(l) == nil {
			continue // prose
		}
		m := costLineRe().FindStringSubmatch(l)
		bad := func(msg string) {
			c.Problems = append(c.Problems, fmt.Sprintf("%s line %d: %s", d.path, i+1, msg))
			d.problems = append(d.problems, Finding{File: d.path, Line: i + 1, Rule: RuleCostRule, Message: msg, Severity: Error})
		}
		if m == nil {
			bad("a cost rule is `costly: <command>`, `allow: <command>` or `max_attempts: <n>`")
			continue
		}
		val := strings.TrimSpace(m[2])
		if sp := codeSpans(val); len(sp) > 0 {
			val = sp[0]
		}
		switch strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(m[1]))) {
		case "costly", "deny":
			if val == "" {
				bad("costly names no command")
				continue
			}
			c.Costly = append(c.Costly, Pattern{Line: i + 1, Text: val})
		case "allow", "cheap":
			if val == "" {
				bad("allow names no command")
				continue
			}
			c.Allow = append(c.Allow, Pattern{Line: i + 1, Text: val})
		case "max_attempts", "attempts", "retries":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 99 {
				bad("max_attempts must be a whole number from 1 to 99, not " + strconv.Quote(val))
				continue
			}
			c.MaxAttempts = n
		default:
			bad("unknown cost rule " + strconv.Quote(m[1]) + " (costly, allow, max_attempts)")
		}
	}
	return c
}

func (d *mdoc) sectionContains(subs ...string) int {
	for i, h := range d.heads {
		n := h.norm
		for _, sub := range subs {
			if strings.Contains(n, sub) {
				return i
			}
		}
	}
	return -1
}

// gateMatrix reads the first `Gate matrix` / `Cross-cutting gates`
// section (any level, case-insensitive, C16): the lines of its first
// fenced block are the commands (blank and # lines skipped).
func (d *mdoc) gateMatrix() *GateMatrix {
	h := d.sectionContains("gate matrix", "cross-cutting gates", "cross cutting gates")
	if h < 0 {
		return nil
	}
	m := &GateMatrix{Heading: d.heads[h].text, Line: d.heads[h].idx + 1}
	end := d.end(h)
	for _, b := range d.blocks {
		if b.open <= d.heads[h].idx || b.open >= end {
			continue
		}
		for j := b.open + 1; j < b.close; j++ {
			t := strings.TrimSpace(d.lines[j])
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			m.Commands = append(m.Commands, Command{Line: j + 1, Text: t})
		}
		break
	}
	for _, t := range d.tables(d.heads[h].idx+1, end) {
		ci := colIndex(t.header, "command")
		if ci < 0 {
			continue
		}
		ti, si := colIndex(t.header, "threshold"), colIndex(t.header, "source")
		for _, r := range t.rows {
			row := MatrixRow{Line: r.idx + 1, Gate: cell(r.cells, 0), Command: cell(r.cells, ci), Threshold: cell(r.cells, ti), Source: cell(r.cells, si)}
			m.Rows = append(m.Rows, row)
		}
		break
	}
	return m
}

// colIndex finds the first header cell whose normalized text starts with
// prefix.
func colIndex(header []string, prefix string) int {
	for i, c := range header {
		if strings.HasPrefix(normHeading(c), prefix) {
			return i
		}
	}
	return -1
}

func cell(cells []string, i int) string {
	if i < 0 || i >= len(cells) {
		return ""
	}
	return cells[i]
}

// patterns returns the patterns declared in section h: each non-blank
// line of a fenced block, the code spans of bullet items, and the code
// spans of its prose. In prose that introduces a list with a colon ("…
// appear in a `.go` file: `t.Skip(`, …") only the spans after the first
// colon outside a code span count.
func (d *mdoc) patterns(h int) []Pattern {
	if h < 0 {
		return nil
	}
	from, to := d.heads[h].idx+1, d.end(h)
	colonSeen := true
	for i := from; i < to; i++ {
		if !d.fence[i] && bulletRe().FindStringSubmatch(d.lines[i]) == nil && colonOutsideSpans(d.lines[i]) >= 0 {
			colonSeen = false
			break
		}
	}
	var out []Pattern
	for i := from; i < to; i++ {
		l := d.lines[i]
		if d.fence[i] {
			if t := strings.TrimSpace(l); t != "" && !fenceRe().MatchString(l) {
				out = append(out, Pattern{Line: i + 1, Text: t})
			}
			continue
		}
		if bulletRe().MatchString(l) {
			for _, c := range codeSpans(l) {
				out = append(out, Pattern{Line: i + 1, Text: c})
			}
			continue
		}
		if !colonSeen {
			k := colonOutsideSpans(l)
			if k < 0 {
				continue
			}
			colonSeen = true
			l = l[k+1:]
		}
		for _, c := range codeSpans(l) {
			out = append(out, Pattern{Line: i + 1, Text: c})
		}
	}
	return out
}

// colonOutsideSpans returns the index of the first ':' of l that is not
// inside a code span (or its backticks), or -1.
func colonOutsideSpans(l string) int {
	c := strings.IndexByte(l, ':')
	if c < 0 {
		return -1
	}
	spans := spanRanges(l)
	j := 0 // spans are in order; skip those ending before i
	for i := c; i < len(l); i++ {
		if l[i] != ':' {
			continue
		}
		for j < len(spans) && spans[j][1] <= i {
			j++
		}
		if j == len(spans) || i < spans[j][0] {
			return i
		}
	}
	return -1
}

var keyLineRe = textfmt.Regexp(`^\s*(?:[-*+]\s+)?(?:\*\*)?([A-Za-z][A-Za-z _-]*?)(?:\*\*)?\s*:(?:\*\*)?\s*(.*)$`)

// runner reads one `### <language>` subsection of `## Test runners`.
func (d *mdoc) runner(h int) *Runner {
	lang := strings.ToLower(strings.TrimSpace(d.heads[h].text))
	lang = strings.Trim(strings.Fields(lang + " x")[0], "`")
	r := &Runner{Language: lang, Line: d.heads[h].idx + 1, keyLines: map[string]int{}}
	for i, end := d.heads[h].idx+1, d.end(h); i < end; i++ {
		if d.fence[i] {
			continue
		}
		m := keyLineRe().FindStringSubmatch(d.lines[i])
		if m == nil {
			continue
		}
		key := strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(m[1])))
		val := strings.TrimSpace(m[2])
		spans := codeSpans(val)
		scalar := val
		if len(spans) > 0 {
			scalar = spans[0]
		}
		list := spans
		if len(list) == 0 {
			list = splitList(val)
		}
		r.keyLines[key] = i + 1
		switch key {
		case "extensions":
			r.Extensions = list
		case "test_files", "test_globs":
			r.TestGlobs = list
		case "compile", "build":
			r.Compile = scalar
		case "run":
			r.Run = scalar
		case "format", "output_format":
			r.Format = strings.ToLower(scalar)
		case "dialect":
			r.Dialect = strings.ToLower(scalar)
		case "test_id", "id":
			r.TestID = scalar
		case "isolate_on_crash":
			r.IsolateOnCrash = isYes(scalar)
		case "symbols":
			r.Symbols = strings.ToLower(scalar)
		case "shim_marker":
			r.ShimMarker = scalar
		case "stub_markers":
			r.StubMarkers = list
		case "assertion_markers":
			r.AssertionMarkers = list
		case "suppression_patterns", "suppressions":
			r.Suppressions = list
		case "costly", "costly_commands":
			r.Costly = list
		default:
			d.problems = append(d.problems, Finding{File: d.path, Line: i + 1, Rule: RuleRunnerKey, Message: "runner " + lang + " has an unknown key " + strconv.Quote(m[1]), Severity: Warning})
		}
	}
	// Every reader of the plan sees a dialect under its canonical name
	// (nextest is cargo-nextest); one the registry refuses stays as
	// written for check to report.
	if c, err := testrun.CheckDialect(testrun.Format(r.Format), testrun.Dialect(r.Dialect)); err == nil {
		r.Dialect = string(c)
	}
	return r
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func isYes(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "true", "on", "1", "required":
		return true
	}
	return false
}

// ---- sprint plan.md

var waveEntryRe = textfmt.Regexp(`(S\d+-\d+)(?:\s*/\s*T(\d+)|\s*\(([^)]*)\))?`)
var taskNumRe = textfmt.Regexp(`\bT(\d+)\b`)
var refRe = textfmt.Regexp(`S\d+-\d+(?:/T\d+)?`)
var graphLineRe = textfmt.Regexp(`^\s*(?:(S\d+-\d+)\s*:\s*)?((?:S\d+-\d+(?:/T\d+)?|T\d+)(?:\s*->\s*(?:S\d+-\d+(?:/T\d+)?|T\d+))+)\s*$`)

func parseSprintPlan(d *mdoc) *SprintPlan {
	p := &SprintPlan{Doc: d.doc()}
	p.Stage, _ = d.front.Get("stage")
	p.Goal = d.sectionOf(d.section("sprint goal"))
	p.Critical = d.sectionOf(d.section("critical path"))
	wh := d.sectionPrefix("waves")
	from, to := 0, len(d.lines)
	if wh >= 0 {
		p.WavesLine = d.heads[wh].idx + 1
		from, to = d.heads[wh].idx+1, d.end(wh)
	}
	for _, t := range d.tables(from, to) {
		wi, si := colIndex(t.header, "wave"), colIndex(t.header, "stories")
		if wi != 0 || si < 0 {
			continue
		}
		if p.WavesLine == 0 {
			p.WavesLine = t.headIdx + 1
		}
		swi := colIndex(t.header, "starts")
		for _, r := range t.rows {
			w := &Wave{Line: r.idx + 1, StartsWhen: cell(r.cells, swi)}
			if m := digitsRe().FindString(cell(r.cells, 0)); m != "" {
				w.Number, _ = strconv.Atoi(m)
			} else {
				d.finding(r.idx+1, RuleWaveNumber, "wave row has no wave number: "+strconv.Quote(cell(r.cells, 0)))
				continue
			}
			for _, m := range waveEntryRe().FindAllStringSubmatch(cell(r.cells, si), -1) {
				e := WaveEntry{Story: m[1]}
				if m[2] != "" {
					n, _ := strconv.Atoi(m[2])
					e.Tasks = []int{n}
				} else if m[3] != "" {
					for _, tm := range taskNumRe().FindAllStringSubmatch(m[3], -1) {
						n, _ := strconv.Atoi(tm[1])
						e.Tasks = append(e.Tasks, n)
					}
				}
				w.Entries = append(w.Entries, e)
			}
			w.After = refRe().FindAllString(w.StartsWhen, -1)
			p.Waves = append(p.Waves, w)
		}
		break
	}
	if gh := d.sectionPrefix("dependency graph", "task dependency graph", "story dependency graph"); gh >= 0 {
		for i, end := d.heads[gh].idx+1, d.end(gh); i < end; i++ {
			if !d.fence[i] {
				continue
			}
			m := graphLineRe().FindStringSubmatch(d.lines[i])
			if m == nil {
				continue
			}
			nodes := arrowRe().Split(strings.TrimSpace(m[2]), -1)
			ok := true
			for k, n := range nodes {
				if strings.HasPrefix(n, "T") {
					if m[1] == "" {
						ok = false
						break
					}
					nodes[k] = m[1] + "/" + n
				}
				nodes[k] = canonRef(nodes[k])
			}
			if !ok {
				continue
			}
			for k := 1; k < len(nodes); k++ {
				p.Edges = append(p.Edges, Edge{From: nodes[k-1], To: nodes[k], File: d.path, Line: i + 1})
			}
		}
	}
	if oh := d.sectionContains("ownership", "parallelism"); oh >= 0 {
		for _, t := range d.tables(d.heads[oh].idx+1, d.end(oh)) {
			si, fi := colIndex(t.header, "story"), colIndexContains(t.header, "owned", "files")
			if si < 0 || fi < 0 {
				continue
			}
			wi := colIndex(t.header, "wave")
			for _, r := range t.rows {
				id := storyIDRe().FindString(cell(r.cells, si))
				if id == "" {
					continue
				}
				o := Ownership{Story: id, Files: codeSpans(cell(r.cells, fi)), Line: r.idx + 1}
				o.Wave, _ = strconv.Atoi(digitsRe().FindString(cell(r.cells, wi)))
				p.Ownership = append(p.Ownership, o)
			}
			break
		}
	}
	p.Gates = d.gateMatrix()
	return p
}

var storyIDRe = textfmt.Regexp(`S\d+-\d+`)
var digitsRe = textfmt.Regexp(`\d+`)
var arrowRe = textfmt.Regexp(`\s*->\s*`)
var depSplitRe = textfmt.Regexp(`,|;|\band\b`)
var parenRe = textfmt.Regexp(`\([^)]*\)`)

func colIndexContains(header []string, subs ...string) int {
	for _, sub := range subs {
		for i, c := range header {
			if strings.Contains(normHeading(c), sub) {
				return i
			}
		}
	}
	return -1
}

// canonRef writes a reference as `S1-01/T2` (task numbers without
// leading zeros) or a bare story id.
func canonRef(r string) string {
	story, task, ok := strings.Cut(r, "/")
	if !ok {
		return story
	}
	n, err := strconv.Atoi(strings.TrimPrefix(task, "T"))
	if err != nil {
		return r
	}
	return story + "/T" + strconv.Itoa(n)
}

// ---- tasks.md

var taskHeadRe = textfmt.Regexp(`^T(\d+)\b\s*(?:[—–:-]+\s*)?(.*)$`)
var metaRe = textfmt.Regexp(`(?i)^\s*(?:[-*+]\s+)?(?:\*\*)?(files|symbols|uses|depends on|tests|budget|split_from)(?:\*\*)?\s*:(?:\*\*)?\s*(.*)$`)
var depRefRe = textfmt.Regexp(`\b(S\d+-\d+)(?:\s*[/ -]\s*T(\d+)\b)?|\bT(\d+)\b`)

// taskSections returns the level-2 task headings: index into heads and
// the task number.
func (d *mdoc) taskHead(h int) (int, string, bool) {
	if d.heads[h].level != 2 {
		return 0, "", false
	}
	m := taskHeadRe().FindStringSubmatch(d.heads[h].text)
	if m == nil {
		return 0, "", false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return n, strings.TrimSpace(m[2]), true
}

func parseTasks(d *mdoc, story string) *TaskList {
	tl := &TaskList{Doc: d.doc()}
	for h := range d.heads {
		n, title, ok := d.taskHead(h)
		if !ok {
			continue
		}
		t := &Task{ID: "T" + strconv.Itoa(n), Num: n, Title: title, Line: d.heads[h].idx + 1}
		end := d.end(h)
		seen := map[string]int{}
		for i := d.heads[h].idx + 1; i < end; i++ {
			if d.fence[i] {
				continue
			}
			m := metaRe().FindStringSubmatch(d.lines[i])
			if m == nil {
				continue
			}
			val := strings.TrimSpace(m[2])
			j := i + 1
			for ; j < end && !d.fence[j]; j++ {
				l := d.lines[j]
				if strings.TrimSpace(l) == "" || metaRe().MatchString(l) || headRe().MatchString(l) {
					break
				}
				if !(strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "`")) {
					break
				}
				val += " " + strings.TrimSpace(l)
			}
			line := i + 1
			i = j - 1
			key := strings.ToLower(m[1])
			if first, dup := seen[key]; dup {
				// A second line would silently override the first: the
				// writer meant one of them, and only they know which.
				t.dupMeta = append(t.dupMeta, dupLine{key: m[1], line: line, first: first})
				continue
			}
			seen[key] = line
			switch key {
			case "files":
				t.FilesLine = line
				t.Files = listValue(val)
			case "symbols":
				t.SymbolsLine = line
				t.Symbols = listValue(val)
			case "uses":
				t.Uses = listValue(val)
			case "depends on":
				t.DependsLine = line
				t.DependsOn, t.badDeps = parseDepends(val, story, line)
			case "tests":
				t.GateOnly = strings.HasPrefix(strings.ToLower(val), "none")
			case "budget":
				t.Budget = val
			case "split_from":
				t.SplitFrom = val
			}
		}
		tl.Tasks = append(tl.Tasks, t)
	}
	return tl
}

// listValue takes the code spans of v, or its comma-separated words.
func listValue(v string) []string {
	if spans := codeSpans(v); len(spans) > 0 {
		var out []string
		for _, s := range spans {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	var out []string
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		out = append(out, p)
	}
	return out
}

// parseDepends reads `Depends on:` (C4, C7): `none`, or references
// `S1-01/T2`, `S1-01-T2`, `S1-01 T2`, a bare `T2` of the same story, or
// a story id. A piece naming no reference is returned as bad.
func parseDepends(v, story string, line int) ([]string, []badRef) {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "none") || strings.TrimSpace(v) == "" || strings.TrimSpace(v) == "-" || strings.TrimSpace(v) == "—" {
		return nil, nil
	}
	var refs []string
	var bad []badRef
	for _, piece := range depSplitRe().Split(v, -1) {
		piece = strings.TrimSpace(stripParens(piece))
		piece = strings.Trim(piece, "` ")
		if piece == "" {
			continue
		}
		ms := depRefRe().FindAllStringSubmatch(piece, -1)
		if len(ms) == 0 {
			bad = append(bad, badRef{text: piece, line: line})
			continue
		}
		for _, m := range ms {
			switch {
			case m[1] != "" && m[2] != "":
				refs = append(refs, canonRef(m[1]+"/T"+m[2]))
			case m[1] != "":
				refs = append(refs, m[1])
			default:
				refs = append(refs, canonRef(story+"/T"+m[3]))
			}
		}
	}
	return refs, bad
}

func stripParens(s string) string {
	if !strings.Contains(s, "(") {
		return s
	}
	return parenRe().ReplaceAllString(s, "")
}

// ---- validate.md

func parseRubric(d *mdoc) *Rubric {
	rb := &Rubric{Doc: d.doc()}
	for h := range d.heads {
		if d.heads[h].level != 2 {
			continue
		}
		sec := &RubricSection{Title: d.heads[h].text, Line: d.heads[h].idx + 1, Kind: "other"}
		switch n := d.heads[h].norm; {
		case n == "pre-flight" || n == "preflight" || n == "pre flight":
			sec.Kind = "preflight"
		case strings.HasPrefix(n, "final sign-off") || strings.HasPrefix(n, "final signoff") || strings.HasPrefix(n, "final sign off"):
			sec.Kind = "final"
		default:
			if num, _, ok := d.taskHead(h); ok {
				sec.Kind, sec.Task = "task", num
			}
		}
		if sec.Kind == "other" {
			rb.Sections = append(rb.Sections, sec)
			continue
		}
		end := d.end(h)
		tables := d.tables(d.heads[h].idx+1, end)
		for _, t := range tables {
			if !rubricHeader(t.header) {
				d.finding(t.headIdx+1, RuleValidateHeader, "table header is not | Check | Command | Expected (PASS) | FAIL cites |")
				continue
			}
			for _, r := range t.rows {
				if row, msg := rubricRow(r); msg != "" {
					d.finding(r.idx+1, RuleValidateRow, msg)
				} else {
					sec.Rows = append(sec.Rows, row)
				}
			}
		}
		// A table line that belongs to no table (no delimiter row).
		inTable := map[int]bool{}
		for _, t := range tables {
			inTable[t.headIdx], inTable[t.headIdx+1] = true, true
			for _, r := range t.rows {
				inTable[r.idx] = true
			}
		}
		for i := d.heads[h].idx + 1; i < end; i++ {
			if !d.fence[i] && isTableLine(d.lines[i]) && !inTable[i] {
				d.finding(i+1, RuleValidateRow, "table row outside a table with a header and delimiter row")
			}
		}
		rb.Sections = append(rb.Sections, sec)
	}
	return rb
}

func rubricHeader(h []string) bool {
	if len(h) != 4 {
		return false
	}
	return normHeading(h[0]) == "check" && normHeading(h[1]) == "command" && strings.HasPrefix(normHeading(h[2]), "expected") && strings.Contains(normHeading(h[3]), "fail")
}

func rubricRow(r tableRow) (Row, string) {
	if len(r.cells) != 4 {
		return Row{}, "row has " + strconv.Itoa(len(r.cells)) + " cells, want 4 (Check | Command | Expected | FAIL cites); write a | inside a cell as \\|"
	}
	row := Row{Line: r.idx + 1, Check: r.cells[0], Expected: r.cells[2], Cites: r.cells[3]}
	if row.Check == "" {
		return Row{}, "row has an empty Check cell"
	}
	cmd, ok := singleCodeSpan(r.cells[1])
	if !ok || strings.TrimSpace(cmd) == "" {
		return Row{}, "Command cell is not one code span holding a command"
	}
	row.Command = cmd
	if row.Expected == "" {
		return Row{}, "row has an empty Expected cell"
	}
	if lit, ok := singleCodeSpan(row.Expected); ok {
		row.Expected, row.Literal = lit, true
	}
	if row.Cites == "" {
		return Row{}, "row has an empty FAIL cites cell"
	}
	return row, ""
}

// ---- story plan.md (tests only) and plan-ready.md

var testIDRe = textfmt.Regexp(`^([^\s:` + "`" + `][^\s` + "`" + `]*?)::([A-Za-z_][A-Za-z0-9_]*)(?:/([^\s` + "`" + `]+))?$`)
var countRe = textfmt.Regexp(`(?i)^\s*test count:\s*(\d+)`)

func parseTestPlan(d *mdoc) *TestPlan {
	tp := &TestPlan{Doc: d.doc()}
	var cur *TestSection
	hi := 0
	for i := d.body; i < len(d.lines); i++ {
		for hi < len(d.heads) && d.heads[hi].idx == i {
			if d.heads[hi].level == 2 {
				cur = nil
				if n, title, ok := d.taskHead(hi); ok {
					cur = &TestSection{Task: n, Title: title, Line: i + 1}
					tp.Sections = append(tp.Sections, cur)
				}
			} else if d.heads[hi].level == 1 {
				cur = nil
			}
			hi++
		}
		if d.fence[i] {
			continue
		}
		lead := strings.TrimLeft(d.lines[i], " \t")
		if lead == "" {
			continue
		}
		if lead[0] != '-' && lead[0] != '*' && lead[0] != '+' {
			if tp.CountLine == 0 && (lead[0] == 'T' || lead[0] == 't') {
				if m := countRe().FindStringSubmatch(d.lines[i]); m != nil {
					tp.Count, _ = strconv.Atoi(m[1])
					tp.CountLine = i + 1
				}
			}
			continue
		}
		if m := countRe().FindStringSubmatch(d.lines[i]); m != nil && tp.CountLine == 0 {
			tp.Count, _ = strconv.Atoi(m[1])
			tp.CountLine = i + 1
			continue
		}
		m := checkboxRe().FindStringSubmatch(d.lines[i])
		if m == nil {
			continue
		}
		t := parseTestBullet(m[3], i+1)
		t.Checked = m[2] != " "
		if cur == nil {
			tp.Stray = append(tp.Stray, t)
		} else {
			cur.Tests = append(cur.Tests, t)
		}
	}
	return tp
}

// parseTestBullet reads “ `path::Name` — description “.
func parseTestBullet(rest string, line int) *TestDecl {
	t := &TestDecl{Line: line}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "`") {
		if c, next, ok := spanAt(rest, 0); ok {
			t.ID = strings.TrimSpace(c)
			rest = rest[next:]
		}
	}
	if m := testIDRe().FindStringSubmatch(t.ID); m != nil {
		t.Path, t.Name, t.Sub, t.wellFormed = m[1], m[2], m[3], true
	}
	desc := strings.TrimLeft(rest, " \t—–-:")
	t.Desc = strings.TrimSpace(desc)
	if low := strings.ToLower(t.Desc); strings.HasPrefix(low, "pass-on-red") {
		t.PassOnRed = true
		after := strings.TrimSpace(t.Desc[len("pass-on-red"):])
		if strings.HasPrefix(after, "(") {
			if j := matchingParen(after); j > 0 {
				t.Reason = after[1:j]
			}
		}
	}
	return t
}

func matchingParen(s string) int {
	depth := 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func parsePlanReady(d *mdoc) *PlanReady {
	pr := &PlanReady{Doc: d.doc()}
	pr.FromRedAt, _ = d.front.Get("from_red_at")
	task := 0
	hi := 0
	for i := d.body; i < len(d.lines); i++ {
		for hi < len(d.heads) && d.heads[hi].idx == i {
			if d.heads[hi].level <= 2 {
				task = 0
				if n, _, ok := d.taskHead(hi); ok {
					task = n
				}
			}
			hi++
		}
		if d.fence[i] {
			continue
		}
		m := checkboxRe().FindStringSubmatch(d.lines[i])
		if m == nil {
			continue
		}
		t := parseTestBullet(m[3], i+1)
		b := &ReadyBox{Task: task, Line: i + 1, Checked: m[2] != " ", Note: t.Desc}
		if t.wellFormed {
			b.TestID = t.ID
		}
		pr.Boxes = append(pr.Boxes, b)
	}
	return pr
}
