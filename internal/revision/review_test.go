package revision_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/revision"
)

// commitIn commits files in the task's worktree (path → content).
func (f *fixture) commitIn(t *testing.T, task string, files map[string]string) {
	t.Helper()
	ct, err := f.tasks.Contract(task)
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(ct.Path, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gt.Git(t, ct.Path, "add", "-A")
	gt.Git(t, ct.Path, "commit", "-q", "-m", "green "+task)
}

// review stores a failed structure or final verdict of the task's current
// attempt with reasons.
func (f *fixture) review(t *testing.T, task, phase, result string, reasons ...execlog.Reason) execlog.Entry {
	t.Helper()
	ct, _ := f.tasks.Contract(task)
	e, err := f.exec.Append(context.Background(), execlog.Entry{Task: task, Attempt: ct.Attempt, Phase: phase, Event: execlog.EventVerdict,
		Result: result, Reasons: reasons})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Structural and final findings that are isolated and fixable re-spawn
// the GREEN task whose diff added the path, through a feedback turn of
// its init.md, instead of escalating; findings that are not fixable, or
// that more than one task's diff holds, escalate at once.
func TestOpen_ReviewFindings(t *testing.T) {
	ctx := context.Background()
	const t1, t2 = "S1-01/T1", "S1-01/T2"
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, map[string]string{t1: "green-worker", t2: "green-worker"}, nil)
		for _, task := range []string{t1, t2} {
			if a, err := f.deps.Open(ctx, task); err != nil || a.Attempt != 1 {
				t.Fatalf("open %s: %+v %v", task, a, err)
			}
		}
		f.commitIn(t, t1, map[string]string{"strutil/reverse.go": "package strutil\n\nfunc Reverse(s string) string { return s }\n"})
		f.commitIn(t, t2, map[string]string{"strutil/dup.go": "package strutil\n\nfunc reverse2(s string) string { return s }\n"})
		return f
	}

	t.Run("a finding in another task's file re-spawns that task", func(t *testing.T) {
		f := setup(t)
		f.review(t, t1, "structure", execlog.FAIL, execlog.Reason{Class: "near_copy", Detail: "reverse2 copies Reverse under another name", Paths: []string{"strutil/dup.go:3"}},
			execlog.Reason{Class: "weaker_check", Detail: "the fallback reader was used"})
		a, err := f.deps.Open(ctx, t1)
		if err != nil {
			t.Fatal(err)
		}
		if a.Escalation != nil || a.Respawn == nil || a.Task != t2 || a.Attempt != 2 || !a.Created || a.Respawn.Judged != t1 || a.Respawn.Task != t2 {
			t.Fatalf("open of the judged task: %+v %+v", a, a.Respawn)
		}
		turn := a.Text[strings.LastIndex(a.Text, "\n## Turn "):]
		for _, want := range []string{"## Turn 2 — attempt 2 of 3 (green-worker", "### Feedback on attempt 1", "the structure gate: structure FAIL",
			"near_copy: reverse2 copies Reverse under another name (strutil/dup.go:3)", "What NOT to touch:"} {
			if !strings.Contains(turn, want) {
				t.Fatalf("t2's new turn lacks %q:\n%s", want, turn)
			}
		}
		if b, _ := os.ReadFile(a.Path); string(b) != a.Text {
			t.Fatal("t2's worktree does not hold the new init.md")
		}
		// The judged task stays where it was; the re-spawn is logged once
		// with its evidence, and is no escalation.
		if ct, _ := f.tasks.Contract(t1); ct.Attempt != 1 {
			t.Fatalf("the judged task moved to attempt %d", ct.Attempt)
		}
		log, _ := f.exec.List(ctx, execlog.Filter{Phase: revision.RevisePhase})
		if len(log) != 1 || log[0].Event != revision.EventRespawn || log[0].Task != t1 || !strings.Contains(log[0].Detail, t2+" re-opened for attempt 2") {
			t.Fatalf("revise entries: %+v", log)
		}
		if esc, _ := f.deps.Escalations(ctx, 0); len(esc) != 0 {
			t.Fatalf("escalations: %+v", esc)
		}
		// Asked again: the same attempt, no second turn, no second entry.
		again, err := f.deps.Open(ctx, t1)
		if err != nil || again.Task != t2 || again.Attempt != 2 || again.Created || again.Respawn == nil || again.Respawn.Logged != log[0].ID || again.Turn != 2 {
			t.Fatalf("second open: %+v %v", again, err)
		}
		if log, _ := f.exec.List(ctx, execlog.Filter{Phase: revision.RevisePhase}); len(log) != 1 {
			t.Fatalf("revise entries after a second open: %d", len(log))
		}
	})

	t.Run("a finding in the task's own file is its own next attempt", func(t *testing.T) {
		f := setup(t)
		f.review(t, t1, "final", execlog.FAIL, execlog.Reason{Class: "matrix", Detail: "standards.md:40 `go vet ./...`: exit 1"})
		a, err := f.deps.Open(ctx, t1)
		if err != nil || a.Escalation != nil || a.Respawn != nil || a.Task != t1 || a.Attempt != 2 || !strings.Contains(a.Text, "- matrix: standards.md:40") {
			t.Fatalf("%+v %v", a, err)
		}
	})

	for _, tc := range []struct {
		name    string
		phase   string
		reasons []execlog.Reason
	}{
		{"not fixable: the matrix cannot run", "final", []execlog.Reason{{Class: "matrix", Detail: "exit 1"}, {Class: "matrix_unrunnable", Detail: "cannot start"}}},
		{"not fixable: a box ticked by hand", "final", []execlog.Reason{{Class: "unbacked_tick", Detail: "ticked by hand", Paths: []string{"docs/agents/sprint1/s1-01/plan-ready.md"}}}},
		{"not isolated: two tasks' diffs hold the paths", "structure", []execlog.Reason{
			{Class: "duplicate_helper", Detail: "Reverse and reverse2", Paths: []string{"strutil/reverse.go:3"}},
			{Class: "near_copy", Detail: "reverse2", Paths: []string{"strutil/dup.go:3"}}}},
		{"not placed: no task's diff holds the path", "structure", []execlog.Reason{{Class: "orphan", Detail: "x", Paths: []string{"other/x.go:1"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			f.review(t, t1, tc.phase, execlog.FAIL, tc.reasons...)
			a, err := f.deps.Open(ctx, t1)
			if err != nil || a.Escalation == nil || a.Respawn != nil || a.Escalation.Cause != revision.CauseFindings || a.Escalation.Attempt != 1 {
				t.Fatalf("%+v %v", a, err)
			}
			for _, task := range []string{t1, t2} {
				if ct, _ := f.tasks.Contract(task); ct.Attempt != 1 {
					t.Fatalf("%s moved to attempt %d", task, ct.Attempt)
				}
			}
		})
	}
}
