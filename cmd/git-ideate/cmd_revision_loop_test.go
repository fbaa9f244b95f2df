package main

import (
	"bytes"
	"encoding/json"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
)

// passGreenCLI stores a GREEN PASS of the task, as the gate would.
func passGreenCLI(t *testing.T, dir, task string) string {
	t.Helper()
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	defer env.Close()
	l, err := env.Exec()
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.Append(t.Context(), execlog.Entry{Task: task, Attempt: 1, Phase: "green", Event: "verdict", Result: "PASS",
		Commit: strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")),
		Tests:  []execlog.TestResult{{ID: "strutil/reverse_test.go::TestReverse_ASCII", Outcome: "PASS"}}})
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// The no-progress guard, end to end through the binary: a wave with a
// task still waiting is left alone; wave 1, every task GREEN and a new
// plan-ready box ticked, is progress (recorded, exit 0); wave 2, its task
// GREEN but no new box ticked, is a stall — a no-progress escalation,
// hard stop (exit ESCALATED), on the execution log with its evidence (the
// GREEN PASS it saw, the ticks), listed by `git ideate escalations` and
// named by the next SessionStart priming; asked again, the same one.
func TestEscalations_CheckWave_NoProgress(t *testing.T) {
	dir := uncheckedProject(t, nil)
	head := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))[:12]
	ready := filepath.Join(dir, "docs", "agents", "sprint1", "s1-01-rune-helpers", "plan-ready.md")
	box := func(ticked bool) string {
		if ticked {
			return "[x]"
		}
		return "[ ]"
	}
	writeReady := func(first bool) {
		t.Helper()
		text := "---\ntype: plan-ready\nstory: S1-01\n---\n\n## T1 — Reverse\n- " + box(first) + " `strutil/reverse_test.go::TestReverse_ASCII` — FAIL\n" +
			"\n## T2 — Truncate\n- [ ] `strutil/truncate_test.go::TestTruncate_ShortInputUnchanged` — FAIL\n"
		if err := os.WriteFile(ready, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeReady(false)
	check := func(wave string) (result, escalationsOut) {
		t.Helper()
		r := bin(t, dir, "", "escalations", "--check-wave", wave, "--json")
		var out escalationsOut
		if err := json.Unmarshal([]byte(r.out), &out); err != nil {
			t.Fatalf("check-wave %s: %v %q %q", wave, err, r.out, r.err)
		}
		return r, out
	}

	// Wave 1 with S1-01/T2 still waiting: not judged.
	passGreenCLI(t, dir, "S1-01/T1")
	r, out := check("1")
	if r.code != 0 || out.Progress == nil || out.Progress.Stalled || strings.Join(out.Progress.Waiting, ",") != "S1-01/T2" || out.Progress.Recorded != "" {
		t.Fatalf("a wave still waiting: %d %+v", r.code, out.Progress)
	}
	// Wave 1 done, one box ticked: progress.
	passGreenCLI(t, dir, "S1-01/T2")
	writeReady(true)
	r, out = check("1")
	if r.code != 0 || out.Progress.Stalled || out.Progress.Ticked != 1 || out.Progress.Boxes != 2 || out.Progress.Recorded == "" || len(out.Escalations) != 0 {
		t.Fatalf("wave 1: %d %+v %+v", r.code, out.Progress, out.Escalations)
	}
	// Wave 2 passes its gate and ticks nothing new: a stall.
	green := passGreenCLI(t, dir, "S1-02/T1")
	r, out = check("2")
	if r.code != corecmd.ExitFailure || !strings.Contains(r.err, "ESCALATED: wave 2 stalled") || !out.Progress.Stalled || out.Progress.Baseline != 1 || out.Progress.Ticked != 1 {
		t.Fatalf("wave 2: %d %q %+v", r.code, r.err, out.Progress)
	}
	if len(out.Escalations) != 1 {
		t.Fatalf("escalations after the stall: %+v", out.Escalations)
	}
	e := out.Escalations[0]
	if e.Class != "no-progress" || e.Decision != "hard-stop" || e.Wave != 2 || e.Cause != "no-progress" ||
		strings.Join(e.Evidence, "|") != "S1-02/T1: green PASS at "+head+" (exec "+green+")|plan-ready: 1 of 2 boxes ticked now, 1 after the wave before" {
		t.Fatalf("the escalation: %+v", e)
	}
	// On the execution log, with its evidence.
	log := mustOK(t, bin(t, dir, "", "exec", "log", "--phase", "escalate", "--json")).out
	for _, want := range []string{`"event": "no-progress"`, "hard-stop", "exec " + green, "1 of 2 boxes ticked"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the execution log lacks %q:\n%s", want, log)
		}
	}
	// Listed, and asked again it is the same one.
	text := mustOK(t, bin(t, dir, "", "escalations")).out
	if !strings.Contains(text, "no-progress hard-stop — wave 2: no-progress") || !strings.Contains(text, "evidence: S1-02/T1: green PASS") {
		t.Fatalf("escalations:\n%s", text)
	}
	if r, again := check("2"); r.code != corecmd.ExitFailure || len(again.Escalations) != 1 || again.Progress.Escalation == nil || again.Progress.Escalation.ID != e.ID {
		t.Fatalf("wave 2 again: %d %+v", r.code, again)
	}
	// The next session is told.
	p, _ := json.Marshal(map[string]any{"hook_event_name": "SessionStart", "session_id": "s-next", "cwd": dir, "source": "startup"})
	h := bin(t, dir, string(p), "hook")
	if h.code != 0 || !strings.Contains(h.out, "hard-stop: wave 2: no-progress") {
		t.Fatalf("priming: %d %s %s", h.code, h.out, h.err)
	}
}

