package revision

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/textfmt"
	"github.com/ideate/git-ideate/internal/worktree"
)

// Phase is the execution log phase of an escalation; its event is the
// class.
const Phase = "escalate"

// Escalation classes, and what each decides.
const (
	// FoundationPoisoning: the failing task has pending dependents — halt
	// that chain, abandon its in-flight worktrees, keep what is merged.
	FoundationPoisoning = "foundation-poisoning"
	// Isolated: nothing pending waits on it — other work continues; the
	// escalation is collected for the next planning session.
	Isolated = "isolated"
	// ScopeDefect: the verdicts say the plan or the task's scope is wrong
	// (work outside the scope, a plan the gate could not place) — a human
	// decides at the next planning session.
	ScopeDefect = "scope-defect"
	// NoProgress: a wave passed its gates and ticked no new box (a
	// stall) — hard stop.
	NoProgress = "no-progress"
	// Budget: the budget is spent — hard stop.
	Budget = "budget"
)

// Decisions.
const (
	DecideHalt     = "halt-chain"
	DecideContinue = "continue"
	DecideHuman    = "human"
	DecideStop     = "hard-stop"
)

// Causes of an escalation.
const (
	CauseAttempts   = "attempts-exhausted"
	CauseNoProgress = "no-progress"
	CauseBudget     = "budget"
)

// decisionOf is the decision an escalation class takes. (This and the
// sets below are switches, not package-level maps, which every process
// would build at init.)
func decisionOf(class string) string {
	switch class {
	case FoundationPoisoning:
		return DecideHalt
	case Isolated:
		return DecideContinue
	case ScopeDefect:
		return DecideHuman
	case NoProgress, Budget:
		return DecideStop
	}
	return ""
}

// scopeClass reports the reason classes that make a failure a scope or
// plan defect rather than the worker's.
func scopeClass(c string) bool {
	switch c {
	case "out_of_scope", "planning_artifact", "no_plan_ready", "plan_defect", "unknown_task", "no_scope":
		return true
	}
	return false
}

// Escalation is one escalation as the execution log keeps it.
type Escalation struct {
	ID         string   `json:"id"`
	At         string   `json:"at"`
	Sprint     int      `json:"sprint,omitempty"`
	Task       string   `json:"task,omitempty"`
	Attempt    int      `json:"attempt,omitempty"`
	Wave       int      `json:"wave,omitempty"`
	Class      string   `json:"class"`
	Decision   string   `json:"decision"`
	Cause      string   `json:"cause"`
	Verdict    string   `json:"verdict,omitempty"`
	Classes    []string `json:"reason_classes,omitempty"`
	Failing    []string `json:"failing_tests,omitempty"`
	Dependents []string `json:"dependents,omitempty"` // pending work waiting on the task
	Halted     []string `json:"halted,omitempty"`     // tasks whose in-flight worktrees were abandoned
	Kept       []string `json:"kept,omitempty"`       // dependents already done, left as they are
	Graph      string   `json:"graph"`                // where the dependency graph came from: board, plan, none
	// Evidence are the facts a no-progress escalation was decided from:
	// each task's GREEN PASS verdict and the plan-ready ticks.
	Evidence []string `json:"evidence,omitempty"`
	Summary  string   `json:"summary"`
	// Released is the board item whose claim the escalation released.
	Released string `json:"released,omitempty"`
	// outcomes are the failing tests' outcomes in the failed verdict.
	outcomes map[string]string
}

