package plan

// Severity tells a finding that fails the check from one that only warns.
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one structural problem: where it is and which rule it breaks.
// File is slash-separated and relative to the root the sprint was loaded
// from; Line is 1-based (0 when the problem has no line, e.g. an
// unreadable file). Rule is a stable code such as
// `story.missing_connections`.
type Finding struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
}

// Section is a Markdown section: its heading, the heading's line and its
// non-blank lines joined by newlines. Line 0 means absent.
type Section struct {
	Title string `json:"title,omitempty"`
	Line  int    `json:"line,omitempty"`
	Text  string `json:"text,omitempty"`
}

// Part is one labelled part of an Intent. Line 0 means absent.
type Part struct {
	Line int    `json:"line,omitempty"`
	Text string `json:"text,omitempty"`
}

// Intent holds the five parts of Intent (seed 004, ICE): what is wanted,
// constraints, failure scenarios, success scenarios and connections.
type Intent struct {
	Wanted      Part `json:"wanted"`
	Constraints Part `json:"constraints"`
	Failures    Part `json:"failure_scenarios"`
	Successes   Part `json:"success_scenarios"`
	Connections Part `json:"connections"`
}

// File is one planning file read by Load: its path and git blob id.
type File struct {
	Path   string `json:"path"`
	BlobID string `json:"blob"`
}

// Sprint is one sprint's plan set, as read from docs/agents/sprintN/.
// A nil artifact pointer means the file does not exist.
type Sprint struct {
	Number    int         `json:"sprint"`
	Dir       string      `json:"dir"` // slash path of the sprint dir, relative to the load root
	Intake    *Intake     `json:"intake,omitempty"`
	Stories   *Stories    `json:"stories,omitempty"`
	Standards *Standards  `json:"standards,omitempty"`
	Plan      *SprintPlan `json:"plan,omitempty"`
	StoryDirs []*StoryDir `json:"story_dirs"`
	Files     []File      `json:"files"` // the planning artifacts read, sorted by path
	TreeID    string      `json:"tree"`  // git tree id of Files, relative to Dir (see TreeID)
	findings  []Finding   // found while reading
	templated []templated // files still holding TemplateMarker
}

// templated is a planning file plan new wrote and nobody has filled yet.
type templated struct {
	path string
	line int
}

// Doc is what every artifact carries: where it is, its front matter and
// how it was written.
type Doc struct {
	Path        string      `json:"path"`
	FrontMatter FrontMatter `json:"front_matter"`
	HasFront    bool        `json:"has_front_matter"`
	CRLF        bool        `json:"crlf,omitempty"`
}

// Intake is intake.md: the human's five-part Intent and the scope.
type Intake struct {
	Doc
	Intent        Intent  `json:"intent"`
	InScope       Section `json:"in_scope"`
	OutOfScope    Section `json:"out_of_scope"`
	OpenQuestions Section `json:"open_questions"`
}

// Stories is stories.md, the sprint contract.
type Stories struct {
	Doc
	Goal        Section  `json:"goal"`
	Demo        Section  `json:"demo"`
	DemoSteps   []string `json:"demo_steps,omitempty"`
	Done        Section  `json:"definition_of_done"`
	DoneItems   []string `json:"done_items,omitempty"`
	OutOfScope  Section  `json:"out_of_scope"`
	UserStories Section  `json:"user_stories"`
	Graph       Section  `json:"dependency_graph"`
	Stories     []*Story `json:"stories"`
}

// Story is one `### S<N>-<NN> — title` under `## User stories`.
type Story struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Line       int      `json:"line"`
	OwnedFiles []string `json:"owned_files,omitempty"`
	OwnedLine  int      `json:"owned_line,omitempty"`
	Intent     Intent   `json:"intent"`
	Done       Part     `json:"definition_of_done,omitempty"` // a per-story label, when the story has one
	Demo       Part     `json:"demo,omitempty"`
}

// Standards is standards.md: the rules, the gate matrix and how each
// language's tests are built, run and read.
type Standards struct {
	Doc
	Stack        Section     `json:"stack"`
	Rules        []Rule      `json:"rules,omitempty"`
	RulesLine    int         `json:"rules_line,omitempty"`
	Matrix       *GateMatrix `json:"gate_matrix,omitempty"`
	Suppressions []Pattern   `json:"suppression_patterns,omitempty"`
	StubMarkers  []Pattern   `json:"stub_markers"`
	ShimMarker   string      `json:"shim_marker"`
	Runners      []*Runner   `json:"runners,omitempty"`
	// Cost is the `## Cost rules` section (nil when there is none); the
	// runners' `costly:` keys are added to its Costly.
	Cost *CostRules `json:"cost_rules,omitempty"`
}

