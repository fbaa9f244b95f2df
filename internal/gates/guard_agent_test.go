package gates_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
)

func TestRoleOf(t *testing.T) {
	for in, want := range map[string]string{
		"git-ideate:red-worker": gates.RoleRed, "red-worker": gates.RoleRed, "green-worker": gates.RoleGreen,
		"git-ideate:post-planner": gates.RoleScaffold, "post-planner": gates.RoleScaffold, "scaffolder": gates.RoleScaffold,
		"git-ideate:structural-reviewer": gates.RoleStructuralReviewer, "final-gate": gates.RoleFinalGate, "archivist": gates.RoleArchivist,
		"other:red-worker": "", "general-purpose": "", "Explore": "", "": "", "git-ideate:worker": "", "red-worker-extra": "",
	} {
		if got := gates.RoleOf(in); got != want {
			t.Errorf("RoleOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// The decisions the hooks used to make: the binding, the task's contract,
// a dispatch's facts, the read-only roles.
func TestGuard_AgentAndDispatchDecisions(t *testing.T) {
	top := t.TempDir()
	wt := filepath.Join(top, ".ideate", "worktrees", "S1-01+T1")
	run := func(role, tool, cmd string, paths []string, f *gates.GuardFacts) gates.Verdict {
		v, err := gates.Guard.Run(context.Background(), gates.Input{Point: gates.BeforeTool, Role: role, Tool: tool, Command: cmd, Paths: paths, Guard: f})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	bound := func(a *gates.AgentFacts) *gates.GuardFacts {
		return &gates.GuardFacts{Subagent: true, Bound: a.Unbound == "" && a.ContractErr == "", Cwd: wt, Top: top, Worktree: wt,
			TestGlobs: []string{"**/*_test.go"}, Agent: a}
	}
	open := gates.AgentFacts{Task: "S1-01/T1", Status: "open", Open: true, TaskRole: gates.RoleRed}
	with := func(mod func(*gates.AgentFacts)) *gates.AgentFacts { a := open; mod(&a); return &a }
	disp := gates.DispatchFacts{Role: gates.RoleRed, Task: "S1-01/T1", Status: "open", Open: true, TaskRole: gates.RoleRed}
	dwith := func(mod func(*gates.DispatchFacts)) *gates.GuardFacts {
		d := disp
		mod(&d)
		return &gates.GuardFacts{Cwd: top, Top: top, Dispatch: &d}
	}
	failing := gates.Verdict{Gate: "plan", Result: gates.FAIL, Reasons: []gates.Reason{{Class: "dependency_open", Detail: "waits"}}}
	readOnly := &gates.GuardFacts{Subagent: true, Cwd: top, Top: top, Sprint: true}
	reviewer := &gates.GuardFacts{Subagent: true, Cwd: top, Top: top, Sprint: true, Agent: &gates.AgentFacts{Task: "S1-01/T1"}}
	rdispatch := func(mod func(*gates.DispatchFacts)) *gates.GuardFacts {
		d := &gates.DispatchFacts{Role: gates.RoleStructuralReviewer, Task: "S1-01/T1"}
		mod(d)
		return &gates.GuardFacts{Cwd: top, Top: top, Dispatch: d}
	}
	for _, c := range []struct {
		name, role, tool, cmd string
		paths                 []string
		f                     *gates.GuardFacts
		want                  gates.Result
		class                 string
	}{
		{"bound red writes a test", "red-worker", "Write", "", []string{"a_test.go"}, bound(&open), gates.PASS, ""},
		{"unbound", "red-worker", "Bash", "ls", nil, bound(with(func(a *gates.AgentFacts) { a.Unbound = "no meta file" })), gates.FAIL, "unbound"},
		{"unreadable contract", "red-worker", "Bash", "ls", nil, bound(with(func(a *gates.AgentFacts) { a.ContractErr = "bad" })), gates.UNVERIFIABLE, "contract_unreadable"},
		{"closed task", "red-worker", "Bash", "ls", nil, bound(with(func(a *gates.AgentFacts) { a.Open, a.Status = false, "released" })), gates.FAIL, "task_closed"},
		{"role moved on", "red-worker", "Bash", "ls", nil, bound(with(func(a *gates.AgentFacts) { a.TaskRole = gates.RoleGreen })), gates.FAIL, "role_mismatch"},
		{"exec role without facts", "green-worker", "Bash", "ls", nil, &gates.GuardFacts{Subagent: true, Cwd: wt, Top: top}, gates.UNVERIFIABLE, "no_facts"},
		{"dispatch ok", "", "Agent", "", nil, dwith(func(*gates.DispatchFacts) {}), gates.PASS, ""},
		{"dispatch without task", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.TaskErr = "no line" }), gates.FAIL, "dispatch_no_task"},
		{"dispatch isolated", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.Isolation = true }), gates.FAIL, "dispatch_isolation"},
		{"dispatch unbindable", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.NoToolUse = true }), gates.FAIL, "dispatch_unbindable"},
		{"dispatch no contract", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.NoContract = true }), gates.FAIL, "no_contract"},
		{"dispatch plan gate", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.Plan = &failing }), gates.FAIL, "dependency_open"},
		{"dispatch closed", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.Open = false }), gates.FAIL, "task_closed"},
		{"dispatch wrong role", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.TaskRole = gates.RoleGreen }), gates.FAIL, "role_mismatch"},
		{"dispatch no standards", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.PolicyErr = "x" }), gates.UNVERIFIABLE, "standards_unreadable"},
		{"dispatch no globs", "", "Agent", "", nil, dwith(func(d *gates.DispatchFacts) { d.NoTestGlobs = true }), gates.UNVERIFIABLE, "no_test_globs"},
		{"reviewer dispatches", "final-gate", "Agent", "", nil, reviewer, gates.FAIL, "dispatch"},
		{"reviewer writes", "structural-reviewer", "Bash", "echo note > review-notes.txt", nil, reviewer, gates.FAIL, "read_only"},
		{"reviewer writes /tmp", "archivist", "Write", "", []string{"/tmp/x.md"}, &gates.GuardFacts{Subagent: true, Cwd: top, Top: top, Agent: &gates.AgentFacts{}}, gates.FAIL, "read_only"},
		{"reviewer reads", "structural-reviewer", "Bash", "git ideate gate structure --task S1-01/T1 2>&1 | tail", nil, reviewer, gates.PASS, ""},
		{"reviewer opens an attempt", "final-gate", "Bash", "git ideate task attempt S1-01/T1", nil, reviewer, gates.FAIL, "read_only"},
		{"reviewer unreadable command", "final-gate", "Bash", "sh script.sh", nil, reviewer, gates.UNVERIFIABLE, "unknown_command"},
		{"reviewer unbound", "structural-reviewer", "Read", "", nil, &gates.GuardFacts{Subagent: true, Cwd: top, Top: top, Agent: &gates.AgentFacts{Unbound: "no dispatch"}}, gates.FAIL, "unbound"},
		{"reviewer without facts", "final-gate", "Bash", "ls", nil, readOnly, gates.UNVERIFIABLE, "no_facts"},
		{"reviewer dispatch ok", "", "Agent", "", nil, rdispatch(func(*gates.DispatchFacts) {}), gates.PASS, ""},
		{"reviewer dispatch of a sprint", "", "Agent", "", nil, rdispatch(func(d *gates.DispatchFacts) { d.Role, d.Task, d.Sprint = gates.RoleFinalGate, "", 1 }), gates.PASS, ""},
		{"reviewer dispatch without task", "", "Agent", "", nil, rdispatch(func(d *gates.DispatchFacts) { d.TaskErr = "no line" }), gates.FAIL, "dispatch_no_task"},
		{"reviewer dispatch no contract", "", "Agent", "", nil, rdispatch(func(d *gates.DispatchFacts) { d.NoContract = true }), gates.FAIL, "no_contract"},
		{"reviewer dispatch unbindable", "", "Agent", "", nil, rdispatch(func(d *gates.DispatchFacts) { d.NoToolUse = true }), gates.FAIL, "dispatch_unbindable"},
		{"helper writes in a sprint", "", "Edit", "", []string{filepath.Join(wt, "a_test.go")}, readOnly, gates.FAIL, "sprint_read_only"},
		{"helper writes outside", "", "Write", "", []string{"/tmp/elsewhere.md"}, readOnly, gates.PASS, ""},
		{"helper writes, no sprint", "", "Write", "", []string{filepath.Join(top, "a.go")}, &gates.GuardFacts{Subagent: true, Cwd: top, Top: top}, gates.PASS, ""},
		{"main session in a sprint writes a test", "", "Write", "", []string{filepath.Join(top, "a_test.go")}, &gates.GuardFacts{Cwd: top, Top: top, Sprint: true, TestGlobs: []string{"**/*_test.go"}}, gates.PASS, ""},
	} {
		v := run(c.role, c.tool, c.cmd, c.paths, c.f)
		if v.Result != c.want || c.class != "" && (len(v.Reasons) == 0 || v.Reasons[0].Class != c.class) {
			t.Errorf("%s: %s", c.name, v)
		}
	}
}

func TestRedactCommand(t *testing.T) {
	cmd := "TOKEN=s3cret go test ./... | tail"
	got := gates.RedactCommand("`"+cmd+"` builds too much; run `go test ./pkg/` instead; "+cmd, cmd)
	if strings.Contains(got, "s3cret") || strings.Contains(got, "go test") || strings.Count(got, "sha256:") != 3 {
		t.Fatalf("redacted: %s", got)
	}
	if d := gates.CallDetail(gates.Input{Role: "red-worker", Agent: "a1", Tool: "Bash", Command: cmd}); strings.Contains(d, "s3cret") || !strings.Contains(d, gates.CommandDigest(cmd)) {
		t.Fatalf("detail: %s", d)
	}
}
