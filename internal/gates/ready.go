package gates

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// ReadyResult is what WriteReady did.
type ReadyResult struct {
	Path    string `json:"path"`    // the plan-ready.md written
	Boxes   int    `json:"boxes"`   // the task's boxes in it
	Created bool   `json:"created"` // the file did not exist before
}

// WriteReady writes the RED→GREEN handoff of a task whose RED gate has
// just passed (v is that stored verdict): its section of the story's
// plan-ready.md in the main working tree, `## T<k> — title` and one open
// box per test plan.md declares for it, each noting the outcome RED saw.
// The file is created with its front matter when the story has none yet;
// a section the task already has is replaced (a RED verified again
// restarts its boxes), other tasks' sections are kept as they are. The
// supervisor never writes this file by hand; GREEN ticks it (Tick).
func WriteReady(ctx context.Context, d PlanDeps, v Verdict) (*ReadyResult, error) {
	story, num, ok := taskRef(v.Task)
	if !ok {
		return nil, apperr.New(apperr.Schema, "%q is not a plan task reference (S1-01/T2)", textfmt.Head(v.Task, 40))
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
	sd := s.StoryDirOf(story)
	if sd == nil || sd.TestPlan == nil {
		return nil, apperr.New(apperr.NotFound, "story %s has no plan.md in sprint %d, so plan-ready.md has no tests to list", story, s.Number)
	}
	title := ""
	if sd.Tasks != nil {
		for _, t := range sd.Tasks.Tasks {
			if t.Num == num {
				title = t.Title
			}
		}
	}
	seen := map[string]TestOutcome{}
	for _, t := range v.Tests {
		seen[t.ID] = t
	}
	var sec strings.Builder
	fmt.Fprintf(&sec, "## T%d", num)
	if title != "" {
		fmt.Fprintf(&sec, " — %s", title)
	}
	fmt.Fprintf(&sec, "\n\nRED verified at %s (attempt %d).\n\n", shortCommit(v.Commit), v.Attempt)
	boxes := 0
	for _, ts := range sd.TestPlan.Sections {
		if ts.Task != num {
			continue
		}
		for _, t := range ts.Tests {
			boxes++
			note := "RED: not run"
			if o, ok := seen[t.ID]; ok {
				note = "RED: " + o.Outcome
				if o.Detail != "" {
					note += " — " + textfmt.Fit(textfmt.OneLine(o.Detail), 120)
				}
			}
			fmt.Fprintf(&sec, "- [ ] `%s` — %s\n", t.ID, note)
		}
	}
	rel := path.Join(sd.Dir, "plan-ready.md")
	file := filepath.Join(d.Root, filepath.FromSlash(rel))
	res := &ReadyResult{Path: file, Boxes: boxes}
	old, err := osproc.ReadRegular(file, MaxPlanFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
		old = []byte(fmt.Sprintf("---\ntype: plan-ready\nstory: %s\nfrom_red_at: %s\n---\n\n# %s plan-ready\n\nWritten by git ideate when a task's RED gate passes; its boxes are ticked\nwhen the task's GREEN gate passes. Do not edit by hand.\n",
			story, time.Now().UTC().Format(time.RFC3339), story))
	case err != nil:
		return nil, apperr.Wrap(apperr.Write, err, "read %s", file)
	}
	out := replaceSection(string(old), num, sec.String())
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "create %s", filepath.Dir(file))
	}
	if err := atomicfile.Replace(file, []byte(out), atomicfile.Options{Sync: true}); err != nil {
		return nil, err
	}
	return res, nil
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// replaceSection puts sec in place of doc's `## T<num>` section (up to
// the next heading of level 1 or 2), or after the end of doc.
func replaceSection(doc string, num int, sec string) string {
	lines := strings.SplitAfter(doc, "\n")
	start, end := -1, len(lines)
	fenced := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || !(strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "## ")) {
			continue
		}
		if start >= 0 {
			end = i
			break
		}
		if headTask(t) == num {
			start = i
		}
	}
	if start < 0 {
		if !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return doc + "\n" + sec
	}
	tail := strings.Join(lines[end:], "")
	if tail != "" {
		sec += "\n"
	}
	return strings.Join(lines[:start], "") + sec + tail
}

// headTask is the task number of a `## T<k> …` heading, else 0.
func headTask(h string) int {
	h = strings.TrimSpace(strings.TrimLeft(h, "#"))
	if len(h) < 2 || (h[0] != 'T' && h[0] != 't') {
		return 0
	}
	j := 1
	for j < len(h) && h[j] >= '0' && h[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(h[1:j])
	if err != nil || (j < len(h) && h[j] != ' ' && h[j] != ':' && h[j] != '\t') {
		return 0
	}
	return n
}
