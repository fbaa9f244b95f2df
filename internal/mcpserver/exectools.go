package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/testrun"
)

// The execution discipline's tools: the plan (check, import) and the
// test-outcome engine (classify). They call the same library functions as
// the CLI's `plan check|import` and `test classify`.

var argSprint = arg{"sprint", posInt, "Sprint number (default: the highest-numbered docs/agents/sprint<N>)."}

func execTools() []toolDef {
	return []toolDef{
		{name: "plan_check", run: planCheck,
			desc:   "The planning→execution gate's check: validate the sprint's planning artifacts (docs/agents/sprint<N>/). verdict PASS, or FAIL with each finding (file, line, rule, message). Structural only. The verdict is stored on the execution log (the plan gate reads it).",
			schema: obj(nil, argSprint)},
		{name: "plan_show", run: planShow, readOnly: true,
			desc:   "The sprint's schedule as read from its plan: each task (or story without tasks) with its wave, title, scope files, declared tests and what it waits for; plus the plan's tree id and counts.",
			schema: obj(nil, argSprint)},
		{name: "plan_import", run: planImport, long: true,
			desc:   "Make the board hold the sprint: a parent item per story, an item per task with its wave and dependencies as depends_on, so work_list's claimable items are the tasks whose wave may start. Idempotent (keyed by task id); refused with GATE_FAIL unless plan_check passes.",
			schema: obj([]string{"actor_human"}, argSprint, argHuman, argAgent, argTenant)},
		{name: "exec_log", run: execLog, readOnly: true,
			desc: "The execution log, newest first: gate verdicts (phase red|scaffold|green|final|plan, result PASS|FAIL|UNVERIFIABLE with reason classes, the judged commit) and other execution events. Advance a task only on a stored PASS. Paged like record_read: pass next_cursor back as cursor until it is null (truncated: the 40k-character budget cut this page).",
			schema: obj(nil, arg{"task", str, "Only this task (S1-01/T2)."}, arg{"phase", str, "Only this phase (red, scaffold, green, final, plan, …)."},
				arg{"result", `"type":"string","enum":["PASS","FAIL","UNVERIFIABLE"]`, "Only verdicts with this result."},
				arg{"include_tests", boolean, "Include each verdict's per-test outcomes (default: tests is null)."}, argLimit, argCursor)},
		{name: "escalations", run: escalations, readOnly: true,
			desc:   "The escalations on the execution log, newest first: a task whose revision was exhausted or a stalled wave, with its class (foundation-poisoning, isolated, scope-defect, no-progress, budget), decision (halt-chain, continue, human, hard-stop) and evidence (verdict, failing tests, dependents, halted worktrees). Decide them at the next planning session.",
			schema: obj(nil, argLimit)},
		{name: "gate_run", run: gateRun, long: true,
			desc: "Judge a task's committed worktree HEAD with one gate (red, scaffold, green, structure, final) and store the verdict on the execution log and as a note on the commit. result PASS, FAIL or UNVERIFIABLE (never a pass) with reason classes, per-test outcomes and paths. It runs tests: minutes.",
			schema: obj([]string{"gate", "task"}, arg{"gate", `"type":"string","enum":["red","scaffold","green","structure","final"]`, "The gate."},
				arg{"task", str, "The task (S1-01/T1), started with git ideate task start."},
				arg{"attempt", posInt, "Attempt the verdict is stored under (default: the task's)."},
				arg{"timeout_s", posInt, "Seconds each test run may take (default 600)."}, argSprint)},
		{name: "test_run", run: testRun, long: true,
			desc: "Run a task's declared tests in its worktree (the standards file's runner): one outcome per test id, as test_classify gives. A committed worktree's run is recorded on the task's ref for the gates; uncommitted work is not (note says why). Minutes.",
			schema: obj([]string{"task"}, arg{"task", str, "The task (S1-01/T1)."},
				arg{"label", str, "What the run is for (red, green, …; default run)."},
				arg{"attempt", posInt, "Attempt to record under (default: the task's)."},
				arg{"timeout_s", posInt, "Seconds before the run is killed (default 600)."}, argSprint)},
		{name: "test_classify", run: testClassify, readOnly: true,
			desc: "Read a test runner's output and return one outcome per test id (PASS, FAIL_ASSERT, FAIL_STUB, FAIL_ERROR, ERROR_SETUP, BUILD_FAIL, NOT_RUN, TIMEOUT, SKIP). An output that cannot be read in the declared format is an UNVERIFIABLE error, never a guess.",
			schema: obj([]string{"output", "format"}, arg{"output", str, "The runner's output (go test -json lines, a JUnit XML report, or jest/vitest JSON)."},
				arg{"format", `"type":"string","enum":["go-test-json","junit-xml","jest-json"]`, "The output's format."},
				arg{"dialect", str, "Producer (junit-xml needs one): " + testrun.DialectSpellings(testrun.JUnitXML) + "; jest-json takes " + testrun.DialectSpellings(testrun.JestJSON) + "."},
				arg{"declared", strArr, "Test ids the run must account for, as the plan writes them (path::Name) or as the runner does; each gets exactly one outcome (NOT_RUN when never named)."},
				arg{"stub_markers", strArr, "Texts that make a failure FAIL_STUB (default SUB-AGENT-TODO)."},
				arg{"root", str, "Prefix cut from absolute file paths."},
				arg{"timed_out", boolean, "The run was killed at its deadline."})},
	}
}