// CostRules are what standards.md adds to the bounded-cost gate's
// defaults, and the revision loop's bound. Each line of the section (a
// bullet or a line of a fenced block) is `<verb>: <value>` (the value
// may be a code span): `costly: make e2e` marks a command prefix costly,
// `allow: make test` lets one through whatever the defaults say,
// `max_attempts: 3` bounds a task's attempts. An unknown verb or a bad
// number is an error finding (cost.bad_rule), and Problems says so: the
// cost gate then denies with it.
type CostRules struct {
	Line        int       `json:"line"`
	Costly      []Pattern `json:"costly,omitempty"`
	Allow       []Pattern `json:"allow,omitempty"`
	MaxAttempts int       `json:"max_attempts,omitempty"` // 0: not set here
	Problems    []string  `json:"problems,omitempty"`
}

// Rule is one bullet of `## Active rules`.
type Rule struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Pattern is a literal marker or pattern declared in standards.md.
type Pattern struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GateMatrix is the `Gate matrix` (or `Cross-cutting gates`) section:
// the commands of its first fenced block, in order, and the rows of its
// table when it has one (informational).
type GateMatrix struct {
	Heading  string      `json:"heading"`
	Line     int         `json:"line"`
	Commands []Command   `json:"commands"`
	Rows     []MatrixRow `json:"rows,omitempty"`
}

// Command is one shell command line.
type Command struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// MatrixRow is a row of the gate matrix table.
type MatrixRow struct {
	Line      int    `json:"line"`
	Gate      string `json:"gate"`
	Command   string `json:"command"`
	Threshold string `json:"threshold,omitempty"`
	Source    string `json:"source,omitempty"`
}

// Runner declares, for one language, how its tests are compiled, run and
// read (standards.md `## Test runners`, one `### <language>` each). The
// test-outcome engine consumes it; a language without one cannot be
// judged (UNVERIFIABLE), never passed.
//
// Commands are templates; the placeholders ({packages}, {go_regex},
// {report}, {node_ids}, {files}, {targets}, {filters}) are the engine's.
type Runner struct {
	Language         string   `json:"language"`
	Line             int      `json:"line"`
	Extensions       []string `json:"extensions,omitempty"` // source file extensions, e.g. ".go"
	TestGlobs        []string `json:"test_globs,omitempty"`
	Compile          string   `json:"compile,omitempty"`
	Run              string   `json:"run"`
	Format           string   `json:"format"`            // go-test-json | junit-xml | jest-json
	Dialect          string   `json:"dialect,omitempty"` // for junit-xml: pytest, vitest, jest-junit, gotestsum, nextest, surefire
	TestID           string   `json:"test_id,omitempty"`
	IsolateOnCrash   bool     `json:"isolate_on_crash,omitempty"`
	Symbols          string   `json:"symbols,omitempty"` // required | optional ("" = the language default)
	ShimMarker       string   `json:"shim_marker,omitempty"`
	StubMarkers      []string `json:"stub_markers,omitempty"`
	AssertionMarkers []string `json:"assertion_markers,omitempty"`
	Suppressions     []string `json:"suppression_patterns,omitempty"`
	Costly           []string `json:"costly,omitempty"` // command prefixes the cost gate denies from a task
	keyLines         map[string]int
}

// SprintPlan is the sprint's plan.md: waves, dependencies, ownership.
type SprintPlan struct {
	Doc
	Stage     string      `json:"stage,omitempty"`
	Goal      Section     `json:"goal"`
	WavesLine int         `json:"waves_line,omitempty"`
	Waves     []*Wave     `json:"waves"`
	Edges     []Edge      `json:"edges,omitempty"` // from the dependency graph block (strict `A -> B` lines only)
	Ownership []Ownership `json:"ownership,omitempty"`
	Critical  Section     `json:"critical_path"`
	Gates     *GateMatrix `json:"cross_cutting_gates,omitempty"` // informational copy
}

// Wave is one row of the waves table.
type Wave struct {
	Number     int         `json:"wave"`
	Line       int         `json:"line"`
	Entries    []WaveEntry `json:"entries"`
	StartsWhen string      `json:"starts_when,omitempty"`
	After      []string    `json:"after,omitempty"` // story ids named in Starts when
}

// WaveEntry is a story in a wave, optionally limited to some tasks
// (`S2-05 (T1, T2)` or `S2-05/T3`); nil Tasks means all of them.
type WaveEntry struct {
	Story string `json:"story"`
	Tasks []int  `json:"tasks,omitempty"`
}

// Edge is a declared dependency: To waits for From. Either end is a
// task reference (`S1-01/T2`) or a story id (all its tasks).
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// Ownership is a row of the file ownership table.
type Ownership struct {
	Story string   `json:"story"`
	Wave  int      `json:"wave,omitempty"`
	Files []string `json:"files"`
	Line  int      `json:"line"`
}

