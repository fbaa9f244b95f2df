package gates

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/shell"
	"github.com/ideate/git-ideate/internal/testrun"
	"github.com/ideate/git-ideate/internal/textfmt"
	"github.com/ideate/git-ideate/internal/worktree"
)

// DefaultMatrixTimeout bounds each gate-matrix command of the final gate
// when FinalDeps.Timeout is zero.
const DefaultMatrixTimeout = 10 * time.Minute

// The final gate's reason classes.
const (
	ClassMatrix           = "matrix"            // a matrix command exited non-zero
	ClassMatrixUnrunnable = "matrix_unrunnable" // a matrix command could not be parsed or started
	ClassMatrixTimeout    = "matrix_timeout"    // a matrix command outlived its timeout
	ClassNoMatrix         = "no_matrix"         // standards.md declares no gate matrix
	ClassNoPlanReady      = "no_plan_ready"     // the story has no plan-ready.md
	ClassNoBoxes          = "no_boxes"          // plan-ready.md has no box for a task that declares tests
	ClassNoGreen          = "no_green"          // no GREEN PASS verdict at the task's HEAD
	ClassSkip             = "skip"              // the GREEN PASS run skipped a test
	ClassUnticked         = "unticked"          // a box of the task is not ticked
	ClassUnbackedTick     = "unbacked_tick"     // a box is ticked with no GREEN PASS verdict behind it
	ClassSprintUnfinished = "sprint_unfinished" // a task of the sprint due by this wave has no GREEN PASS
)

// FinalDeps are the final gate's dependencies: PlanDeps, and the bound of
// each matrix command (Input.Timeout, when set, takes its place).
type FinalDeps struct {
	PlanDeps
	Timeout time.Duration
}

// Final is the final gate (`gate final --task T`): the task is done when
//
//   - every command of standards.md's gate matrix exits 0, run in the
//     task's worktree (FAIL matrix; a command that cannot be parsed or
//     started, or outlives its timeout, is UNVERIFIABLE);
//   - the newest GREEN PASS verdict at the worktree's HEAD exists (FAIL
//     no_green) and skipped no test (FAIL skip);
//   - every other task of the sprint in this wave or an earlier one has
//     a GREEN PASS as its newest GREEN verdict (FAIL sprint_unfinished,
//     naming them);
//   - every box of the task in its story's plan-ready.md is ticked (FAIL
//     unticked), and each ticked box is backed by that verdict (FAIL
//     unbacked_tick: a box ticked by hand, or before the GREEN gate passed
//     at this commit);
//   - every symbol the task names (Symbols:, Uses:) and no later task
//     names is pinned by the sprint's declared tests present at HEAD: run
//     once as they are (FAIL sprint_tests for one that does not pass),
//     then once per symbol with its body replaced by a zero-value return;
//     a symbol under which they all still pass FAILs (unpinned_symbol,
//     naming it and the tasks that declare it).
//
// The worktree must hold no uncommitted change (FAIL uncommitted). A task
// whose worktree is not in this clone (executed in another one, which
// synced) is judged at the tip of its branch, brought by `git ideate
// sync`, in a temporary checkout, its plan-ready boxes ticked here by the
// synced GREEN PASS; without the branch it is UNVERIFIABLE (no_worktree,
// naming the branch). No
// plan, no plan-ready.md, no gate matrix: UNVERIFIABLE, never PASS. When a
// check fails and another could not be judged, the verdict is FAIL (it
// cannot pass) and names both.
func Final(d FinalDeps) Gate {
	return Func(func(ctx context.Context, in Input) (Verdict, error) { return d.judge(ctx, in) })
}

type finalJudge struct {
	v       Verdict
	fail    bool
	unknown bool
}

func (j *finalJudge) add(failing bool, class, detail string, paths ...string) {
	if failing {
		j.fail = true
	} else {
		j.unknown = true
	}
	j.v.Reasons = append(j.v.Reasons, Reason{Class: class, Detail: detail, Paths: paths})
}

func (j *finalJudge) verdict() Verdict {
	switch {
	case j.fail:
		j.v.Result = FAIL
	case j.unknown:
		j.v.Result = UNVERIFIABLE
	default:
		j.v.Result = PASS
	}
	return j.v
}