// Escalate classifies the task's failure against the dependency graph
// and the verdict, acts on the class (foundation-poisoning abandons the
// in-flight worktrees of the task's pending dependents; the failing
// task's own worktree and branch are kept for the planner) and logs the
// escalation with its evidence (Phase "escalate", Event the class). One
// escalation per task and attempt: a second call returns the first.
func (d Deps) Escalate(ctx context.Context, task, cause string, v *execlog.Entry) (*Escalation, error) {
	ct, err := d.Tasks.Contract(task)
	if err != nil {
		return nil, err
	}
	if prev, err := d.escalationOf(ctx, task, ct.Attempt); err != nil || prev != nil {
		return prev, err
	}
	esc := &Escalation{Task: task, Attempt: ct.Attempt, Cause: cause}
	if v != nil && v.ID != "" {
		esc.Verdict = v.Phase + " " + v.Result
		if len(v.Commit) >= 12 {
			esc.Verdict += " at " + v.Commit[:12]
		}
		esc.Verdict += " (" + v.ID + ")"
		seen := map[string]bool{}
		for _, r := range v.Reasons {
			if !seen[r.Class] {
				seen[r.Class] = true
				esc.Classes = append(esc.Classes, r.Class)
			}
		}
		esc.outcomes = map[string]string{}
		for _, t := range v.Tests {
			if t.Outcome != "PASS" && t.Outcome != "SKIP" {
				esc.Failing = append(esc.Failing, t.ID)
				esc.outcomes[t.ID] = t.Outcome
			}
		}
	}
	// Where in the plan: the sprint and the task's wave.
	if d.Plan != nil {
		if s, err := d.Plan(ctx); err == nil {
			esc.Sprint = s.Number
			for _, u := range plan.Schedule(s) {
				if u.Ref == task {
					esc.Wave = u.Wave
				}
			}
		}
	}
	deps, err := d.dependents(ctx, task)
	if err != nil {
		return nil, err
	}
	esc.Graph = deps.source
	esc.Kept = deps.done
	switch {
	case cause == CauseNoProgress:
		esc.Class = NoProgress
	case cause == CauseBudget:
		esc.Class = Budget
	case hasAny(esc.Classes, scopeClass):
		esc.Class = ScopeDefect
	case len(deps.pending) > 0:
		esc.Class = FoundationPoisoning
	default:
		esc.Class = Isolated
	}
	esc.Decision = decisionOf(esc.Class)
	esc.Dependents = deps.pending
	if esc.Class == FoundationPoisoning {
		for _, t := range deps.pending {
			c, err := d.Tasks.Contract(t)
			if err != nil || c.Status != worktree.StatusOpen {
				continue // not started, or closed: nothing in flight
			}
			if _, err := d.Tasks.Close(ctx, worktree.CloseInput{Task: t, Status: worktree.StatusAbandoned,
				Note: "halted: " + task + " failed under it (foundation-poisoning)"}); err != nil {
				return nil, err
			}
			esc.Halted = append(esc.Halted, t)
		}
	}
	esc.Summary = summary(esc)
	e, err := d.Exec.Append(ctx, entryOf(esc))
	if err != nil {
		return nil, err
	}
	esc.ID, esc.At = e.ID, e.At
	// The escalated task is no one's work any more until a human decides:
	// its claim is released (its worktree and branch stay for them).
	if ct.Item != "" && ct.Token != 0 && d.Board != nil {
		if _, err := d.Board.Release(ctx, ct.Item, ct.Token, "escalated: "+esc.Class+" ("+esc.ID+")"); err == nil {
			esc.Released = ct.Item
		}
	}
	return esc, nil
}

func hasAny(list []string, in func(string) bool) bool {
	for _, x := range list {
		if in(x) {
			return true
		}
	}
	return false
}

func summary(e *Escalation) string {
	var b strings.Builder
	if e.Task != "" {
		fmt.Fprintf(&b, "%s: %s after attempt %d", e.Task, e.Class, e.Attempt)
	} else {
		fmt.Fprintf(&b, "wave %d: %s", e.Wave, e.Class)
	}
	switch e.Class {
	case FoundationPoisoning:
		fmt.Fprintf(&b, " — %d pending task(s) wait on it (%s); the chain is halted", len(e.Dependents), strings.Join(e.Dependents, ", "))
		if len(e.Halted) > 0 {
			fmt.Fprintf(&b, ", in-flight worktrees abandoned: %s", strings.Join(e.Halted, ", "))
		}
		b.WriteString("; merged work is kept")
	case Isolated:
		b.WriteString(" — nothing pending waits on it; other work continues, collected for the next planning session")
	case ScopeDefect:
		b.WriteString(" — the verdicts point at the plan or the task's scope (" + strings.Join(e.Classes, ", ") + "); a human decides")
	case NoProgress:
		b.WriteString(" — the wave passed its gates and ticked no new plan-ready box; hard stop")
	case Budget:
		b.WriteString(" — the budget is spent; hard stop")
	}
	return b.String()
}

