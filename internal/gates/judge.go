package gates

import (
	"context"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore"
)

// VerdictLog is where verdicts are kept: the execution log (ExecLog adapts
// execlog.Log). Append stores a finished verdict (and notes the judged
// commit); LatestPass returns the commit of the task's newest PASS verdict
// of a gate.
type VerdictLog interface {
	Append(ctx context.Context, v Verdict) error
	LatestPass(ctx context.Context, task string, gate Name) (commit string, ok bool, err error)
}

// TaskLock returns the lock Judge holds per task: one flock per task
// under the clone's state directory (.git/ideate/gate-<task>.lock), apart
// from the worktree manager's own lock (which the gates take inside, to
// record runs). The kernel drops it when its holder dies.
func TaskLock(g *gitstore.Store) func(ctx context.Context, task string) (func(), error) {
	return func(ctx context.Context, task string) (func(), error) {
		return g.LockState(ctx, "gate-"+strings.ReplaceAll(task, "/", "+")+".lock")
	}
}

// Judge asks the gate called name about in and stores its verdict in log,
// then returns it. The verdict is stored only once the gate has finished:
// a gate cancelled or killed while it judges leaves no verdict (the
// returned one is UNVERIFIABLE and ctx's error comes with it), never a
// wrong one. While it judges and stores, Judge holds the task's lock
// (reg.Lock, when the registry has one), so two gates asked about one task
// at once leave their verdicts one after the other, each about the facts
// it saw. After a stored GREEN PASS, reg.Tick (when set) ticks the task's
// plan-ready boxes, still under the lock; how that went is in the returned
// verdict's Notes. An unknown gate is UnknownGate and stores nothing; a
// verdict about no task of the plan (Unplaced: a typo'd task id, no
// contract, no plan) is returned and not stored.
func Judge(ctx context.Context, reg *Registry, log VerdictLog, name Name, in Input) (Verdict, error) {
	if in.Task != "" && reg.Lock != nil {
		release, err := reg.Lock(ctx, in.Task)
		if err != nil {
			return Verdict{}, err
		}
		defer release()
	}
	v, err := reg.Run(ctx, name, in)
	if err != nil {
		return v, err
	}
	if err := ctx.Err(); err != nil {
		return v, err
	}
	if log != nil && !Unplaced(v) {
		if err := log.Append(ctx, v); err != nil {
			return v, err
		}
	}
	if name == "red" && v.Result == PASS && reg.Ready != nil {
		note, err := reg.Ready(ctx, v)
		if err != nil {
			note = "plan-ready.md not written: " + errText(err)
		}
		if note != "" {
			v.Notes = append(v.Notes, note)
		}
	}
	if name == "green" && v.Result == PASS && reg.Tick != nil {
		note, err := reg.Tick(ctx, v.Task)
		if err != nil {
			note = "plan-ready boxes not ticked: " + errText(err)
		}
		if note != "" {
			v.Notes = append(v.Notes, note)
		}
	}
	return v, nil
}
