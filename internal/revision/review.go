package revision

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/worktree"
)

// reviewPhase reports the review phases: a failed verdict of one of these
// is a finding on work GREEN already passed, revised through the GREEN
// task it implicates.
func reviewPhase(p string) bool { return p == "structure" || p == "final" }

// fixableClass reports the failing reason classes of the structure and
// final gates that a GREEN worker can fix in its own code: a new symbol
// nothing reaches, a copy, a second implementation of a declared role, a
// failing matrix command, a skipped test, an unticked box, uncommitted
// work. Anything else (a matrix that cannot run, no plan-ready.md, a box
// ticked by hand, a plan or scope defect) is not the worker's to fix.
func fixableClass(c string) bool {
	switch c {
	case "orphan", "near_copy", "duplicate_helper", "parallel_impl", "matrix", "skip", "unticked", "uncommitted", "no_green":
		return true
	}
	return false
}

// Review phase and event of a re-spawn on the execution log.
const (
	RevisePhase  = "revise"
	EventRespawn = "respawn"
)

// CauseFindings: a structural or final finding that is not isolated and
// fixable, escalated instead of re-spawned.
const CauseFindings = "findings"

// Respawn says which GREEN task a structural or final finding re-opened.
type Respawn struct {
	Judged   string   `json:"judged"`   // the task the gate judged
	Verdict  string   `json:"verdict"`  // "structure FAIL (exec …)"
	Task     string   `json:"task"`     // the implicated GREEN task, re-opened
	Findings []string `json:"findings"` // the failing reasons, one line each
	Logged   string   `json:"logged"`   // the execution log entry of the re-spawn
}

// failingReasons are the reasons of a review verdict that can have made
// it fail: every reason but the structure gate's weaker_check note (the
// execution log keeps no severity, so a medium structural finding on a
// FAIL is counted too: it only adds a path to place).
func failingReasons(v execlog.Entry) []execlog.Reason {
	var out []execlog.Reason
	for _, r := range v.Reasons {
		if v.Phase == "structure" && r.Class == "weaker_check" {
			continue
		}
		out = append(out, r)
	}
	return out
}

// review handles a failed structure or final verdict v of attempt k of
// the judged task (ct). Findings that are fixable and implicate exactly
// one task with a worktree, a GREEN task, re-spawn it: its next attempt
// gets an init.md turn whose feedback is v. Anything else escalates
// (cause CauseFindings), whatever attempts are left. ok is false when
// the implicated task is the judged one and Open's own path goes on.
func (d Deps) review(ctx context.Context, ct *worktree.Contract, k, max int, v execlog.Entry) (*Attempt, bool, error) {
	reasons := failingReasons(v)
	fixable := v.Result == execlog.FAIL && len(reasons) > 0
	for _, r := range reasons {
		if !fixableClass(r.Class) {
			fixable = false
		}
	}
	var implicated []string
	if fixable {
		var err error
		if implicated, err = d.implicated(ctx, ct.Task, reasons); err != nil {
			return nil, false, err
		}
	}
	if !fixable || len(implicated) != 1 {
		esc, err := d.Escalate(ctx, ct.Task, CauseFindings, &v)
		if err != nil {
			return nil, false, err
		}
		return &Attempt{Task: ct.Task, Attempt: k, Max: max, Role: ct.Role, Escalation: esc}, true, nil
	}
	target := implicated[0]
	if target == ct.Task {
		if ct.Role != "green-worker" {
			esc, err := d.Escalate(ctx, ct.Task, CauseFindings, &v)
			if err != nil {
				return nil, false, err
			}
			return &Attempt{Task: ct.Task, Attempt: k, Max: max, Role: ct.Role, Escalation: esc}, true, nil
		}
		return nil, false, nil // the task's own next attempt, as for any failure
	}
	a, err := d.respawn(ctx, ct.Task, target, max, v, reasons)
	return a, true, err
}