// entryOf is the escalation as an execution log entry: the class as the
// event, the summary as the detail, the evidence as reasons.
func entryOf(e *Escalation) execlog.Entry {
	x := execlog.Entry{Actor: "git-ideate revision", Sprint: e.Sprint, Task: e.Task, Attempt: e.Attempt, Wave: e.Wave, Phase: Phase, Event: e.Class, Detail: e.Summary}
	add := func(class, detail string) {
		if detail != "" {
			x.Reasons = append(x.Reasons, execlog.Reason{Class: class, Detail: detail})
		}
	}
	add("decision", e.Decision)
	add("cause", e.Cause)
	add("graph", e.Graph)
	add("verdict", e.Verdict)
	add("reason_classes", strings.Join(e.Classes, " "))
	add("dependents", strings.Join(e.Dependents, " "))
	add("halted", strings.Join(e.Halted, " "))
	add("kept", strings.Join(e.Kept, " "))
	for _, ev := range e.Evidence {
		add("evidence", ev)
	}
	for _, t := range e.Failing {
		x.Tests = append(x.Tests, execlog.TestResult{ID: t, Outcome: e.outcomes[t]})
	}
	return x
}

// fromEntry reads an escalation back from its log entry.
func fromEntry(x execlog.Entry) Escalation {
	e := Escalation{ID: x.ID, At: x.At, Sprint: x.Sprint, Task: x.Task, Attempt: x.Attempt, Wave: x.Wave, Class: x.Event, Summary: x.Detail}
	for _, r := range x.Reasons {
		switch r.Class {
		case "decision":
			e.Decision = r.Detail
		case "cause":
			e.Cause = r.Detail
		case "graph":
			e.Graph = r.Detail
		case "verdict":
			e.Verdict = r.Detail
		case "reason_classes":
			e.Classes = strings.Fields(r.Detail)
		case "dependents":
			e.Dependents = strings.Fields(r.Detail)
		case "halted":
			e.Halted = strings.Fields(r.Detail)
		case "kept":
			e.Kept = strings.Fields(r.Detail)
		case "evidence":
			e.Evidence = append(e.Evidence, r.Detail)
		}
	}
	for _, t := range x.Tests {
		e.Failing = append(e.Failing, t.ID)
	}
	return e
}

