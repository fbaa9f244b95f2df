package worktree

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/testrun"
)

// Run is a recorded test run of a task: the normalized report of its
// declared tests at one commit, kept on the task's ref under
// runs/<attempt>/<commit>.json so later gates compare against it (the RED
// run, the base commit's run) instead of trusting anyone's account.
type Run struct {
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	Commit  string `json:"commit"`
	// Label says what the run was for: "base", "red", "green", ….
	Label string `json:"label"`
	// Tree is the commit's tree, so a reader can tell the same tree
	// judged under another commit.
	Tree   string          `json:"tree"`
	At     string          `json:"at"`
	Report *testrun.Report `json:"report"`
}

var labelRe = roleRe

// PutRun records rep as the run of the task's attempt at commit. A second
// run at the same key replaces the first (the ref's history keeps both).
// Free text in the report (reasons, notes) passes the secret gate before
// anything is written.
func (m *Manager) PutRun(ctx context.Context, task string, attempt int, commit gitstore.Hash, label string, rep *testrun.Report) (*Run, error) {
	if err := CheckTaskID(task); err != nil {
		return nil, err
	}
	if attempt < 0 || attempt > 99 {
		return nil, apperr.New(apperr.Schema, "attempt must be 0..99, not %d", attempt)
	}
	if !labelRe().MatchString(label) {
		return nil, apperr.New(apperr.Schema, "run label %q must be lower-case letters, digits and '-'", label)
	}
	if rep == nil {
		return nil, apperr.New(apperr.Schema, "a run needs a report")
	}
	cm, err := m.git.ReadCommit(commit)
	if err != nil {
		return nil, err
	}
	r := &Run{Task: task, Attempt: attempt, Commit: commit.String(), Label: label, Tree: cm.Tree.String(),
		At: m.Now().UTC().Format("2006-01-02T15:04:05.000Z"), Report: redactReport(rep)}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	release, err := m.lock(ctx, task)
	if err != nil {
		return nil, err
	}
	defer release()
	tip, c, err := m.read(task)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, apperr.New(apperr.NotFound, "no task %s has been started", task)
	}
	_, err = m.git.CommitOn(ctx, RefName(task), tip, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		pc, err := m.git.ReadCommit(tip)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		blob, err := m.git.WriteBlob(append(data, '\n'))
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		root, err := m.git.Insert(pc.Tree, []string{"runs", strconv.Itoa(attempt)},
			gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: commit.String() + ".json", Hash: blob}, true)
		return root, fmt.Sprintf("task %s: %s run of attempt %d at %s (%s)", task, label, attempt, commit.String()[:12], rep.Verdict), err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func redactReport(rep *testrun.Report) *testrun.Report {
	out := *rep
	secretgate.Fields(&out.Reason)
	out.Notes = append([]string(nil), rep.Notes...)
	for i := range out.Notes {
		secretgate.Fields(&out.Notes[i])
	}
	out.Tests = append([]testrun.Result(nil), rep.Tests...)
	for i := range out.Tests {
		t := &out.Tests[i]
		secretgate.Fields(&t.ID, &t.Reason, &t.File, &t.RunnerID)
	}
	return &out
}

// GetRun returns the run recorded for the task's attempt at commit; ok is
// false when there is none.
func (m *Manager) GetRun(task string, attempt int, commit gitstore.Hash) (run *Run, ok bool, err error) {
	if err := CheckTaskID(task); err != nil {
		return nil, false, err
	}
	e, found, err := m.onRef(task, "runs", strconv.Itoa(attempt), commit.String()+".json")
	if err != nil || !found {
		return nil, false, err
	}
	return m.readRun(e.Hash)
}

func (m *Manager) readRun(h gitstore.Hash) (*Run, bool, error) {
	data, err := m.git.ReadBlob(h)
	if err != nil {
		return nil, false, err
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, false, apperr.Wrap(apperr.Internal, err, "a recorded run does not parse")
	}
	return &r, true, nil
}

// Runs lists every run recorded for the task, by attempt then time.
func (m *Manager) Runs(task string) ([]Run, error) {
	if err := CheckTaskID(task); err != nil {
		return nil, err
	}
	e, found, err := m.onRef(task, "runs")
	if err != nil || !found || !e.IsDir() {
		return nil, err
	}
	var out []Run
	err = m.git.DiffTrees(gitstore.ZeroHash, e.Hash, func(path string, _, n gitstore.TreeEntry) error {
		r, ok, err := m.readRun(n.Hash)
		if err == nil && ok {
			out = append(out, *r)
		}
		return err
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Attempt != out[j].Attempt {
			return out[i].Attempt < out[j].Attempt
		}
		return out[i].At < out[j].At
	})
	return out, err
}

// BaseRun returns the newest run recorded at the task's base commit, under
// any attempt: the reference a regression is judged against (a test
// already failing there is not one).
func (m *Manager) BaseRun(task string) (*Run, bool, error) {
	c, err := m.Contract(task)
	if err != nil {
		return nil, false, err
	}
	runs, err := m.Runs(task)
	if err != nil {
		return nil, false, err
	}
	var best *Run
	for i := range runs {
		if runs[i].Commit == c.Base && (best == nil || runs[i].At >= best.At) {
			best = &runs[i]
		}
	}
	return best, best != nil, nil
}

// onRef looks path up in the tree of the task's ref; found is false when
// the task has no ref or the path is not there.
func (m *Manager) onRef(task string, path ...string) (e gitstore.TreeEntry, found bool, err error) {
	tip, c, err := m.read(task)
	if err != nil || c == nil {
		return gitstore.TreeEntry{}, false, err
	}
	cm, err := m.git.ReadCommit(tip)
	if err != nil {
		return gitstore.TreeEntry{}, false, err
	}
	return m.git.Lookup(cm.Tree, path)
}