// sprintOf loads the sprint the arguments name.
func (b *Backend) sprintOf(ctx context.Context, n int) (*plan.Sprint, error) {
	if b.Plan == nil {
		return nil, apperr.New(apperr.Internal, "this server cannot read plans")
	}
	return b.Plan(ctx, n)
}

type planCheckOut struct {
	OK       bool           `json:"ok"`
	Verdict  string         `json:"verdict"` // PASS | FAIL
	Sprint   int            `json:"sprint"`
	Dir      string         `json:"dir"`
	Tree     string         `json:"tree"`
	Summary  plan.Summary   `json:"summary"`
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`
	Findings []plan.Finding `json:"findings"`
	Stored   string         `json:"stored,omitempty"` // the exec-log entry holding the verdict
}

func planCheck(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Sprint int }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	s, err := b.sprintOf(ctx, a.Sprint)
	if err != nil {
		return nil, err
	}
	fs := plan.Check(s)
	out := planCheckOut{OK: true, Verdict: "PASS", Sprint: s.Number, Dir: s.Dir, Tree: s.TreeID, Summary: s.Summary(), Findings: fs}
	if out.Findings == nil {
		out.Findings = []plan.Finding{}
	}
	out.Errors, out.Warnings = plan.Counts(fs)
	if out.Errors > 0 {
		out.Verdict = "FAIL"
	}
	if b.Exec != nil {
		res, err := gates.PlanCheck(ctx, b.Exec, b.Record, s, b.Session)
		if err != nil {
			return nil, err
		}
		out.Stored = res.Stored.ID
	}
	return out, nil
}

type planUnit struct {
	plan.Unit
	Title string   `json:"title,omitempty"`
	Scope []string `json:"scope,omitempty"`
	Tests []string `json:"tests,omitempty"`
}

func planShow(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Sprint int }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	s, err := b.sprintOf(ctx, a.Sprint)
	if err != nil {
		return nil, err
	}
	var units []planUnit
	for _, u := range plan.Schedule(s) {
		pu := planUnit{Unit: u}
		if u.Task != nil {
			pu.Title, pu.Scope = u.Task.Title, u.Task.Files
			if u.Dir != nil && u.Dir.TestPlan != nil {
				for _, sec := range u.Dir.TestPlan.Sections {
					if sec.Task == u.Task.Num {
						for _, d := range sec.Tests {
							pu.Tests = append(pu.Tests, d.ID)
						}
					}
				}
			}
		}
		units = append(units, pu)
	}
	kept, cut, err := paging.Trim(units, paging.CompactLen)
	if err != nil {
		return nil, err
	}
	return struct {
		OK        bool         `json:"ok"`
		Sprint    int          `json:"sprint"`
		Dir       string       `json:"dir"`
		Tree      string       `json:"tree"`
		Summary   plan.Summary `json:"summary"`
		Units     []planUnit   `json:"units"`
		Truncated bool         `json:"truncated"`
	}{true, s.Number, s.Dir, s.TreeID, s.Summary(), kept, cut}, nil
}

func planImport(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Sprint                           int
		ActorHuman, ActorAgent, TenantID string
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	if b.Git == nil {
		return nil, apperr.New(apperr.Internal, "this server cannot import plans")
	}
	s, err := b.sprintOf(ctx, a.Sprint)
	if err != nil {
		return nil, err
	}
	res, err := plan.Import(ctx, b.Git, b.Board, s, plan.ImportInput{Actor: board.Actor{Human: a.ActorHuman, Agent: a.ActorAgent}, Tenant: a.TenantID})
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		*plan.ImportResult
	}{true, res}, nil
}

type execLogOut struct {
	OK        bool            `json:"ok"`
	Entries   []execlog.Entry `json:"entries"`
	Truncated bool            `json:"truncated"`
	// NextCursor continues the read; null at the end.
	NextCursor *string `json:"next_cursor"`
}

func execLog(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Task, Phase, Result, Cursor string
		IncludeTests                bool
		Limit                       *int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	if b.Exec == nil {
		return nil, apperr.New(apperr.Internal, "this server has no execution log")
	}
	filter := a.Task + "\x00" + a.Phase + "\x00" + a.Result
	pos, err := paging.Position(a.Cursor, "exec", filter, 1)
	if err != nil {
		return nil, err
	}
	f := execlog.Filter{Task: a.Task, Phase: a.Phase, Result: a.Result, Limit: paging.Limit(a.Limit) + 1}
	if pos != nil {
		f.Before = pos[0]
	}
	es, err := b.Exec.List(ctx, f)
	if err != nil {
		return nil, err
	}
	more := len(es) == f.Limit
	if more {
		es = es[:len(es)-1]
	}
	if !a.IncludeTests {
		for i := range es {
			es[i].Tests = nil
		}
	}
	kept, next, err := paging.Finish(es, more, paging.CompactLen, "exec", filter, func(e execlog.Entry) []string { return []string{e.ID} })
	if err != nil {
		return nil, err
	}
	if kept == nil {
		kept = []execlog.Entry{}
	}
	return execLogOut{OK: true, Entries: kept, Truncated: next != nil && len(kept) < len(es), NextCursor: next}, nil
}

func gateRun(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Gate, Task                string
		Attempt, TimeoutS, Sprint int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	if b.Gates == nil {
		return nil, apperr.New(apperr.Internal, "this server cannot run gates")
	}
	if a.TimeoutS == 0 {
		a.TimeoutS = 600
	}
	reg, log, err := b.Gates(a.Sprint)
	if err != nil {
		return nil, err
	}
	v, err := gates.Judge(ctx, reg, log, gates.Name(a.Gate), gates.Input{Task: a.Task, Attempt: a.Attempt, Timeout: time.Duration(a.TimeoutS) * time.Second})
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		gates.Verdict
	}{true, v}, nil
}

func testRun(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Task, Label               string
		Attempt, TimeoutS, Sprint int
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	if b.TaskDeps == nil {
		return nil, apperr.New(apperr.Internal, "this server cannot run tests")
	}
	if a.TimeoutS == 0 {
		a.TimeoutS = 600
	}
	d, err := b.TaskDeps(a.Sprint)
	if err != nil {
		return nil, err
	}
	res, err := gates.TestRun(ctx, d, gates.TestRunInput{Task: a.Task, Label: a.Label, Attempt: a.Attempt, Timeout: time.Duration(a.TimeoutS) * time.Second})
	if res == nil {
		return nil, err
	}
	out := struct {
		OK bool `json:"ok"`
		*gates.TestRunResult
		Error string `json:"error,omitempty"`
	}{OK: true, TestRunResult: res}
	if err != nil {
		// The run ended badly (a timeout, a runner that died) but has
		// outcomes: they are the answer, with the reason beside them.
		out.Error = string(apperr.CodeOf(err)) + ": " + apperr.Message(err)
	}
	return out, nil
}

func testClassify(_ context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct {
		Output, Format, Dialect, Root string
		Declared, StubMarkers         []string
		TimedOut                      bool
	}
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	top := ""
	if b.Git != nil {
		top = b.Git.Repo().WorkTree
	}
	rep, err := gates.Classify(strings.NewReader(a.Output), testrun.Options{Format: testrun.Format(a.Format),
		Dialect: testrun.Dialect(a.Dialect), Declared: a.Declared, StubMarkers: a.StubMarkers, Root: a.Root, TimedOut: a.TimedOut}, top)
	if err != nil {
		return nil, err
	}
	return struct {
		OK bool `json:"ok"`
		*testrun.Report
	}{true, rep}, nil
}

type escalationsOut struct {
	OK          bool                  `json:"ok"`
	Escalations []revision.Escalation `json:"escalations"`
	Truncated   bool                  `json:"truncated"`
}

func escalations(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Limit *int }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	d, err := b.revisionFor("", 0)
	if err != nil {
		return nil, err
	}
	es, err := d.Escalations(ctx, paging.Limit(a.Limit))
	if err != nil {
		return nil, err
	}
	kept, cut, err := paging.Trim(es, paging.CompactLen)
	if err != nil {
		return nil, err
	}
	if kept == nil {
		kept = []revision.Escalation{}
	}
	return escalationsOut{OK: true, Escalations: kept, Truncated: cut}, nil
}