// StoryDir is one `sN-NN-<slug>/` directory with its Stage-2 files.
type StoryDir struct {
	Story     string     `json:"story"`
	Dir       string     `json:"dir"`
	Tasks     *TaskList  `json:"tasks,omitempty"`
	Validate  *Rubric    `json:"validate,omitempty"`
	TestPlan  *TestPlan  `json:"test_plan,omitempty"`
	PlanReady *PlanReady `json:"plan_ready,omitempty"`
}

// TaskList is a story's tasks.md.
type TaskList struct {
	Doc
	Tasks []*Task `json:"tasks"`
}

// Task is one `## T<k> — title` section of tasks.md with its metadata
// lines (C7). A *Line field is 0 when the line is absent.
type Task struct {
	ID          string   `json:"id"` // canonical `T<k>`
	Num         int      `json:"num"`
	Title       string   `json:"title"`
	Line        int      `json:"line"`
	Files       []string `json:"files,omitempty"`
	FilesLine   int      `json:"files_line,omitempty"`
	Symbols     []string `json:"symbols,omitempty"`
	SymbolsLine int      `json:"symbols_line,omitempty"`
	Uses        []string `json:"uses,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"` // canonical references (`S1-01/T2`, or a story id)
	DependsLine int      `json:"depends_line,omitempty"`
	GateOnly    bool     `json:"gate_only,omitempty"` // `Tests: none (gate-only)`
	Budget      string   `json:"budget,omitempty"`
	SplitFrom   string   `json:"split_from,omitempty"`
	badDeps     []badRef
	dupMeta     []dupLine
}

// dupLine is a metadata line given twice in one task.
type dupLine struct {
	key         string
	line, first int
}

type badRef struct {
	text string
	line int
}

// Rubric is a story's validate.md: sections of literal PASS/FAIL rows.
type Rubric struct {
	Doc
	Sections []*RubricSection `json:"sections"`
}

// RubricSection is `## Pre-flight`, a `## T<k>` section or `## Final
// sign-off` (Kind "preflight", "task", "final" or "other").
type RubricSection struct {
	Title string `json:"title"`
	Line  int    `json:"line"`
	Kind  string `json:"kind"`
	Task  int    `json:"task,omitempty"`
	Rows  []Row  `json:"rows"`
}

// Row is one check: `| Check | Command | Expected (PASS) | FAIL cites |`.
// Command is the code span's content with `\|` unescaped. Literal means
// Expected is a single code span (compared with trimmed stdout); otherwise
// Expected is a note for a human.
type Row struct {
	Line     int    `json:"line"`
	Check    string `json:"check"`
	Command  string `json:"command"`
	Expected string `json:"expected"`
	Literal  bool   `json:"literal"`
	Cites    string `json:"cites,omitempty"`
}

// TestPlan is a story's plan.md (tests only).
type TestPlan struct {
	Doc
	Sections  []*TestSection `json:"sections"`
	Stray     []*TestDecl    `json:"stray,omitempty"` // test bullets outside any task section
	Count     int            `json:"count,omitempty"` // the `Test count: N` footer, when present
	CountLine int            `json:"count_line,omitempty"`
}

// TestSection is a `## T<k>` section of plan.md.
type TestSection struct {
	Task  int         `json:"task"`
	Title string      `json:"title"`
	Line  int         `json:"line"`
	Tests []*TestDecl `json:"tests"`
}

// TestDecl is one declared test: `- [ ] `path::Name` — description`.
type TestDecl struct {
	ID         string `json:"id"`   // `path::Name` or `path::Name/sub`, as written
	Path       string `json:"path"` // repo-relative test file
	Name       string `json:"name"`
	Sub        string `json:"sub,omitempty"`
	Line       int    `json:"line"`
	Checked    bool   `json:"checked,omitempty"`
	PassOnRed  bool   `json:"pass_on_red,omitempty"`
	Reason     string `json:"pass_on_red_reason,omitempty"`
	Desc       string `json:"description,omitempty"`
	wellFormed bool
}

// PlanReady is a story's plan-ready.md (the RED→GREEN handoff; ticked on
// GREEN pass).
type PlanReady struct {
	Doc
	FromRedAt string      `json:"from_red_at,omitempty"`
	Boxes     []*ReadyBox `json:"boxes"`
}

// ReadyBox is one checkbox of plan-ready.md.
type ReadyBox struct {
	Task    int    `json:"task,omitempty"`
	TestID  string `json:"test_id,omitempty"`
	Line    int    `json:"line"`
	Checked bool   `json:"checked"`
	Note    string `json:"note,omitempty"`
}

// Unticked returns the boxes not yet ticked.
func (p *PlanReady) Unticked() []*ReadyBox {
	var out []*ReadyBox
	for _, b := range p.Boxes {
		if !b.Checked {
			out = append(out, b)
		}
	}
	return out
}
