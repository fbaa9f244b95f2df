package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/corecmd"

	"github.com/ideate/git-ideate/internal/execlog"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/memory"
)

// failGreenCLI stores a GREEN FAIL of the task's current attempt, as the
// gate would, naming a failing test; and leaves the worker's output.md.
func failGreenCLI(t *testing.T, dir, task string, attempt int) {
	t.Helper()
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	defer env.Close()
	l, err := env.Exec()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(t.Context(), execlog.Entry{Task: task, Attempt: attempt, Phase: "green", Event: "verdict", Result: "FAIL",
		Reasons: []execlog.Reason{{Class: "declared_failing", Detail: "a declared test does not pass"}},
		Tests:   []execlog.TestResult{{ID: "strutil/reverse_test.go::TestReverse", Outcome: "FAIL_ASSERT"}}}); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(dir, ".ideate", "worktrees", strings.ReplaceAll(task, "/", "+"))
	// Each attempt's own words: the same text as an earlier attempt's is
	// that attempt's report, left in the worktree, not this one's.
	os.WriteFile(filepath.Join(wt, ".ideate", "output.md"), []byte(fmt.Sprintf("attempt report %d\n", attempt)), 0o644)
}

// task attempt ×3 with GREEN failing each time, then the escalation:
// exit 1 ESCALATED, listed by `escalations`, named by the next
// SessionStart priming; task show prints the three attempts; the
// worktree stays clean (init.md and output.md are ignored).
func TestTaskAttempt_ThreeFailuresEscalateAndPrime(t *testing.T) {
	dir := uncheckedProject(t, map[string]string{"S1-01/T1": "green-worker"})
	const task = "S1-01/T1"
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	for k := 1; k <= 3; k++ {
		r := mustOK(t, bin(t, dir, "", "task", "attempt", task))
		if !strings.Contains(r.out, "attempt "+string(rune('0'+k))+" of 3 opened") || strings.Count(r.out, "\n## Turn ") != k {
			t.Fatalf("attempt %d:\n%s", k, r.out)
		}
		if k > 1 && !strings.Contains(r.out, "test strutil/reverse_test.go::TestReverse: FAIL_ASSERT") {
			t.Fatalf("attempt %d has no feedback naming the failing test:\n%s", k, r.out)
		}
		if st := strings.TrimSpace(runGit(t, wt, "status", "--porcelain")); st != "" {
			t.Fatalf("the worktree is not clean: %q", st)
		}
		failGreenCLI(t, dir, task, k)
	}
	fb := mustOK(t, bin(t, dir, "", "task", "feedback", task))
	if !strings.Contains(fb.out, "### Feedback on attempt 3") || !strings.Contains(fb.out, "> attempt report") {
		t.Fatalf("feedback:\n%s", fb.out)
	}
	r := bin(t, dir, "", "task", "attempt", task)
	if r.code != corecmd.ExitFailure || !strings.Contains(r.err, "ESCALATED: task S1-01/T1 is escalated (foundation-poisoning, halt-chain)") {
		t.Fatalf("fourth attempt: %d %q %q", r.code, r.out, r.err)
	}
	// task list shows it escalated, not open and ready.
	if tl := mustOK(t, bin(t, dir, "", "task", "list")).out; !strings.Contains(tl, "S1-01/T1       escalated") || !strings.Contains(tl, "escalated: foundation-poisoning") || !strings.Contains(tl, "claim released") {
		t.Fatalf("task list after the escalation:\n%s", tl)
	}
	var list escalationsOut
	if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "escalations", "--json")).out), &list); err != nil || len(list.Escalations) != 1 ||
		list.Escalations[0].Task != task || list.Escalations[0].Attempt != 3 || list.Escalations[0].Cause != "attempts-exhausted" {
		t.Fatalf("escalations: %+v %v", list, err)
	}
	show := mustOK(t, bin(t, dir, "", "task", "show", task))
	if strings.Count(show.out, "=== attempt ") != 3 || !strings.Contains(show.out, "(green FAIL)") {
		t.Fatalf("show:\n%s", show.out)
	}
	p, _ := json.Marshal(map[string]any{"hook_event_name": "SessionStart", "session_id": "s-next", "cwd": dir, "source": "startup"})
	h := bin(t, dir, string(p), "hook")
	if h.code != 0 || !strings.Contains(h.out, "ideate escalations") || !strings.Contains(h.out, "S1-01/T1: "+list.Escalations[0].Class) {
		t.Fatalf("priming: %d %s %s", h.code, h.out, h.err)
	}
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gt.Git(t, dir, args...)
}

