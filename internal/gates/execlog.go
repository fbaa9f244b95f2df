package gates

import (
	"context"
	"strings"

	"github.com/ideate/git-ideate/internal/execlog"
)

// ExecLog keeps verdicts in the execution log: each one entry (Event
// "verdict", Phase the gate's name) with its task, attempt, commit, tree,
// base, reasons, tests and offending paths, which also notes the judged
// commit (execlog.Log.Append).
func ExecLog(l *execlog.Log) VerdictLog { return execLog{l} }

type execLog struct{ l *execlog.Log }

// Actor is who the stored verdicts name as their writer.
const Actor = "git-ideate gate"

// Append stores v unless the newest verdict of the same gate on the same
// task, attempt and commit already says the same (result and reason
// classes): a gate asked again about unchanged facts adds nothing, so the
// log and retro count judgements, not repetitions. Judge holds the task's
// lock around it, so the read and the write see no other verdict between.
func (x execLog) Append(ctx context.Context, v Verdict) error {
	e := Entry(v)
	if e.Task != "" && e.Commit != "" {
		prev, found, err := x.l.Latest(ctx, e.Task, e.Phase, e.Commit)
		if err != nil {
			return err
		}
		if found && prev.Commit == e.Commit && prev.Attempt == e.Attempt && prev.Result == e.Result && classes(prev.Reasons) == classes(e.Reasons) {
			return nil
		}
	}
	_, err := x.l.Append(ctx, e)
	return err
}

func classes(rs []execlog.Reason) string {
	var b []string
	for _, r := range rs {
		b = append(b, r.Class)
	}
	return strings.Join(b, ",")
}

func (x execLog) LatestPass(ctx context.Context, task string, gate Name) (string, bool, error) {
	es, err := x.l.List(ctx, execlog.Filter{Task: task, Phase: string(gate), Event: execlog.EventVerdict, Result: string(PASS), Limit: 1})
	if err != nil || len(es) == 0 {
		return "", false, err
	}
	return es[0].Commit, es[0].Commit != "", nil
}

// Entry is v as an execution log entry.
func Entry(v Verdict) execlog.Entry {
	e := execlog.Entry{Actor: Actor, Sprint: v.Sprint, Wave: v.Wave, Story: v.Story, Task: v.Task, Attempt: v.Attempt,
		Phase: string(v.Gate), Event: execlog.EventVerdict, Result: string(v.Result),
		Commit: v.Commit, Tree: v.Tree, Base: v.Base}
	seen := map[string]bool{}
	for _, r := range v.Reasons {
		e.Reasons = append(e.Reasons, execlog.Reason{Class: r.Class, Detail: r.Detail, Paths: r.Paths, Severity: r.Severity})
		for _, p := range r.Paths {
			if !seen[p] {
				seen[p] = true
				e.Paths = append(e.Paths, p)
			}
		}
	}
	for _, t := range v.Tests {
		e.Tests = append(e.Tests, execlog.TestResult{ID: t.ID, Outcome: t.Outcome, Detail: t.Detail})
	}
	return e
}