func (d FinalDeps) judge(ctx context.Context, in Input) (Verdict, error) {
	j := &finalJudge{v: Verdict{Gate: "final"}}
	if in.Task == "" {
		j.add(false, "no_task", "no task was named, so there is nothing to judge")
		return j.verdict(), nil
	}
	story, num, ok := taskRef(in.Task)
	if !ok {
		j.add(false, "no_task", fmt.Sprintf("%q is not a plan task reference (S1-01/T2)", textfmt.Head(in.Task, 40)))
		return j.verdict(), nil
	}
	if d.Tasks == nil || d.Git == nil || d.Plan == nil || d.Exec == nil {
		return Verdict{}, apperr.New(apperr.Internal, "gate final was built without its dependencies")
	}
	ct, ch, err := d.Tasks.Changes(ctx, in.Task)
	elsewhere := false // executed in another clone: judged from its branch
	switch {
	case ct == nil && apperr.Is(err, apperr.NotFound):
		j.add(false, "no_contract", apperr.Message(err))
		return j.verdict(), nil
	case err != nil && apperr.Is(err, apperr.NotFound):
		// No worktree here: the task was executed in another clone (or
		// completed). Its branch, brought by a sync, is what was judged.
		tip, berr := d.Git.Ref("refs/heads/" + ct.Branch)
		if berr == nil && tip == gitstore.ZeroHash {
			// A finished task's branch a sync folded into the archive.
			tip, berr = archivedBranch(d.Git, in.Task)
		}
		if berr != nil {
			return Verdict{}, berr
		}
		if tip == gitstore.ZeroHash {
			j.add(false, "no_worktree", fmt.Sprintf("%s, and its branch %s is not in this clone either: run `git ideate sync` after the clone that executed it has synced", apperr.Message(err), ct.Branch))
			return j.verdict(), nil
		}
		dir, done, werr := d.checkout(ctx, tip)
		if werr != nil {
			return Verdict{}, werr
		}
		defer done()
		ct.Path, ch, elsewhere = dir, &gitstore.Changes{Head: tip}, true
		j.v.Notes = append(j.v.Notes, fmt.Sprintf("task %s has no worktree in this clone: judged at its branch %s (%s) in a temporary checkout", in.Task, ct.Branch, tip.String()[:12]))
	case err != nil:
		return Verdict{}, err
	}
	head := ch.Head
	if head == gitstore.ZeroHash {
		j.add(false, "no_worktree", fmt.Sprintf("the worktree of task %s has no commit", in.Task))
		return j.verdict(), nil
	}
	j.v.Commit = head.String()
	j.v.Task, j.v.Attempt, j.v.Base, j.v.Story = in.Task, in.Attempt, ct.Base, story
	if j.v.Attempt == 0 {
		j.v.Attempt = ct.Attempt
	}
	if c, err := d.Git.ReadCommit(head); err == nil {
		j.v.Tree = c.Tree.String()
	}
	if in.Commit != "" && !strings.HasPrefix(head.String(), strings.ToLower(in.Commit)) {
		j.add(false, "not_head", fmt.Sprintf("commit %s was asked for, but the worktree's HEAD is %s: a gate judges the worktree's HEAD", in.Commit, head.String()[:12]))
		return j.verdict(), nil
	}
	var dirty []string
	for _, x := range ch.List {
		if x.Uncommitted {
			dirty = append(dirty, x.Path)
		}
	}
	if len(dirty) > 0 {
		// No commit was judged: the verdict names none (and so notes
		// none), and it is placed in the plan like any other.
		if s, err := d.Plan(ctx); err == nil {
			wave, ok := placeOf(s, in.Task)
			if !ok {
				j.add(false, ClassNotInPlan, fmt.Sprintf("task %s is not in sprint %d's plan (its stories' tasks.md), so it is not judged", in.Task, s.Number))
				return j.verdict(), nil
			}
			j.v.Sprint, j.v.Wave = s.Number, wave
		}
		j.v.Commit, j.v.Tree = "", ""
		j.add(true, "uncommitted", "the worktree (HEAD "+head.String()[:12]+") holds uncommitted changes; a gate judges commits only: commit first, then ask again", dirty...)
		return j.verdict(), nil
	}
	if elsewhere {
		// This clone's plan-ready.md is ticked for the tasks it executed;
		// a task executed elsewhere gets its ticks here by the same rule
		// (a GREEN PASS at the judged commit, synced with the log).
		if _, err := tickAt(ctx, d.PlanDeps, in.Task, head); err != nil && !apperr.Is(err, NoPass) && !apperr.Is(err, apperr.NotFound) {
			return Verdict{}, err
		}
	}
	s, err := d.Plan(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Verdict{}, ctx.Err()
		}
		j.add(false, "no_plan", "the sprint's plan could not be read: "+apperr.Message(err))
		return j.verdict(), nil
	}
	wave, ok := placeOf(s, in.Task)
	if !ok {
		j.add(false, ClassNotInPlan, fmt.Sprintf("task %s is not in sprint %d's plan (its stories' tasks.md), so it is not judged", in.Task, s.Number))
		return j.verdict(), nil
	}
	j.v.Sprint, j.v.Wave = s.Number, wave

	// The stored GREEN verdict at this commit: no skip in its run.
	green, found, err := d.Exec.Latest(ctx, in.Task, "green", head.String())
	if err != nil {
		return Verdict{}, err
	}
	passed := found && green.Result == execlog.PASS
	if !passed {
		j.add(true, ClassNoGreen, fmt.Sprintf("the execution log holds no GREEN PASS verdict for %s at %s: run the green gate first", in.Task, head.String()[:12]))
	} else {
		var skipped []string
		for _, t := range green.Tests {
			if t.Outcome == "SKIP" {
				skipped = append(skipped, t.ID)
			}
		}
		if len(skipped) > 0 {
			j.add(true, ClassSkip, fmt.Sprintf("the GREEN run (exec %s) skipped %d test(s): %s", green.ID, len(skipped), strings.Join(skipped, ", ")))
		}
	}

	// The sprint: every other task of this wave and the waves before it
	// has passed GREEN (its newest GREEN verdict is a PASS). A later
	// wave's tasks are not due yet.
	if wave := j.v.Wave; wave > 0 {
		var open []string
		for _, sd := range s.StoryDirs {
			if sd.Tasks == nil {
				continue
			}
			for _, t := range sd.Tasks.Tasks {
				ref := sd.Story + "/" + t.ID
				if ref == in.Task || t.GateOnly {
					continue
				}
				if w := waveOf(s, ref); w == 0 || w > wave {
					continue
				}
				g, found, err := d.Exec.Latest(ctx, ref, "green", "")
				if err != nil {
					return Verdict{}, err
				}
				if !found || g.Result != execlog.PASS {
					open = append(open, ref)
				}
			}
		}
		if len(open) > 0 {
			j.add(true, ClassSprintUnfinished, fmt.Sprintf("sprint %d is unfinished: %d task(s) of wave %d or before have no GREEN PASS: %s", s.Number, len(open), wave, strings.Join(open, ", ")))
		}
	}

	// plan-ready.md: every box of the task ticked, every tick backed.
	pr, boxes := readyFor(s, story, num)
	switch {
	case pr == nil:
		j.add(false, ClassNoPlanReady, fmt.Sprintf("story %s has no plan-ready.md in sprint %d: the ticks cannot be judged", story, s.Number))
	case len(boxes) == 0 && len(ct.Tests) > 0:
		j.add(false, ClassNoBoxes, fmt.Sprintf("%s has no box for task %s, which declares %d test(s)", pr.Path, in.Task, len(ct.Tests)))
	default:
		var open, unbacked []string
		for _, b := range boxes {
			where := fmt.Sprintf("%s:%d", pr.Path, b.Line)
			switch {
			case !b.Checked:
				open = append(open, where)
			case !passed:
				unbacked = append(unbacked, where)
			}
		}
		if len(open) > 0 {
			j.add(true, ClassUnticked, fmt.Sprintf("%d box(es) of %s are not ticked: %s", len(open), in.Task, strings.Join(open, ", ")), pr.Path)
		}
		if len(unbacked) > 0 {
			j.add(true, ClassUnbackedTick, fmt.Sprintf("%d box(es) of %s are ticked with no GREEN PASS verdict at %s behind them (ticked by hand?): %s",
				len(unbacked), in.Task, head.String()[:12], strings.Join(unbacked, ", ")), pr.Path)
		}
	}

	// Pinning: the task's symbols against the sprint's declared tests.
	pinTimeout := DefaultTimeout
	if in.Timeout > 0 {
		pinTimeout = in.Timeout
	}
	pins, err := d.finalPins(ctx, s, in.Task, ct, head, pinTimeout)
	if err != nil {
		if ctx.Err() != nil {
			return Verdict{}, ctx.Err()
		}
		return Verdict{}, err
	}
	for _, r := range pins {
		switch {
		case r.Severity == SevInfo:
			j.v.Reasons = append(j.v.Reasons, r)
		default:
			j.add(r.Class != ClassPinUnverifiable, r.Class, r.Detail, r.Paths...)
		}
	}

	// The gate matrix, in the worktree.
	if s.Standards == nil || s.Standards.Matrix == nil || len(s.Standards.Matrix.Commands) == 0 {
		j.add(false, ClassNoMatrix, "standards.md declares no gate matrix commands: the matrix cannot be judged")
		return j.verdict(), nil
	}
	timeout := d.Timeout
	if in.Timeout > 0 {
		timeout = in.Timeout
	}
	if timeout <= 0 {
		timeout = DefaultMatrixTimeout
	}
	for _, c := range s.Standards.Matrix.Commands {
		class, detail, failing := runMatrixCommand(ctx, ct.Path, c.Text, timeout)
		if ctx.Err() != nil {
			return Verdict{}, ctx.Err()
		}
		if class != "" {
			j.add(failing, class, fmt.Sprintf("standards.md:%d `%s`: %s", c.Line, textfmt.Head(c.Text, 120), detail))
		}
	}
	return j.verdict(), nil
}

