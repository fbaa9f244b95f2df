package gates

import (
	"context"
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
)

// PhasePlan is the exec-log phase of the planning→execution gate's
// verdicts. Their Tree is the plan's tree id (plan.Sprint.TreeID), so an
// edit to any planning file voids them.
const PhasePlan = "plan"

// PlanResult is what PlanCheck judged and stored.
type PlanResult struct {
	Verdict  Verdict
	Findings []plan.Finding
	// Stored is the exec-log entry that holds the verdict: a new one, or
	// the newest earlier one when it already says the same of the same
	// tree (checking an unchanged plan twice writes nothing).
	Stored execlog.Entry
	New    bool
}

// PlanCheck runs the plan's check and stores the verdict where the
// dispatch guard (PlanGate) and the supervisor read it: an entry on the
// execution log (phase "plan", the plan's tree id) and, when rec is not
// nil, a record of kind "plan-check" naming it. A FAIL carries one reason
// per error finding (class: the rule; paths: file:line).
func PlanCheck(ctx context.Context, log *execlog.Log, rec *record.Store, s *plan.Sprint, actor string) (*PlanResult, error) {
	fs := plan.Check(s)
	v := Verdict{Gate: PhasePlan, Result: PASS}
	var reasons []execlog.Reason
	errs := 0
	for _, f := range fs {
		if f.Severity != plan.Error {
			continue
		}
		errs++
		// The rule (story.missing_connections) as a label: dots become "_".
		r := Reason{Class: strings.ReplaceAll(f.Rule, ".", "_"), Detail: f.Message, Paths: []string{fmt.Sprintf("%s:%d", f.File, f.Line)}}
		v.Reasons = append(v.Reasons, r)
		reasons = append(reasons, execlog.Reason{Class: r.Class, Detail: r.Detail, Paths: r.Paths})
	}
	if errs > 0 {
		v.Result = FAIL
	}
	res := &PlanResult{Verdict: v, Findings: fs}
	prev, ok, err := latestPlanVerdict(ctx, log, s.TreeID)
	if err != nil {
		return nil, err
	}
	if ok && prev.Result == string(v.Result) && prev.Sprint == s.Number {
		res.Stored = prev
		return res, nil
	}
	detail := fmt.Sprintf("sprint %d plan (%s): %d stories, %d tasks, %d tests; %d error(s)", s.Number, s.Dir,
		s.Summary().Stories, s.Summary().Tasks, s.Summary().Tests, errs)
	e, err := log.Append(ctx, execlog.Entry{Actor: actor, Sprint: s.Number, Phase: PhasePlan, Event: execlog.EventVerdict,
		Result: string(v.Result), Tree: s.TreeID, Reasons: reasons, Detail: detail})
	if err != nil {
		return nil, err
	}
	res.Stored, res.New = e, true
	if rec != nil {
		var body strings.Builder
		fmt.Fprintf(&body, "%s\n\nexec entry %s; plan tree %s\n", detail, e.ID, s.TreeID)
		for _, r := range v.Reasons {
			fmt.Fprintf(&body, "- %s %s: %s\n", strings.Join(r.Paths, ", "), r.Class, r.Detail)
		}
		if _, err := rec.Append(ctx, record.AppendInput{Kind: "plan-check",
			Claim:              fmt.Sprintf("sprint %d plan check: %s", s.Number, v.Result),
			VerificationAnchor: "git ideate plan check --sprint " + fmt.Sprint(s.Number),
			Scope:              s.Dir, Content: body.String(),
			Source: record.Source{CapturePoint: "plan-check"}}); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// latestPlanVerdict is the newest plan verdict stored for tree.
func latestPlanVerdict(ctx context.Context, log *execlog.Log, tree string) (execlog.Entry, bool, error) {
	es, err := log.List(ctx, execlog.Filter{Phase: PhasePlan, Event: execlog.EventVerdict})
	if err != nil {
		return execlog.Entry{}, false, err
	}
	for _, e := range es {
		if e.Tree == tree {
			return e, true, nil
		}
	}
	return execlog.Entry{}, false, nil
}

// PlanGateName is the planning→execution gate before a dispatch.
const PlanGateName Name = "plan"

// PlanGate is the planning→execution gate before a dispatch: an agent of
// an execution role (Input.Dispatch: the role, or `<plugin>:<role>`) may
// be started only while the newest verdict stored for the current plan's
// tree is a PASS. No verdict for this tree (never checked, or the plan was
// edited since) and a FAIL both FAIL; a plan that cannot be loaded is
// UNVERIFIABLE. When in.Task names the task dispatched, every unit it
// waits for (its `Depends on:`, the waves before its own; plan.Schedule)
// must have passed GREEN: the newest green verdict of each is a PASS, else
// FAIL dependency_open naming them; a task the checked plan does not list
// is FAIL not_in_plan. This holds however the task was started. Any other
// input passes: the gate has nothing to say about it. open gives the execution log and the sprint in force for in.
func PlanGate(open func(ctx context.Context, in Input) (*execlog.Log, *plan.Sprint, error)) Gate {
	return Func(func(ctx context.Context, in Input) (Verdict, error) {
		role := RoleOf(in.Dispatch)
		if in.Point != BeforeTool || !IsExecutionRole(role) {
			return Verdict{Result: PASS}, nil
		}
		log, s, err := open(ctx, in)
		if err != nil {
			return Verdict{Result: UNVERIFIABLE, Reasons: []Reason{{Class: "plan_unreadable",
				Detail: "the sprint's plan cannot be read, so no execution agent may start: " + errText(err)}}}, nil
		}
		e, ok, err := latestPlanVerdict(ctx, log, s.TreeID)
		if err != nil {
			return Verdict{}, err
		}
		switch {
		case !ok:
			return Verdict{Result: FAIL, Reasons: []Reason{{Class: "plan_unchecked",
				Detail: fmt.Sprintf("no plan check is stored for sprint %d's current plan (tree %.12s; never checked, or edited since): run `git ideate plan check` before dispatching %s", s.Number, s.TreeID, in.Dispatch)}}}, nil
		case e.Result != string(PASS):
			return Verdict{Result: FAIL, Reasons: []Reason{{Class: "plan_failed",
				Detail: fmt.Sprintf("sprint %d's plan failed its check (exec %s, %d finding(s)): fix it and run `git ideate plan check` before dispatching %s", s.Number, e.ID, len(e.Reasons), in.Dispatch)}}}, nil
		}
		if in.Task == "" {
			return Verdict{Result: PASS}, nil
		}
		return dependenciesPassed(ctx, log, s, in.Task)
	})
}

// dependenciesPassed checks that every unit task waits for passed GREEN.
func dependenciesPassed(ctx context.Context, log *execlog.Log, s *plan.Sprint, task string) (Verdict, error) {
	var unit *plan.Unit
	units := plan.Schedule(s)
	for i := range units {
		if units[i].Ref == task {
			unit = &units[i]
		}
	}
	if unit == nil {
		return Verdict{Result: FAIL, Reasons: []Reason{{Class: "not_in_plan",
			Detail: fmt.Sprintf("task %s is not in sprint %d's checked plan, so its place in the waves is unknown", task, s.Number)}}}, nil
	}
	if len(unit.After) == 0 {
		return Verdict{Result: PASS}, nil
	}
	green := map[string]string{} // task → its newest green result
	err := log.Each(ctx, func(e execlog.Entry) bool {
		if e.Phase == "green" && e.Event == execlog.EventVerdict {
			if _, seen := green[e.Task]; !seen {
				green[e.Task] = e.Result
			}
		}
		return true
	})
	if err != nil {
		return Verdict{}, err
	}
	var open []string
	for _, ref := range unit.After {
		if green[ref] != string(PASS) {
			open = append(open, ref)
		}
	}
	if len(open) == 0 {
		return Verdict{Result: PASS}, nil
	}
	return Verdict{Result: FAIL, Reasons: []Reason{{Class: "dependency_open", Paths: open,
		Detail: fmt.Sprintf("task %s (wave %d) waits for %s, which %s not passed GREEN yet: dispatch it when they have", task, unit.Wave,
			strings.Join(open, ", "), map[bool]string{true: "has", false: "have"}[len(open) == 1])}}}, nil
}
