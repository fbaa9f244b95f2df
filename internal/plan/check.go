package plan

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/testrun"

	"github.com/ideate/git-ideate/internal/textfmt"
)

// Check validates the sprint's structure and returns every finding,
// sorted by file, line and rule. It makes no judgement of content: every
// rule is a fact about the files (a part present, a reference resolved, a
// graph acyclic). The plan passes when no finding is an Error (Passed).
// Check does not modify s and is safe to call concurrently.
func Check(s *Sprint) []Finding {
	c := &checker{s: s, stories: map[string]*Story{}, dirs: map[string][]*StoryDir{}, tasks: map[string][]*Task{}}
	c.out = append(c.out, s.findings...)
	c.index()
	c.intake()
	c.standards()
	c.storiesFile()
	c.storyDirs()
	c.taskChecks()
	c.testChecks()
	c.validateChecks()
	c.sprintPlan()
	c.waves()
	c.dependencies()
	c.fileOwnership()
	c.planReady()
	c.runnerCoverage()
	c.templates()
	return sortFindings(c.out)
}

// Counts tells how many findings are errors and how many warnings.
func Counts(findings []Finding) (errors, warnings int) {
	for _, f := range findings {
		if f.Severity == Error {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}

// Passed reports whether findings hold no Error.
func Passed(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == Error {
			return false
		}
	}
	return true
}

func sortFindings(in []Finding) []Finding {
	sort.SliceStable(in, func(i, j int) bool {
		a, b := in[i], in[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
	out := in[:0]
	for i, f := range in {
		if i > 0 && f == in[i-1] {
			continue
		}
		out = append(out, f)
	}
	return out
}

type checker struct {
	s        *Sprint
	out      []Finding
	stories  map[string]*Story      // valid story ids of stories.md
	order    []string               // story ids in stories.md order
	dirs     map[string][]*StoryDir // story id → its dirs
	tasks    map[string][]*Task     // story id → tasks (from its one dir)
	dir      map[string]*StoryDir   // story id → its dir, when exactly one
	waveOf   map[string]int         // task ref (or story id without tasks) → wave
	declared map[string]map[int]int // story → task num → number of declared tests
	edges    []depEdge              // the declared dependencies, resolved to units
}

func (c *checker) add(file string, line int, rule, format string, args ...any) {
	c.out = append(c.out, Finding{File: file, Line: line, Rule: rule, Message: fmt.Sprintf(format, args...), Severity: Error})
}

func (c *checker) warn(file string, line int, rule, format string, args ...any) {
	c.out = append(c.out, Finding{File: file, Line: line, Rule: rule, Message: fmt.Sprintf(format, args...), Severity: Warning})
}

func (c *checker) path(name string) string { return path.Join(c.s.Dir, name) }

var validStoryRe = textfmt.Regexp(`^S(\d+)-(\d{2,})$`)

func (c *checker) index() {
	c.dir = map[string]*StoryDir{}
	c.declared = map[string]map[int]int{}
	if st := c.s.Stories; st != nil {
		for _, s := range st.Stories {
			if validStoryRe().MatchString(s.ID) && c.stories[s.ID] == nil {
				c.stories[s.ID] = s
				c.order = append(c.order, s.ID)
			}
		}
	}
	for _, d := range c.s.StoryDirs {
		if d.Story != "" {
			c.dirs[d.Story] = append(c.dirs[d.Story], d)
		}
	}
	for id, ds := range c.dirs {
		if len(ds) != 1 {
			continue
		}
		c.dir[id] = ds[0]
		if ds[0].Tasks != nil {
			c.tasks[id] = ds[0].Tasks.Tasks
		}
		if tp := ds[0].TestPlan; tp != nil {
			m := map[int]int{}
			for _, sec := range tp.Sections {
				m[sec.Task] += len(sec.Tests)
			}
			c.declared[id] = m
		}
	}
}

// ---- intake.md

func (c *checker) intake() {
	in := c.s.Intake
	if in == nil {
		c.add(c.path("intake.md"), 0, RuleIntakeMissing, "intake.md is missing (looked in %s and %s)", c.s.Dir, path.Dir(c.s.Dir))
		return
	}
	c.intent(in.Path, 1, "intake", "intake.md", in.Intent)
}

// intent reports each of the five parts that is absent or empty.
func (c *checker) intent(file string, line int, prefix, what string, in Intent) {
	for _, p := range intentParts {
		part := in.part(p.key)
		switch {
		case part.Line == 0:
			c.add(file, line, intentRule(prefix, p.key), "%s has no %s", what, p.label)
		case strings.TrimSpace(part.Text) == "":
			c.add(file, part.Line, intentRule(prefix, p.key), "%s has an empty %s", what, p.label)
		}
	}
}

// ---- standards.md

var citeRe = textfmt.Regexp(`(?i)\.md\b|\bR\d+\b|rules/|docs/|§|https?://|\.(rs|toml|go|mod|json|ya?ml|cfg|ini|lock)\b|CLAUDE`)

var knownFormats = map[string]bool{"go-test-json": true, "junit-xml": true, "jest-json": true}

func (c *checker) standards() {
	st := c.s.Standards
	if st == nil {
		c.add(c.path("standards.md"), 0, RuleStandardsMissing, "standards.md is missing (looked in %s and %s)", c.s.Dir, path.Dir(c.s.Dir))
		return
	}
	switch {
	case st.Matrix == nil:
		c.add(st.Path, 1, RuleNoGateMatrix, "standards.md has no Gate matrix (or Cross-cutting gates) section")
	case len(st.Matrix.Commands) == 0:
		c.add(st.Path, st.Matrix.Line, RuleEmptyGateMatrix, "the %s section has no fenced block of commands", st.Matrix.Heading)
	}
	for _, r := range st.Rules {
		if !citeRe().MatchString(r.Text) {
			c.add(st.Path, r.Line, RuleUncitedRule, "active rule cites no source (a source is a file such as CONTRIBUTING.md or go.mod, a rule id such as R3, a docs/ or rules/ path, a § section or a URL): %s", clip(r.Text))
		}
	}
	for _, r := range st.Runners {
		if r.Run == "" {
			c.add(st.Path, r.Line, RuleRunnerRun, "runner %s declares no Run command", r.Language)
		}
		line := r.Line
		if l := r.keyLines["format"]; l > 0 {
			line = l
		}
		switch {
		case r.Format == "":
			c.add(st.Path, line, RuleRunnerFormat, "runner %s declares no Format (go-test-json, junit-xml or jest-json)", r.Language)
		case !knownFormats[r.Format]:
			c.add(st.Path, line, RuleRunnerFormat, "runner %s has format %q; known: go-test-json, junit-xml, jest-json", r.Language, r.Format)
		default:
			// The test runner's own registry: a dialect passes here
			// exactly when test run and test classify accept it.
			if _, err := testrun.CheckDialect(testrun.Format(r.Format), testrun.Dialect(r.Dialect)); err != nil {
				if l := r.keyLines["dialect"]; l > 0 {
					line = l
				}
				c.add(st.Path, line, RuleRunnerDialect, "runner %s: %s", r.Language, apperr.Message(err))
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// ---- stories.md

func (c *checker) storiesFile() {
	st := c.s.Stories
	if st == nil {
		c.add(c.path("stories.md"), 0, RuleStoriesMissing, "stories.md is missing")
		return
	}
	for _, sec := range []struct {
		s    Section
		name string
	}{{st.Goal, "Sprint goal"}, {st.Demo, "Sprint demo"}, {st.Done, "Definition of Done"}, {st.OutOfScope, "Out of scope"}, {st.UserStories, "User stories"}, {st.Graph, "Story dependency graph"}} {
		switch {
		case sec.s.Line == 0:
			c.add(st.Path, 1, RuleStoriesSection, "stories.md has no %s section", sec.name)
		case sec.s.Text == "" && sec.name != "User stories":
			c.add(st.Path, sec.s.Line, RuleStoriesSection, "the %s section is empty", sec.name)
		}
	}
	if len(st.Stories) == 0 {
		line := st.UserStories.Line
		if line == 0 {
			line = 1
		}
		c.add(st.Path, line, RuleStoriesNone, "stories.md declares no story (### S%d-NN — title under ## User stories)", c.s.Number)
	}
	seen := map[string]bool{}
	for _, s := range st.Stories {
		m := validStoryRe().FindStringSubmatch(s.ID)
		if m == nil {
			c.add(st.Path, s.Line, RuleStoryBadID, "story id %s is not S<sprint>-<NN> (two or more digits)", s.ID)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n != c.s.Number {
			c.add(st.Path, s.Line, RuleStoryWrongSprint, "story %s belongs to sprint %d, but this is sprint %d", s.ID, n, c.s.Number)
		}
		if seen[s.ID] {
			c.add(st.Path, s.Line, RuleStoryDuplicate, "story %s is declared twice", s.ID)
			continue
		}
		seen[s.ID] = true
		c.intent(st.Path, s.Line, "story", "story "+s.ID, s.Intent)
	}
}

// ---- story dirs and Stage-2 files

func (c *checker) storyDirs() {
	st := c.s.Stories
	for _, id := range c.order {
		s := c.stories[id]
		ds := c.dirs[id]
		switch len(ds) {
		case 0:
			c.add(st.Path, s.Line, RuleStoryNoDir, "story %s has no Stage-2 directory (%s/%s-<slug>/)", id, c.s.Dir, strings.ToLower(id))
			continue
		case 1:
		default:
			var names []string
			for _, d := range ds {
				names = append(names, path.Base(d.Dir))
			}
			c.add(st.Path, s.Line, RuleStoryTwoDirs, "story %s has %d Stage-2 directories: %s", id, len(ds), strings.Join(names, ", "))
			continue
		}
		d := ds[0]
		for _, f := range []struct {
			name    string
			missing bool
		}{{"tasks.md", d.Tasks == nil}, {"validate.md", d.Validate == nil}, {"plan.md", d.TestPlan == nil}} {
			if f.missing {
				c.add(path.Join(d.Dir, f.name), 0, RuleStage2Missing, "story %s has no %s: write it there (git ideate plan new shows its sections)", id, f.name)
			}
		}
	}
	if st == nil {
		return
	}
	for _, d := range c.s.StoryDirs {
		if d.Story != "" && c.stories[d.Story] == nil {
			c.add(d.Dir, 0, RuleDirUnknownStory, "directory holds story %s, which stories.md does not declare", d.Story)
		}
	}
}

// ---- tasks.md

// symbolLanguages are the languages whose tests cannot compile against a
// missing production symbol, so a task must name the symbols the
// scaffolder stubs (C7, C12). standards.md may override per runner.
var symbolLanguages = map[string]bool{"go": true, "rust": true, "java": true, "kotlin": true, "csharp": true, "typescript": true, "swift": true, "c": true, "cpp": true, "scala": true}

var extLanguage = map[string]string{
	".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".cs": "csharp", ".ts": "typescript", ".tsx": "typescript",
	".swift": "swift", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".scala": "scala",
	".py": "python", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".rb": "ruby", ".sh": "shell",
}

func (c *checker) needsSymbols(t *Task) bool {
	langs := map[string]bool{}
	runners := map[string]*Runner{}
	if st := c.s.Standards; st != nil {
		for _, r := range st.Runners {
			runners[r.Language] = r
		}
	}
	for _, f := range t.Files {
		ext := path.Ext(f)
		lang := extLanguage[ext]
		for _, r := range runners {
			for _, e := range r.Extensions {
				if e == ext || "."+strings.TrimPrefix(e, ".") == ext || strings.TrimPrefix(e, "*") == ext {
					lang = r.Language
				}
			}
		}
		if lang != "" {
			langs[lang] = true
		}
	}
	for lang := range langs {
		need := symbolLanguages[lang]
		if r := runners[lang]; r != nil && r.Symbols != "" {
			need = r.Symbols == "required"
		}
		if need {
			return true
		}
	}
	return false
}

func (c *checker) taskChecks() {
	for _, d := range c.s.StoryDirs {
		if d.Tasks == nil {
			continue
		}
		tl := d.Tasks
		if len(tl.Tasks) == 0 {
			c.add(tl.Path, 1, RuleTasksNone, "tasks.md declares no task (## T<k> — title)")
		}
		seen := map[int]bool{}
		for _, t := range tl.Tasks {
			if seen[t.Num] {
				c.add(tl.Path, t.Line, RuleTaskDuplicate, "task T%d is declared twice", t.Num)
				continue
			}
			seen[t.Num] = true
			if len(t.Files) == 0 {
				c.add(tl.Path, t.Line, RuleTaskNoScope, "task %s has no Files: line naming its scope (paths or globs)", t.ID)
			}
			if !t.GateOnly && len(t.Symbols) == 0 && c.needsSymbols(t) {
				c.add(tl.Path, t.Line, RuleTaskNoSymbols, "task %s has no Symbols: line naming the production symbols its tests need", t.ID)
			}
			for _, dl := range t.dupMeta {
				c.add(tl.Path, dl.line, RuleTaskDupLine, "task %s has a second %s: line (the first is line %d); keep one", t.ID, dl.key, dl.first)
			}
			for _, b := range t.badDeps {
				c.add(tl.Path, b.line, RuleTaskBadDepends, "task %s: %q is not a task reference (S1-01/T2, T2, a story id, or none)", t.ID, b.text)
			}
			if d.TestPlan != nil && !t.GateOnly && c.declaredFor(d, t.Num) == 0 {
				c.add(tl.Path, t.Line, RuleTaskNoTests, "task %s declares no test in plan.md (or say Tests: none (gate-only))", t.ID)
			}
			c.ownedCheck(d, t)
		}
	}
}

func (c *checker) declaredFor(d *StoryDir, num int) int {
	n := 0
	for _, sec := range d.TestPlan.Sections {
		if sec.Task == num {
			n += len(sec.Tests)
		}
	}
	return n
}

// ownedFiles returns a story's declared files: stories.md's Owned files
// and the sprint plan's ownership row.
func (c *checker) ownedFiles(story string) []string {
	var out []string
	if s := c.stories[story]; s != nil {
		out = append(out, s.OwnedFiles...)
	}
	if p := c.s.Plan; p != nil {
		for _, o := range p.Ownership {
			if o.Story == story {
				out = append(out, o.Files...)
			}
		}
	}
	return out
}

func (c *checker) ownedCheck(d *StoryDir, t *Task) {
	owned := c.ownedFiles(d.Story)
	if len(owned) == 0 {
		return
	}
	for _, f := range t.Files {
		ok := false
		for _, o := range owned {
			if covers(o, f) {
				ok = true
				break
			}
		}
		if !ok {
			c.add(d.Tasks.Path, t.FilesLine, RuleTaskNotOwned, "task %s file %s is not among story %s's owned files", t.ID, f, d.Story)
		}
	}
}

// ---- plan.md (tests)

func (c *checker) testChecks() {
	seen := map[string]string{}
	for _, d := range c.s.StoryDirs {
		tp := d.TestPlan
		if tp == nil {
			continue
		}
		known := map[int]bool{}
		if d.Tasks != nil {
			for _, t := range d.Tasks.Tasks {
				known[t.Num] = true
			}
		}
		total := 0
		check := func(t *TestDecl) {
			total++
			if !t.wellFormed {
				if t.ID == "" {
					c.add(tp.Path, t.Line, RuleTestMalformed, "test bullet has no `path::Name` test id in a code span")
				} else {
					c.add(tp.Path, t.Line, RuleTestMalformed, "test id %q is not `path::Name` (Name an identifier, optional /subtest)", t.ID)
				}
				return
			}
			if t.Checked {
				c.add(tp.Path, t.Line, RuleTestTicked, "test %s is ticked in plan.md; only plan-ready.md is ticked", t.ID)
			}
			if prev, dup := seen[t.ID]; dup {
				c.add(tp.Path, t.Line, RuleTestDuplicate, "test id %s is declared twice in the sprint (first at %s)", t.ID, prev)
				return
			}
			seen[t.ID] = tp.Path + ":" + strconv.Itoa(t.Line)
		}
		for _, sec := range tp.Sections {
			if d.Tasks != nil && !known[sec.Task] {
				c.add(tp.Path, sec.Line, RuleTestPlanUnknown, "plan.md section T%d names no task of tasks.md", sec.Task)
			}
			for _, t := range sec.Tests {
				check(t)
			}
		}
		for _, t := range tp.Stray {
			c.add(tp.Path, t.Line, RuleTestOutsideTask, "test bullet sits outside any ## T<k> section")
			check(t)
		}
		if tp.CountLine > 0 && tp.Count != total {
			c.add(tp.Path, tp.CountLine, RuleTestPlanCount, "Test count says %d, but plan.md declares %d", tp.Count, total)
		}
	}
}

// ---- validate.md

func (c *checker) validateChecks() {
	for _, d := range c.s.StoryDirs {
		rb := d.Validate
		if rb == nil {
			continue
		}
		has := map[string]bool{}
		tasks := map[int]bool{}
		for _, sec := range rb.Sections {
			has[sec.Kind] = true
			if sec.Kind == "other" {
				continue
			}
			if sec.Kind == "task" {
				tasks[sec.Task] = true
				if d.Tasks != nil && !hasTask(d.Tasks, sec.Task) {
					c.add(rb.Path, sec.Line, RuleValidateUnknown, "validate.md section T%d names no task of tasks.md", sec.Task)
				}
			}
			if len(sec.Rows) == 0 && !c.hasFindingIn(rb.Path, sec.Line) {
				c.add(rb.Path, sec.Line, RuleValidateNoRows, "section %s has no | Check | Command | Expected (PASS) | FAIL cites | rows", sec.Title)
			}
		}
		if !has["preflight"] {
			c.add(rb.Path, 1, RuleValidateSection, "validate.md has no Pre-flight section")
		}
		if !has["final"] {
			c.add(rb.Path, 1, RuleValidateSection, "validate.md has no Final sign-off section")
		}
		if d.Tasks != nil {
			for _, t := range d.Tasks.Tasks {
				if !tasks[t.Num] {
					c.add(d.Tasks.Path, t.Line, RuleValidateTask, "task %s has no section in validate.md", t.ID)
				}
			}
		}
	}
}

// hasFindingIn reports whether a finding already names file at a line
// after line (the section's rows were reported as malformed).
func (c *checker) hasFindingIn(file string, line int) bool {
	for _, f := range c.out {
		if f.File == file && f.Line > line && (f.Rule == RuleValidateRow || f.Rule == RuleValidateHeader) {
			return true
		}
	}
	return false
}

func hasTask(tl *TaskList, num int) bool {
	for _, t := range tl.Tasks {
		if t.Num == num {
			return true
		}
	}
	return false
}

// ---- the sprint plan

func (c *checker) sprintPlan() {
	p := c.s.Plan
	if p == nil {
		c.add(c.path("plan.md"), 0, RulePlanMissing, "the sprint plan plan.md is missing")
		return
	}
	if p.Goal.Line == 0 {
		c.add(p.Path, 1, RulePlanSection, "the sprint plan has no Sprint goal section")
	}
	if p.Critical.Line == 0 {
		c.add(p.Path, 1, RulePlanSection, "the sprint plan has no Critical path section")
	}
	if st := c.s.Standards; st != nil && st.Matrix != nil && p.Gates != nil && len(p.Gates.Commands) > 0 {
		if !sameCommands(st.Matrix.Commands, p.Gates.Commands) {
			c.warn(p.Path, p.Gates.Line, RulePlanMatrixCopy, "the sprint plan's copy of the gate matrix differs from standards.md, which is the one that runs")
		}
	}
}

func sameCommands(a, b []Command) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Text != b[i].Text {
			return false
		}
	}
	return true
}

// ---- waves

func taskRef(story string, num int) string { return story + "/T" + strconv.Itoa(num) }

// units returns the schedulable units of a story: its task refs, or the
// story id itself when it has no tasks.md.
func (c *checker) units(story string) []string {
	ts := c.tasks[story]
	if len(ts) == 0 {
		return []string{story}
	}
	var out []string
	for _, t := range ts {
		out = append(out, taskRef(story, t.Num))
	}
	return out
}

func (c *checker) waves() {
	c.waveOf = map[string]int{}
	p := c.s.Plan
	if p == nil {
		return
	}
	if p.WavesLine == 0 || len(p.Waves) == 0 {
		line := p.WavesLine
		if line == 0 {
			line = 1
		}
		c.add(p.Path, line, RuleWaveTable, "the sprint plan has no | Wave | Stories | Starts when | table")
		return
	}
	numbers := map[int]bool{}
	wholeAt := map[string]int{} // story → line of its whole-story entry
	entryAt := map[string]int{} // story → line of its first entry
	split := map[string]bool{}  // story listed with task lists
	for _, w := range p.Waves {
		if numbers[w.Number] || w.Number <= 0 {
			c.add(p.Path, w.Line, RuleWaveNumber, "wave number %d is repeated or not positive", w.Number)
		}
		numbers[w.Number] = true
		for _, e := range w.Entries {
			if c.stories[e.Story] == nil {
				c.add(p.Path, w.Line, RuleWaveUnknownStory, "wave %d names story %s, which stories.md does not declare", w.Number, e.Story)
				continue
			}
			if e.Tasks == nil {
				if first, ok := entryAt[e.Story]; ok {
					c.add(p.Path, w.Line, RuleWaveStoryTwice, "story %s is in wave %d and already on line %d; list its tasks per wave (%s (T1, T2)) to split it", e.Story, w.Number, first, e.Story)
					continue
				}
				entryAt[e.Story], wholeAt[e.Story] = w.Line, w.Line
				for _, u := range c.units(e.Story) {
					c.waveOf[u] = w.Number
				}
				continue
			}
			if first, ok := wholeAt[e.Story]; ok {
				c.add(p.Path, w.Line, RuleWaveStoryTwice, "story %s is in wave %d and already, whole, on line %d", e.Story, w.Number, first)
				continue
			}
			if _, ok := entryAt[e.Story]; !ok {
				entryAt[e.Story] = w.Line
			}
			split[e.Story] = true
			for _, n := range e.Tasks {
				ref := taskRef(e.Story, n)
				if c.tasks[e.Story] != nil && !hasTaskNum(c.tasks[e.Story], n) {
					c.add(p.Path, w.Line, RuleWaveUnknownTask, "wave %d names %s, which %s's tasks.md does not declare", w.Number, ref, e.Story)
					continue
				}
				if prev, ok := c.waveOf[ref]; ok {
					c.add(p.Path, w.Line, RuleWaveTaskTwice, "task %s is in wave %d and already in wave %d", ref, w.Number, prev)
					continue
				}
				c.waveOf[ref] = w.Number
			}
		}
	}
	for _, id := range c.order {
		if _, ok := entryAt[id]; !ok {
			c.add(c.s.Stories.Path, c.stories[id].Line, RuleWaveStoryMissing, "story %s is in no wave: add it to a row of the | Wave | Stories | Starts when | table in %s", id, p.Path)
			continue
		}
		if split[id] {
			for _, u := range c.units(id) {
				if _, ok := c.waveOf[u]; !ok && u != id {
					c.add(p.Path, p.WavesLine, RuleWaveTaskMissing, "task %s is in no wave (its story is split across waves by task lists)", u)
				}
			}
		}
	}
}

func hasTaskNum(ts []*Task, n int) bool {
	for _, t := range ts {
		if t.Num == n {
			return true
		}
	}
	return false
}

// ---- dependencies: one graph over tasks

type depEdge struct {
	from, to string // to waits for from
	file     string
	line     int
}

// resolve expands a reference to units; ok is false when it names no
// known story or task.
func (c *checker) resolve(ref string) ([]string, bool) {
	story, task, isTask := strings.Cut(ref, "/")
	if c.stories[story] == nil {
		return nil, false
	}
	if !isTask {
		return c.units(story), true
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(task, "T"))
	if c.tasks[story] == nil {
		// No tasks.md (already reported): the task cannot be resolved,
		// but that is not an unknown-dependency defect of this edge.
		return []string{story}, true
	}
	if !hasTaskNum(c.tasks[story], n) {
		return nil, false
	}
	return []string{taskRef(story, n)}, true
}

func (c *checker) dependencies() {
	var edges []depEdge
	addRef := func(from string, to []string, file string, line int, who string) {
		us, ok := c.resolve(from)
		if !ok {
			c.add(file, line, RuleUnknownDependency, "%s depends on %s, which is no story or task of this sprint", who, from)
			return
		}
		for _, u := range us {
			for _, v := range to {
				edges = append(edges, depEdge{from: u, to: v, file: file, line: line})
			}
		}
	}
	for _, id := range c.order {
		d := c.dir[id]
		if d == nil || d.Tasks == nil {
			continue
		}
		for _, t := range d.Tasks.Tasks {
			for _, r := range t.DependsOn {
				addRef(r, []string{taskRef(id, t.Num)}, d.Tasks.Path, t.DependsLine, taskRef(id, t.Num))
			}
		}
	}
	if p := c.s.Plan; p != nil {
		for _, w := range p.Waves {
			var members []string
			for u, n := range c.waveOf {
				if n == w.Number {
					members = append(members, u)
				}
			}
			sort.Strings(members)
			for _, r := range w.After {
				addRef(canonRef(r), members, p.Path, w.Line, "wave "+strconv.Itoa(w.Number))
			}
		}
		for _, e := range p.Edges {
			to, ok := c.resolve(e.To)
			if !ok {
				c.add(e.File, e.Line, RuleUnknownDependency, "the dependency graph names %s, which is no story or task of this sprint", e.To)
				continue
			}
			addRef(e.From, to, e.File, e.Line, e.To)
		}
	}
	c.edges = edges
	// Strongly connected components (Tarjan), over nodes in sorted order
	// so the result is deterministic.
	adj := map[string][]string{}
	nodes := map[string]bool{}
	for _, e := range edges {
		adj[e.from] = append(adj[e.from], e.to)
		nodes[e.from], nodes[e.to] = true, true
	}
	var names []string
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sort.Strings(adj[n])
	}
	comp := map[string]int{}
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	next, ncomp := 0, 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	for _, n := range names {
		if _, seen := index[n]; !seen {
			strong(n)
		}
	}
	size := map[int]int{}
	for _, k := range comp {
		size[k]++
	}
	cyclic := func(e depEdge) bool {
		return comp[e.from] == comp[e.to] && (size[comp[e.from]] > 1 || e.from == e.to)
	}
	reported := map[int]bool{}
	sort.SliceStable(edges, func(i, j int) bool {
		if edges[i].file != edges[j].file {
			return edges[i].file < edges[j].file
		}
		return edges[i].line < edges[j].line
	})
	orderAt := map[string]bool{}
	// A cycle is reported once, at the first of its edges that runs
	// against the wave order (the likely culprit), else at its first edge.
	backwards := func(e depEdge) bool {
		wf, okf := c.waveOf[e.from]
		wt, okt := c.waveOf[e.to]
		return okf && okt && wf > wt
	}
	at := map[int]depEdge{}
	for _, e := range edges {
		if !cyclic(e) {
			continue
		}
		k := comp[e.from]
		if prev, ok := at[k]; !ok || backwards(e) && !backwards(prev) {
			at[k] = e
		}
	}
	for _, e := range edges {
		if cyclic(e) {
			k := comp[e.from]
			if reported[k] || at[k] != e {
				continue
			}
			reported[k] = true
			var members []string
			for n, kk := range comp {
				if kk == k {
					members = append(members, n)
				}
			}
			sort.Strings(members)
			c.add(e.file, e.line, RuleDependencyCycle, "dependency cycle among %s", strings.Join(members, ", "))
			continue
		}
		wf, okf := c.waveOf[e.from]
		wt, okt := c.waveOf[e.to]
		key := e.file + ":" + strconv.Itoa(e.line)
		if okf && okt && wf > wt && !orderAt[key] {
			orderAt[key] = true
			c.add(e.file, e.line, RuleWaveOrder, "%s (wave %d) waits for %s, which runs later (wave %d)", e.to, wt, e.from, wf)
		}
	}
}

// ---- file ownership within a wave

type claim struct {
	story, file, where string
	line, rank         int // rank: 0 tasks.md, 1 stories.md, 2 the plan's ownership table
}

func (c *checker) fileOwnership() {
	p := c.s.Plan
	if p == nil {
		return
	}
	byWave := map[int][]claim{}
	for _, id := range c.order {
		d := c.dir[id]
		whole := true
		for _, u := range c.units(id) {
			w, ok := c.waveOf[u]
			if !ok {
				continue
			}
			if u == id {
				continue
			}
			_, num, _ := strings.Cut(u, "/T")
			n, _ := strconv.Atoi(num)
			for _, t := range c.tasks[id] {
				if t.Num == n {
					for _, f := range t.Files {
						byWave[w] = append(byWave[w], claim{story: id, file: f, where: d.Tasks.Path, line: t.FilesLine, rank: 0})
					}
				}
			}
		}
		// Story-level declarations bind the wave(s) the whole story is in.
		waves := map[int]bool{}
		for _, u := range c.units(id) {
			if w, ok := c.waveOf[u]; ok {
				waves[w] = true
			}
		}
		if len(waves) != 1 {
			whole = false
		}
		if !whole {
			continue
		}
		var w int
		for k := range waves {
			w = k
		}
		if s := c.stories[id]; s != nil {
			for _, f := range s.OwnedFiles {
				byWave[w] = append(byWave[w], claim{story: id, file: f, where: c.s.Stories.Path, line: s.OwnedLine, rank: 1})
			}
		}
		for _, o := range p.Ownership {
			if o.Story == id {
				for _, f := range o.Files {
					byWave[w] = append(byWave[w], claim{story: id, file: f, where: p.Path, line: o.Line, rank: 2})
				}
			}
		}
	}
	var waves []int
	for w := range byWave {
		waves = append(waves, w)
	}
	sort.Ints(waves)
	for _, w := range waves {
		cs := byWave[w]
		type key struct{ a, b, file string }
		best := map[key]claim{}
		for i := range cs {
			for j := range cs {
				x, y := cs[i], cs[j]
				if x.story >= y.story || !overlap(x.file, y.file) {
					continue
				}
				// y is the later story's claim: report there.
				file := y.file
				if hasMeta(file) && !hasMeta(x.file) {
					file = x.file
				}
				k := key{x.story, y.story, file}
				if b, ok := best[k]; !ok || y.rank < b.rank || y.rank == b.rank && y.line < b.line {
					best[k] = y
				}
			}
		}
		var keys []key
		for k := range best {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].a != keys[j].a {
				return keys[i].a < keys[j].a
			}
			if keys[i].b != keys[j].b {
				return keys[i].b < keys[j].b
			}
			return keys[i].file < keys[j].file
		})
		for _, k := range keys {
			y := best[k]
			c.add(y.where, y.line, RuleWaveFileConflict, "%s is owned by both %s and %s in wave %d", k.file, k.a, k.b, w)
		}
	}
}

// ---- plan-ready.md

func (c *checker) planReady() {
	for _, d := range c.s.StoryDirs {
		pr := d.PlanReady
		if pr == nil {
			continue
		}
		declared := map[string]bool{}
		if d.TestPlan != nil {
			for _, sec := range d.TestPlan.Sections {
				for _, t := range sec.Tests {
					declared[t.ID] = true
				}
			}
		}
		for _, b := range pr.Boxes {
			switch {
			case b.TestID == "":
				c.add(pr.Path, b.Line, RuleReadyBox, "plan-ready.md box has no `path::Name` test id (gate-only tasks get no box)")
			case d.TestPlan != nil && !declared[b.TestID]:
				c.add(pr.Path, b.Line, RuleReadyUnknown, "plan-ready.md box %s is not a test declared in plan.md", b.TestID)
			}
		}
	}
}

// ---- gates that could judge nothing

// runnerCoverage reports each declared test file that no runner of
// standards.md's `## Test runners` covers (by extension or test-file
// glob), once per extension: the RED and GREEN gates could only say
// UNVERIFIABLE about its tests.
func (c *checker) runnerCoverage() {
	st := c.s.Standards
	if st == nil {
		return
	}
	reported := map[string]bool{}
	for _, d := range c.s.StoryDirs {
		if d.TestPlan == nil {
			continue
		}
		var tests []*TestDecl
		for _, sec := range d.TestPlan.Sections {
			tests = append(tests, sec.Tests...)
		}
		for _, t := range tests {
			if !t.wellFormed || runnerFor(st.Runners, t.Path) != nil {
				continue
			}
			ext := path.Ext(t.Path)
			if reported[ext] {
				continue
			}
			reported[ext] = true
			lang := extLanguage[ext]
			if lang == "" {
				lang = "<language>"
			}
			if len(st.Runners) == 0 {
				c.add(st.Path, 1, RuleNoRunner, "standards.md has no ## Test runners section, so no gate can run %s (first declared at %s:%d): add one with a ### %s entry", t.ID, d.TestPlan.Path, t.Line, lang)
				continue
			}
			c.add(st.Path, st.Runners[0].Line, RuleNoRunner, "no runner of ## Test runners covers %s (its Extensions and Test files miss %s; first declared at %s:%d): add a ### %s entry", t.ID, t.Path, d.TestPlan.Path, t.Line, lang)
		}
	}
}

// runnerFor returns the first runner whose extensions or test-file globs
// cover the file p, as the gates pick one.
func runnerFor(rs []*Runner, p string) *Runner {
	for _, r := range rs {
		for _, e := range r.Extensions {
			if strings.HasSuffix(p, e) {
				return r
			}
		}
		for _, g := range r.TestGlobs {
			if globMatch(g, p) {
				return r
			}
		}
	}
	return nil
}

// templates reports every planning file that still holds the marker
// plan new writes into its templates: its example content is not the
// team's plan until someone edits it and deletes the marker line.
func (c *checker) templates() {
	for _, f := range c.s.templated {
		c.add(f.path, f.line, RuleTemplate, "not yet filled: still the template git ideate plan new wrote; replace its example with the sprint's own content, then delete the line starting %s", TemplateMarker)
	}
}

// Summary counts what a sprint plans.
type Summary struct {
	Stories   int `json:"stories"`
	Tasks     int `json:"tasks"`
	Tests     int `json:"tests"`
	PassOnRed int `json:"pass_on_red"`
	Waves     int `json:"waves"`
}

// Summary counts the stories of stories.md, the tasks of every tasks.md,
// the tests declared in every story plan.md and the waves.
func (s *Sprint) Summary() Summary {
	var sum Summary
	if s.Stories != nil {
		sum.Stories = len(s.Stories.Stories)
	}
	if s.Plan != nil {
		sum.Waves = len(s.Plan.Waves)
	}
	for _, d := range s.StoryDirs {
		if d.Tasks != nil {
			sum.Tasks += len(d.Tasks.Tasks)
		}
		if d.TestPlan != nil {
			for _, sec := range d.TestPlan.Sections {
				for _, t := range sec.Tests {
					sum.Tests++
					if t.PassOnRed {
						sum.PassOnRed++
					}
				}
			}
		}
	}
	return sum
}

// StoryDirOf returns the Stage-2 directory of a story, or nil when it has
// none or more than one.
func (s *Sprint) StoryDirOf(story string) *StoryDir {
	var found *StoryDir
	for _, d := range s.StoryDirs {
		if d.Story == story {
			if found != nil {
				return nil
			}
			found = d
		}
	}
	return found
}