// implicated are the tasks whose diffs hold the paths of the failing
// reasons: the judged task's own when a reason names no path (the final
// gate's matrix, its plan-ready ticks), else for each path the open tasks
// whose worktree diff from their base holds that file. A path no task's diff holds implicates nobody, which
// leaves the finding unplaced (nil).
func (d Deps) implicated(ctx context.Context, judged string, reasons []execlog.Reason) ([]string, error) {
	set := map[string]bool{}
	var files []string
	for _, r := range reasons {
		if len(r.Paths) == 0 || r.Class == "unticked" || r.Class == "no_green" {
			set[judged] = true
			continue
		}
		for _, p := range r.Paths {
			f := p
			if i := strings.LastIndexByte(p, ':'); i > 0 && strings.Trim(p[i+1:], "0123456789") == "" {
				f = p[:i]
			}
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return keys(set), nil
	}
	cands := []string{judged}
	open, err := d.Tasks.List(ctx, false, nil)
	if err != nil {
		return nil, err
	}
	for _, t := range open {
		if t.Task != judged {
			cands = append(cands, t.Task)
		}
	}
	held := map[string]map[string]bool{} // task → changed paths
	for _, t := range cands {
		c, ch, err := d.Tasks.Changes(ctx, t)
		if err != nil || c == nil || ch == nil || c.Status != worktree.StatusOpen {
			continue // no contract, no worktree, closed: nothing to re-open
		}
		m := map[string]bool{}
		for _, x := range ch.List {
			m[x.Path] = true
		}
		held[t] = m
	}
	for _, f := range files {
		found := false
		for t, m := range held {
			if m[f] {
				set[t] = true
				found = true
			}
		}
		if !found {
			return nil, nil
		}
	}
	return keys(set), nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// respawn re-opens the implicated GREEN task for its next attempt with v
// as the feedback, once per verdict (a second call materializes the
// attempt it opened), and logs it.
func (d Deps) respawn(ctx context.Context, judged, target string, max int, v execlog.Entry, reasons []execlog.Reason) (*Attempt, error) {
	tc, err := d.Tasks.Contract(target)
	if err != nil {
		return nil, err
	}
	if prev, err := d.respawnOf(ctx, judged, v.ID); err != nil {
		return nil, err
	} else if prev != nil {
		cur, ok, err := d.Tasks.AttemptFile(target, tc.Attempt, worktree.InitFile)
		if err != nil {
			return nil, err
		}
		if ok {
			a, err := d.materialize(target, tc.Attempt, max, tc.Role, cur, false)
			if a != nil {
				a.Respawn = prev
			}
			return a, err
		}
	}
	if tc.Role != "green-worker" || tc.Attempt >= max {
		esc, err := d.Escalate(ctx, judged, CauseFindings, &v)
		if err != nil {
			return nil, err
		}
		jc, _ := d.Tasks.Contract(judged)
		a := &Attempt{Task: judged, Max: max, Escalation: esc}
		if jc != nil {
			a.Attempt, a.Role = jc.Attempt, jc.Role
		}
		return a, nil
	}
	if _, err := d.CaptureOutput(ctx, target); err != nil {
		return nil, err
	}
	if _, has, err := d.Tasks.AttemptFile(target, max1(tc.Attempt), worktree.InitFile); err != nil {
		return nil, err
	} else if has {
		if tc, err = d.Tasks.NextAttempt(ctx, target); err != nil {
			return nil, err
		}
	}
	a, err := d.writeTurn(ctx, tc, tc.Attempt, max, &v)
	if err != nil {
		return nil, err
	}
	rs := &Respawn{Judged: judged, Task: target, Verdict: v.Phase + " " + v.Result + " (exec " + v.ID + ")"}
	x := execlog.Entry{Actor: "git-ideate revision", Task: judged, Attempt: v.Attempt, Phase: RevisePhase, Event: EventRespawn,
		Detail: fmt.Sprintf("%s: %s implicates %s only (its diff holds the paths), and every finding is fixable: %s re-opened for attempt %d with the findings as feedback", judged, rs.Verdict, target, target, tc.Attempt)}
	x.Reasons = append(x.Reasons, execlog.Reason{Class: "verdict", Detail: v.ID}, execlog.Reason{Class: "implicated", Detail: target})
	for _, r := range reasons {
		line := r.Class + ": " + r.Detail
		rs.Findings = append(rs.Findings, line)
		x.Reasons = append(x.Reasons, execlog.Reason{Class: "finding", Detail: line, Paths: r.Paths})
	}
	e, err := d.Exec.Append(ctx, x)
	if err != nil {
		return nil, err
	}
	rs.Logged = e.ID
	a.Respawn = rs
	return a, nil
}

func max1(k int) int {
	if k < 1 {
		return 1
	}
	return k
}

// respawnOf is the re-spawn logged for a verdict, nil when none.
func (d Deps) respawnOf(ctx context.Context, judged, verdict string) (*Respawn, error) {
	es, err := d.Exec.List(ctx, execlog.Filter{Task: judged, Phase: RevisePhase, Event: EventRespawn})
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		rs := &Respawn{Judged: judged, Logged: e.ID}
		match := false
		for _, r := range e.Reasons {
			switch r.Class {
			case "verdict":
				match = r.Detail == verdict
			case "implicated":
				rs.Task = r.Detail
			case "finding":
				rs.Findings = append(rs.Findings, r.Detail)
			}
		}
		if match {
			return rs, nil
		}
	}
	return nil, nil
}
