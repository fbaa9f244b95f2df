package revision

import (
	"context"
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/worktree"
)

// classUnpinned is the GREEN gate's class for a declared symbol that no
// declared test pins (gates.ClassUnpinned).
const classUnpinned = "unpinned_symbol"

// sendsBackToRed reports whether v, a failed verdict, is a test defect
// that only new assertions mend: a GREEN FAIL naming a declared symbol
// the task's own tests could pin but do not (an unpinned_symbol reason
// that is not a note carried forward to a later task).
func sendsBackToRed(v execlog.Entry) bool {
	if v.Phase != "green" || v.Result != execlog.FAIL {
		return false
	}
	for _, r := range v.Reasons {
		if r.Class == classUnpinned && r.Severity == "" {
			return true
		}
	}
	return false
}

// verifiedRed is the commit of the task's newest RED PASS, ok false
// when there is none.
func (d Deps) verifiedRed(ctx context.Context, task string) (gitstore.Hash, bool, error) {
	es, err := d.Exec.List(ctx, execlog.Filter{Task: task, Phase: "red", Event: execlog.EventVerdict, Result: execlog.PASS, Limit: 1})
	if err != nil || len(es) == 0 || es[0].Commit == "" {
		return gitstore.ZeroHash, false, err
	}
	h, err := gitstore.ParseHash(es[0].Commit)
	if err != nil {
		return gitstore.ZeroHash, false, nil
	}
	return h, true, nil
}

// backToRedFix is the fix for a GREEN FAIL that sends the task back to
// RED (v failed attempt k): who works next, from which commit, and how
// GREEN takes its work back afterwards.
func backToRedFix(task string, k int, v execlog.Entry) string {
	var where []string
	for _, r := range v.Reasons {
		if r.Class == classUnpinned && r.Severity == "" {
			where = append(where, r.Paths...)
		}
	}
	at := ""
	if len(where) > 0 {
		at = " (" + strings.Join(where, ", ") + ")"
	}
	kept := worktree.KeptBranch(task, k)
	return fmt.Sprintf("BACK TO RED — the declared tests do not pin the symbol(s) the unpinned_symbol reason names%s: a body returning a zero value passes them, a test defect GREEN may not mend. "+
		"Attempt %d is a RED one (git ideate task attempt %s opens it as %s): the worktree returns to the verified RED commit and GREEN's commit stays on branch %s. "+
		"As %s, add an assertion that a zero-value body fails, commit, then run git ideate gate red --task %s; "+
		"then GREEN takes its implementation back (git checkout %s -- <its production files>), commits and runs git ideate gate green --task %s",
		at, k+1, task, worktree.RoleRed, kept, worktree.RoleRed, task, kept, task)
}