// Escalations lists the escalations on the execution log, newest first;
// limit 0 lists them all.
func (d Deps) Escalations(ctx context.Context, limit int) ([]Escalation, error) {
	es, err := d.Exec.List(ctx, execlog.Filter{Phase: Phase, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Escalation, 0, len(es))
	for _, x := range es {
		out = append(out, fromEntry(x))
	}
	return out, nil
}

func (d Deps) escalationOf(ctx context.Context, task string, attempt int) (*Escalation, error) {
	es, err := d.Exec.List(ctx, execlog.Filter{Task: task, Phase: Phase, Attempt: attempt, Limit: 1})
	if err != nil || len(es) == 0 {
		return nil, err
	}
	e := fromEntry(es[0])
	return &e, nil
}

// graph is what waits on a task.
type graph struct {
	source  string   // board, plan, none
	pending []string // open or in progress, transitively
	done    []string // done already
}

// dependents finds the tasks that wait on task, transitively: on the
// board (items the plan import wrote, depends_on) when it holds the task,
// else in the plan's schedule.
func (d Deps) dependents(ctx context.Context, task string) (graph, error) {
	if d.Board != nil {
		g, ok, err := d.boardDependents(ctx, task)
		if err != nil || ok {
			return g, err
		}
	}
	if d.Plan != nil {
		if s, err := d.Plan(ctx); err == nil && s != nil {
			return d.planDependents(s, task), nil
		}
	}
	return graph{source: "none"}, nil
}

func (d Deps) boardDependents(ctx context.Context, task string) (graph, bool, error) {
	type node struct {
		ref, status string
		deps        []string
	}
	byID := map[string]*node{}
	var self string
	limit := 500
	cursor := ""
	for {
		page, err := d.Board.List(ctx, board.ListRequest{Limit: &limit, Cursor: cursor, IncludeSpec: true, Archived: true})
		if err != nil {
			return graph{}, false, err
		}
		for _, r := range page.Items {
			if r.SpecFormat != plan.TaskFormat || r.Spec == nil {
				continue
			}
			ref, _ := plan.SpecKey(*r.Spec)
			if ref == "" {
				continue
			}
			byID[r.ID] = &node{ref: ref, status: r.Status, deps: r.DependsOn}
			live := r.Status == board.StatusOpen || r.Status == board.StatusInProgress
			if ref == task && (self == "" || live) {
				self = r.ID
			}
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if self == "" {
		return graph{}, false, nil
	}
	g := graph{source: "board"}
	seen := map[string]bool{self: true}
	frontier := []string{self}
	for len(frontier) > 0 {
		var next []string
		for id, n := range byID {
			if seen[id] {
				continue
			}
			for _, dep := range n.deps {
				for _, f := range frontier {
					if dep == f {
						seen[id] = true
						next = append(next, id)
					}
				}
			}
		}
		frontier = next
	}
	for id := range seen {
		if id == self {
			continue
		}
		n := byID[id]
		switch n.status {
		case board.StatusOpen, board.StatusInProgress:
			g.pending = append(g.pending, n.ref)
		case board.StatusDone:
			g.done = append(g.done, n.ref)
		}
	}
	sort.Strings(g.pending)
	sort.Strings(g.done)
	return g, true, nil
}

func (d Deps) planDependents(s *plan.Sprint, task string) graph {
	units := plan.Schedule(s)
	g := graph{source: "plan"}
	seen := map[string]bool{task: true}
	frontier := []string{task}
	for len(frontier) > 0 {
		var next []string
		for _, u := range units {
			if seen[u.Ref] || u.Task == nil {
				continue
			}
			for _, a := range u.After {
				for _, f := range frontier {
					if a == f {
						seen[u.Ref] = true
						next = append(next, u.Ref)
					}
				}
			}
		}
		frontier = next
	}
	for ref := range seen {
		if ref == task {
			continue
		}
		if c, err := d.Tasks.Contract(ref); err == nil && c.Status == worktree.StatusCompleted {
			g.done = append(g.done, ref)
		} else {
			g.pending = append(g.pending, ref)
		}
	}
	sort.Strings(g.pending)
	sort.Strings(g.done)
	return g
}

// Progress is what CheckWave found.
type Progress struct {
	Wave       int         `json:"wave"`
	Tasks      []string    `json:"tasks"`
	Passed     []string    `json:"passed"`  // tasks with a GREEN PASS
	Waiting    []string    `json:"waiting"` // tasks without one yet
	Ticked     int         `json:"ticked"`  // plan-ready boxes ticked in the sprint now
	Boxes      int         `json:"boxes"`
	Baseline   int         `json:"baseline"` // ticked when the wave before was checked
	Stalled    bool        `json:"stalled"`
	Recorded   string      `json:"recorded,omitempty"` // the progress entry, when the wave moved the ticks
	Escalation *Escalation `json:"escalation,omitempty"`
}

// ProgressPhase is the execution log phase of a wave's progress entry.
const ProgressPhase = "progress"

// CheckWave is the no-progress guard. When every task of the wave has a
// GREEN PASS, it counts the sprint's ticked plan-ready boxes: more than
// the count recorded after the wave before → progress (recorded, Phase
// "progress", Event "wave"); not more → a stall, escalated as no-progress
// (hard stop), with each task's GREEN PASS and the tick counts as its
// evidence. A wave with tasks still waiting is left alone. A wave
// already recorded is not judged again.
func (d Deps) CheckWave(ctx context.Context, wave int) (*Progress, error) {
	if d.Plan == nil {
		return nil, apperr.New(apperr.NotFound, "the no-progress guard needs the sprint's plan")
	}
	if wave < 1 {
		return nil, apperr.New(apperr.Schema, "wave must be 1 or more, not %d", wave)
	}
	s, err := d.Plan(ctx)
	if err != nil {
		return nil, err
	}
	p := &Progress{Wave: wave}
	var evidence []string
	for _, u := range plan.Schedule(s) {
		if u.Wave != wave || u.Task == nil {
			continue
		}
		p.Tasks = append(p.Tasks, u.Ref)
		if e, ok, err := latestGreen(ctx, d.Exec, u.Ref); err != nil {
			return nil, err
		} else if ok {
			p.Passed = append(p.Passed, u.Ref)
			at := ""
			if len(e.Commit) >= 12 {
				at = " at " + e.Commit[:12]
			}
			evidence = append(evidence, fmt.Sprintf("%s: green PASS%s (exec %s)", u.Ref, at, e.ID))
		} else {
			p.Waiting = append(p.Waiting, u.Ref)
		}
	}
	if len(p.Tasks) == 0 {
		return nil, apperr.New(apperr.NotFound, "the plan of sprint %d puts no task in wave %d", s.Number, wave)
	}
	for _, sd := range s.StoryDirs {
		if sd.PlanReady == nil {
			continue
		}
		for _, b := range sd.PlanReady.Boxes {
			p.Boxes++
			if b.Checked {
				p.Ticked++
			}
		}
	}
	es, err := d.Exec.List(ctx, execlog.Filter{Phase: ProgressPhase, Event: "wave"})
	if err != nil {
		return nil, err
	}
	for _, e := range es { // newest first
		if e.Wave == wave {
			p.Recorded = e.ID
			p.Baseline = ticksOf(e.Detail)
			return p, nil
		}
	}
	for _, e := range es {
		if e.Wave < wave {
			p.Baseline = ticksOf(e.Detail)
			break
		}
	}
	if len(p.Waiting) > 0 {
		return p, nil
	}
	if p.Ticked <= p.Baseline {
		p.Stalled = true
		if prev, err := d.Escalations(ctx, 0); err == nil {
			for i := range prev {
				if prev[i].Class == NoProgress && prev[i].Wave == wave {
					p.Escalation = &prev[i]
					return p, nil
				}
			}
		}
		evidence = append(evidence, fmt.Sprintf("plan-ready: %d of %d boxes ticked now, %d after the wave before", p.Ticked, p.Boxes, p.Baseline))
		esc := &Escalation{Wave: wave, Class: NoProgress, Decision: DecideStop, Cause: CauseNoProgress, Graph: "none",
			Dependents: p.Tasks, Evidence: evidence}
		esc.Summary = summary(esc) + fmt.Sprintf(" (%d of %d boxes ticked, %d before the wave; tasks: %s)", p.Ticked, p.Boxes, p.Baseline, strings.Join(p.Tasks, ", "))
		e, err := d.Exec.Append(ctx, entryOf(esc))
		if err != nil {
			return nil, err
		}
		esc.ID, esc.At = e.ID, e.At
		p.Escalation = esc
		return p, nil
	}
	e, err := d.Exec.Append(ctx, execlog.Entry{Actor: "git-ideate revision", Sprint: s.Number, Wave: wave, Phase: ProgressPhase, Event: "wave",
		Detail: fmt.Sprintf("ticked %d of %d plan-ready boxes after wave %d (%d before it)", p.Ticked, p.Boxes, wave, p.Baseline)})
	if err != nil {
		return nil, err
	}
	p.Recorded = e.ID
	return p, nil
}

// latestGreen returns the task's newest GREEN verdict when it passed.
func latestGreen(ctx context.Context, l *execlog.Log, task string) (execlog.Entry, bool, error) {
	e, ok, err := l.Latest(ctx, task, "green", "")
	return e, ok && e.Result == execlog.PASS, err
}

func ticksOf(detail string) int {
	f := strings.Fields(detail)
	if len(f) > 1 && f[0] == "ticked" {
		n, _ := strconv.Atoi(f[1])
		return n
	}
	return 0
}

// PrimeLines are the escalations for a planning session's priming, newest
// first, one line each (at most n).
func (d Deps) PrimeLines(ctx context.Context, n int) ([]string, error) {
	es, err := d.Escalations(ctx, n)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		out = append(out, textfmt.Fit(e.At+" "+e.Decision+": "+textfmt.OneLine(e.Summary), 400))
	}
	return out, nil
}
