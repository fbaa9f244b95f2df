package gates

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
	"github.com/ideate/git-ideate/internal/osproc"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/textfmt"
	"github.com/ideate/git-ideate/internal/worktree"
)

// NoPass is the code of a tick refused because the execution log holds no
// GREEN PASS verdict for the task at its worktree's HEAD.
const NoPass apperr.Code = "NO_PASS"

// PlanDeps are what the final gate and Tick read and write: the task's
// worktree (its HEAD), the execution log (the stored verdicts) and the
// sprint's plan as the main working tree holds it, where plan-ready.md is
// ticked.
type PlanDeps struct {
	Git   *gitstore.Store
	Tasks *worktree.Manager
	Exec  *execlog.Log
	// Plan loads the sprint from the main working tree.
	Plan func(ctx context.Context) (*plan.Sprint, error)
	// Root is the directory the paths of Plan's files are relative to
	// (the top of the main working tree, usually).
	Root string
}

// TickResult is what Tick did.
type TickResult struct {
	Path    string `json:"path"`    // the plan-ready.md ticked
	Commit  string `json:"commit"`  // the commit whose GREEN PASS backs the ticks
	Verdict string `json:"verdict"` // that verdict's exec entry
	Ticked  []int  `json:"ticked"`  // the lines ticked now
	Boxes   int    `json:"boxes"`   // the task's boxes
}

// taskRef splits "S1-01/T2" into its story and task number.
func taskRef(task string) (story string, num int, ok bool) {
	story, t, found := strings.Cut(task, "/")
	if !found || len(t) < 2 || (t[0] != 'T' && t[0] != 't') {
		return "", 0, false
	}
	n, err := strconv.Atoi(t[1:])
	if err != nil || n <= 0 || strings.Contains(t, "/") {
		return "", 0, false
	}
	return story, n, true
}

// worktreeHead is the commit the task's worktree has checked out.
func (d PlanDeps) worktreeHead(task string) (*worktree.Contract, gitstore.Hash, error) {
	ct, err := d.Tasks.Contract(task)
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	r, err := gitstore.Discover(ct.Path)
	if err != nil {
		return ct, gitstore.ZeroHash, apperr.Wrap(apperr.NotFound, err, "task %s has no worktree at %s", task, ct.Path)
	}
	g := gitstore.OpenRepo(r, gitstore.Options{Config: d.Git.Config()})
	defer g.Close()
	h, err := g.Head()
	if err == nil && h == gitstore.ZeroHash {
		err = apperr.New(apperr.NotFound, "the worktree of task %s has no commit", task)
	}
	return ct, h, err
}

// readyFor returns the story's plan-ready.md and the task's boxes in it.
func readyFor(s *plan.Sprint, story string, num int) (*plan.PlanReady, []*plan.ReadyBox) {
	for _, sd := range s.StoryDirs {
		if sd.Story != story || sd.PlanReady == nil {
			continue
		}
		var boxes []*plan.ReadyBox
		for _, b := range sd.PlanReady.Boxes {
			if b.Task == num {
				boxes = append(boxes, b)
			}
		}
		return sd.PlanReady, boxes
	}
	return nil, nil
}

// Tick ticks the task's boxes in its story's plan-ready.md in the main
// working tree — `[ ]` becomes `[x]` on those lines and nothing else
// changes (CRLF kept) — but only when the execution log holds a GREEN
// PASS verdict for the task at its worktree's current HEAD: without one
// it is NoPass and the file is untouched. Boxes already ticked stay; a
// second Tick changes nothing. The file is replaced atomically, under a
// per-clone lock so two ticks of one story do not lose each other's.
func Tick(ctx context.Context, d PlanDeps, task string) (*TickResult, error) {
	if _, _, ok := taskRef(task); !ok {
		return nil, apperr.New(apperr.Schema, "%q is not a plan task reference (S1-01/T2)", textfmt.Head(task, 40))
	}
	_, head, err := d.worktreeHead(task)
	if err != nil {
		return nil, err
	}
	return tickAt(ctx, d, task, head)
}

// tickAt is Tick of the task judged at head.
func tickAt(ctx context.Context, d PlanDeps, task string, head gitstore.Hash) (*TickResult, error) {
	story, num, ok := taskRef(task)
	if !ok {
		return nil, apperr.New(apperr.Schema, "%q is not a plan task reference (S1-01/T2)", textfmt.Head(task, 40))
	}
	v, found, err := d.Exec.Latest(ctx, task, "green", head.String())
	if err != nil {
		return nil, err
	}
	if !found || v.Result != execlog.PASS {
		return nil, apperr.New(NoPass, "no GREEN PASS verdict for %s at its HEAD %s: boxes are ticked only after the GREEN gate passes", task, head.String()[:12])
	}
	release, err := d.Git.LockState(ctx, "plan-ready.lock")
	if err != nil {
		return nil, err
	}
	defer release()
	s, err := d.Plan(ctx)
	if err != nil {
		return nil, err
	}
	pr, boxes := readyFor(s, story, num)
	if pr == nil {
		return nil, apperr.New(apperr.NotFound, "story %s has no plan-ready.md in sprint %d", story, s.Number)
	}
	path := filepath.Join(d.Root, filepath.FromSlash(pr.Path))
	res := &TickResult{Path: path, Commit: head.String(), Verdict: v.ID, Boxes: len(boxes), Ticked: []int{}}
	data, err := osproc.ReadRegular(path, MaxPlanFile)
	if err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot read %s: %v", path, err)
	}
	// The line numbers are the plan's: hold them only against the bytes
	// the plan was read from.
	blob := oid.ComputeHash(oid.BlobObject, data).String()
	same := false
	for _, f := range s.Files {
		if f.Path == pr.Path {
			same = f.BlobID == blob
		}
	}
	if !same {
		return nil, apperr.New(apperr.Conflict, "%s changed while it was being ticked; tick again", path)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, b := range boxes {
		if b.Checked {
			continue
		}
		if b.Line < 1 || b.Line > len(lines) {
			return nil, apperr.New(apperr.Internal, "%s: box line %d is outside the file", path, b.Line)
		}
		l := lines[b.Line-1]
		i := bytes.Index(l, []byte("[ ]"))
		if i < 0 {
			return nil, apperr.New(apperr.Internal, "%s:%d holds no open box", path, b.Line)
		}
		l[i+1] = 'x' // the slice shares data: one byte changes
		res.Ticked = append(res.Ticked, b.Line)
	}
	if len(res.Ticked) == 0 {
		return res, nil
	}
	if err := atomicfile.Replace(path, data, atomicfile.Options{Sync: true}); err != nil {
		return nil, err
	}
	return res, nil
}