// checkout makes a throwaway detached worktree at commit, and returns it
// and what removes it.
func (d FinalDeps) checkout(ctx context.Context, commit gitstore.Hash) (string, func(), error) {
	tmp, err := osproc.TempDir("final")
	if err != nil {
		return "", nil, apperr.Wrap(apperr.Write, err, "cannot create a temporary directory")
	}
	dir := filepath.Join(tmp, "task")
	done := func() {
		_ = d.Git.DiscardWorktree(context.WithoutCancel(ctx), dir)
		os.RemoveAll(tmp)
	}
	if err := d.Git.AddWorktree(ctx, dir, "", commit); err != nil {
		done()
		return "", nil, err
	}
	return dir, done, nil
}

// runMatrixCommand runs one matrix line in dir: a single command of plain
// words as its argv, anything else through `sh -c` (the playbook's own
// matrices use command substitution and pipes), in a process group of its
// own that is killed whole on timeout or cancel. It returns "" when the
// command exited 0, else the reason class, a sentence, and whether it is a
// failure (true) or could not be judged (false).
func runMatrixCommand(ctx context.Context, dir, line string, timeout time.Duration) (class, detail string, failing bool) {
	line = strings.TrimSpace(line)
	words, literal, simple := shell.Fields(line)
	if line == "" || simple && len(words) == 0 {
		return ClassMatrixUnrunnable, "the line holds no command", false
	}
	argv, viaShell := words, !simple || !literal
	if viaShell {
		argv = []string{"sh", "-c", line}
	}
	// The matrix runs the task's code (its tests, its build scripts), so it
	// runs as the gates' test runs do: confined to the worktree and a
	// temporary directory of its own, and never answered from go test's
	// result cache.
	tmp, err := osproc.TempDir("matrix")
	if err != nil {
		return ClassMatrixUnrunnable, "cannot create its temporary directory: " + err.Error(), false
	}
	defer os.RemoveAll(tmp)
	env := append([]string{"TMPDIR=" + tmp, "GOTMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp}, runEnv()...)
	out := &tailBuf{max: 2048} // one writer for both streams: exec writes it from one goroutine
	end := testrun.Exec(ctx, argv, dir, env, timeout, out, out, func(c *exec.Cmd) error { return confinedStart(c, []string{dir, tmp}) })
	switch {
	case end.StartErr != nil:
		return ClassMatrixUnrunnable, "cannot start it: " + end.StartErr.Error(), false
	case end.TimedOut:
		return ClassMatrixTimeout, fmt.Sprintf("still running after %s; killed", timeout), false
	case end.Code == 0:
		return "", "", false
	case viaShell && (end.Code == 126 || end.Code == 127):
		return ClassMatrixUnrunnable, fmt.Sprintf("the shell could not run it (exit %d): %s", end.Code, out.text()), false
	case end.Code > 0:
		return ClassMatrix, fmt.Sprintf("exit %d: %s", end.Code, out.text()), true
	case ctx.Err() != nil:
		return ClassMatrixUnrunnable, "the gate was cancelled: " + ctx.Err().Error(), false
	}
	return ClassMatrix, "ended by a signal: " + out.text(), true
}

// text is the kept output as one line, at most 400 characters.
func (t *tailBuf) text() string {
	s := textfmt.OneLine(string(bytes.ToValidUTF8(t.b, []byte("\uFFFD"))))
	if s == "" {
		return "(no output)"
	}
	return textfmt.Fit(s, 400)
}

// archivedBranch is the tip of task's branch as the board's archive holds
// it (ZeroHash: not there).
func archivedBranch(g *gitstore.Store, task string) (gitstore.Hash, error) {
	arch, err := g.Ref(board.ArchiveRef)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return board.ArchivedIn(g, arch, worktree.BranchArchivePath(task))
}