// A new attempt's init.md carries the role's lessons from
// docs/agents/memory.md (and those for every role), not another role's.
func TestTaskAttempt_InitCarriesTheRolesMemory(t *testing.T) {
	dir := uncheckedProject(t, map[string]string{"S1-01/T1": "green-worker"})
	for _, e := range []memory.Entry{
		{Role: "green-worker", Text: "Run the task's own package before stopping.", Evidence: "exec 01JD3QAAAAAAAAAAAAAAAAAAAA"},
		{Role: "red-worker", Text: "Name the failing assertion in the test.", Evidence: "exec 01JD3QAAAAAAAAAAAAAAAAAAAA"},
		{Role: memory.AllRoles, Text: "Quote exec entry ids when reporting a failure.", Evidence: "exec 01JD3QAAAAAAAAAAAAAAAAAAAA"},
	} {
		if _, err := memory.Add(t.Context(), dir, e, memory.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	r := mustOK(t, bin(t, dir, "", "task", "attempt", "S1-01/T1"))
	_, mem, ok := strings.Cut(r.out, "# Memory\n")
	if !ok {
		t.Fatalf("no memory section:\n%s", r.out)
	}
	mem, _, _ = strings.Cut(mem, "\n#")
	if !strings.Contains(mem, "Run the task's own package before stopping.") || !strings.Contains(mem, "Quote exec entry ids") ||
		strings.Contains(mem, "Name the failing assertion") || strings.Contains(mem, "(none)") {
		t.Fatalf("memory section:\n%s", mem)
	}
}

// The attempt's init.md tells the truth when the task moves on without a
// failed verdict: started again as the green-worker after the scaffold
// logged its actions, task attempt appends a turn naming the new role and
// those actions; asked again, it adds nothing.
func TestTaskAttempt_InitFollowsTheRoleAndTheScaffold(t *testing.T) {
	dir := uncheckedProject(t, map[string]string{"S1-01/T1": "red-worker"})
	const task = "S1-01/T1"
	first := mustOK(t, bin(t, dir, "", "task", "attempt", task)).out
	if !strings.Contains(first, "red-worker") || !strings.Contains(first, "### Scaffold actions\n\n(none)") {
		t.Fatalf("first init.md:\n%s", first)
	}
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	x, err := env.Exec()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Append(t.Context(), execlog.Entry{Task: task, Attempt: 1, Phase: "scaffold", Event: "create", Paths: []string{"strutil/reverse.go"}, Detail: "strutil.Reverse"}); err != nil {
		t.Fatal(err)
	}
	env.Close()
	mustOK(t, bin(t, dir, "", "task", "start", task, "--role", "green-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**"))
	second := mustOK(t, bin(t, dir, "", "task", "attempt", task)).out
	_, turn2, ok := strings.Cut(second, "## Turn 2")
	if !ok || !strings.Contains(turn2, "green-worker") || !strings.Contains(turn2, "- create strutil/reverse.go — strutil.Reverse") {
		t.Fatalf("init.md after the role changed:\n%s", second)
	}
	if third := mustOK(t, bin(t, dir, "", "task", "attempt", task)).out; strings.Count(third, "\n## Turn ") != 2 {
		t.Fatalf("asked again, init.md grew:\n%s", third)
	}
}

// Each role of an attempt keeps its own output.md, and init.md follows the
// role: started again as the green-worker, the task keeps the red-worker's
// report under its role and clears it from the worktree, and the
// worktree's init.md gains a turn naming the new role, the task's
// plan-ready section and the scaffold actions logged so far. The green
// attempt's feedback quotes the green report, never the red one.
func TestTaskStart_NewRoleKeepsEachRolesOutputAndRefreshesInit(t *testing.T) {
	dir := uncheckedProject(t, map[string]string{"S1-01/T1": "red-worker"})
	const task = "S1-01/T1"
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	first := mustOK(t, bin(t, dir, "", "task", "attempt", task)).out
	if !strings.Contains(first, "red-worker") || !strings.Contains(first, "has none yet") {
		t.Fatalf("first init.md:\n%s", first)
	}
	os.WriteFile(filepath.Join(wt, ".ideate", "output.md"), []byte("red report\n"), 0o644)
	// RED passed: the tool's plan-ready section and the scaffold's action.
	ready := filepath.Join(dir, "docs", "agents", "sprint1", "s1-01-rune-helpers", "plan-ready.md")
	os.WriteFile(ready, []byte("---\ntype: plan-ready\n---\n\n# S1-01 plan-ready\n\n## T1\n\n- [ ] `strutil/reverse_test.go::TestReverse_ASCII` — RED: FAIL_ASSERT\n"), 0o644)
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	x, err := env.Exec()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Append(t.Context(), execlog.Entry{Task: task, Attempt: 1, Phase: "scaffold", Event: "create", Paths: []string{"strutil/reverse.go"}, Detail: "strutil.Reverse"}); err != nil {
		t.Fatal(err)
	}
	env.Close()

	r := mustOK(t, bin(t, dir, "", "task", "start", task, "--role", "green-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**"))
	if !strings.Contains(r.out, "init.md of attempt 1 has a new turn for green-worker") {
		t.Errorf("start under a new role says nothing of init.md:\n%s", r.out)
	}
	init, err := os.ReadFile(filepath.Join(wt, ".ideate", "init.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, turn2, ok := strings.Cut(string(init), "## Turn 2")
	if !ok || !strings.Contains(turn2, "green-worker") || !strings.Contains(turn2, "plan-ready.md:9 (task T1's section)") ||
		!strings.Contains(turn2, "- create strutil/reverse.go — strutil.Reverse") {
		t.Fatalf("the worktree's init.md after the role changed:\n%s", init)
	}
	if _, err := os.Stat(filepath.Join(wt, ".ideate", "output.md")); !os.IsNotExist(err) {
		t.Errorf("the red-worker's output.md is still in the worktree for the green-worker: %v", err)
	}
	show := mustOK(t, bin(t, dir, "", "task", "show", task)).out
	if !strings.Contains(show, "--- output.md (red-worker)\nred report\n") || strings.Contains(show, "(green-worker)") {
		t.Fatalf("show before green wrote a report:\n%s", show)
	}
	failGreenCLI(t, dir, task, 1) // green's own report: "attempt report 1"
	fb := mustOK(t, bin(t, dir, "", "task", "feedback", task)).out
	if !strings.Contains(fb, "> attempt report 1") || strings.Contains(fb, "red report") {
		t.Fatalf("feedback on the green attempt:\n%s", fb)
	}
	show = mustOK(t, bin(t, dir, "", "task", "show", task)).out
	if !strings.Contains(show, "--- output.md (red-worker)\nred report\n--- output.md (green-worker)\nattempt report 1\n") {
		t.Fatalf("show, one report per role:\n%s", show)
	}
}

// An escalated task shows as escalated and its claim is released on the
// board, through the built binary: the task was started under a board
// item's claim, failed its three attempts, and the fourth `task attempt`
// escalates; then `task list` says escalated with the claim released, the
// item is open again with no claim, and another holder can claim it.
func TestTaskAttempt_EscalationReleasesTheClaim(t *testing.T) {
	dir := uncheckedProject(t, nil)
	const task = "S1-01/T1"
	item := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", task, "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	mustOK(t, bin(t, dir, "", "task", "start", task, "--role", "green-worker", "--item", item, "--human", "alice",
		"--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**"))
	if s := itemStatus(t, dir, item); s != "in_progress" {
		t.Fatalf("item after the start: %s", s)
	}
	for k := 1; k <= 3; k++ {
		mustOK(t, bin(t, dir, "", "task", "attempt", task))
		failGreenCLI(t, dir, task, k)
	}
	r := bin(t, dir, "", "task", "attempt", task)
	if r.code != corecmd.ExitFailure || !strings.Contains(r.err, "ESCALATED") {
		t.Fatalf("fourth attempt: %d %q %q", r.code, r.out, r.err)
	}
	var list struct {
		Tasks []taskJSON `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "task", "list", "--json")).out), &list); err != nil || len(list.Tasks) != 1 ||
		list.Tasks[0].Status != "escalated" || list.Tasks[0].Claim != "released" || !strings.Contains(list.Tasks[0].Note, "escalated: ") {
		t.Fatalf("task list --json after the escalation: %+v %v", list, err)
	}
	if tl := mustOK(t, bin(t, dir, "", "task", "list")).out; !strings.Contains(tl, "escalated") || !strings.Contains(tl, "claim released") {
		t.Fatalf("task list:\n%s", tl)
	}
	var it struct {
		Status string          `json:"status"`
		Claim  json.RawMessage `json:"claim"`
	}
	json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "work", "get", "--id", item)).out), &it)
	if it.Status != "open" || len(it.Claim) != 0 && string(it.Claim) != "null" {
		t.Fatalf("the item after the escalation: %s, claim %s", it.Status, it.Claim)
	}
	mustOK(t, bin(t, dir, "", "work", "claim", "--id", item, "--human", "bob"))
}