// A real structure gate's finding, revised through the binary: an orphan
// the green-worker's commit added FAILs `gate structure`; `task attempt`
// places it in the task's own diff and opens attempt 2 with the finding
// as feedback. When another open task's diff holds the same file, the
// finding is not isolated: `task attempt` escalates at once (cause
// findings) and neither task moves.
func TestTaskAttempt_StructureFindingRevised(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := "own"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) {
			tasks := map[string]string{"S1-01/T1": "green-worker"}
			if shared {
				tasks["S1-01/T2"] = "green-worker"
			}
			dir := uncheckedProject(t, tasks)
			wt := func(task string) string {
				return filepath.Join(dir, ".ideate", "worktrees", strings.ReplaceAll(task, "/", "+"))
			}
			mustOK(t, bin(t, dir, "", "task", "attempt", "S1-01/T1"))
			commitTo := func(task, body string) {
				os.WriteFile(filepath.Join(wt(task), "strutil", "reverse.go"), []byte(body), 0o644)
				runGit(t, wt(task), "add", "-A")
				runGit(t, wt(task), "commit", "-q", "-m", "green")
			}
			commitTo("S1-01/T1", "package strutil\n\nfunc Reverse(s string) string { return s }\n\nfunc leftover(s string) string { return s + s }\n")
			if shared {
				commitTo("S1-01/T2", "package strutil\n\nfunc Reverse(s string) string { return s + \"\" }\n")
			}
			if r := bin(t, dir, "", "gate", "structure", "--task", "S1-01/T1"); r.code != corecmd.ExitGateFail || !strings.Contains(r.out, "orphan") {
				t.Fatalf("gate structure: %d %s %s", r.code, r.out, r.err)
			}
			r := bin(t, dir, "", "task", "attempt", "S1-01/T1")
			if !shared {
				if r.code != 0 || !strings.Contains(r.out, "attempt 2 of 3 opened") || !strings.Contains(r.out, "the structure gate: structure FAIL") ||
					!strings.Contains(r.out, "- orphan: ") || !strings.Contains(r.out, "strutil/reverse.go:") {
					t.Fatalf("task attempt: %d %s %s", r.code, r.out, r.err)
				}
				return
			}
			if r.code != corecmd.ExitFailure || !strings.Contains(r.err, "ESCALATED: task S1-01/T1 is escalated") {
				t.Fatalf("task attempt: %d %s %s", r.code, r.out, r.err)
			}
			var list escalationsOut
			if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "escalations", "--json")).out), &list); err != nil || len(list.Escalations) != 1 ||
				list.Escalations[0].Cause != "findings" || list.Escalations[0].Attempt != 1 {
				t.Fatalf("escalations: %+v %v", list, err)
			}
		})
	}
}
