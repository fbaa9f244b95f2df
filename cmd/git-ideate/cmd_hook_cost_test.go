package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// recordedSub returns the first recorded payload of event made inside a
// sub-agent, as a map to change.
func recordedSub(t *testing.T, event string) map[string]any {
	t.Helper()
	return recordedWhere(t, event+" (inside a sub-agent)", func(p map[string]any) bool {
		return p["hook_event_name"] == event && p["agent_id"] != nil
	})
}

// The cost gate's same-unchanged-tree rule through the built binary, with
// payloads shaped like the recorded ones: a green-worker's package test
// that failed (PostToolUseFailure) is denied when asked again on the
// same tree, naming the earlier run and its result; an edit in the scope,
// a commit or an override lets it run; a run that passed (PostToolUse) is
// remembered too; a run whose own tree changed is not.
func TestHookGate_Binary_CostRerun(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T2": "green-worker"})
	s := newSession(t, dir)
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T2")
	wantAllow(t, "green dispatch", s.dispatch("toolu_green", "green-worker", "ideate-task: S1-01/T2"))
	s.meta("agreen", "green-worker", "toolu_green")
	post := recordedSub(t, "PostToolUse")

	pre := func(id, command string) hostDecision {
		return hookCall(t, wt, with(s.subTool, "cwd", wt, "transcript_path", s.transcript, "agent_id", "agreen",
			"agent_type", "git-ideate:green-worker", "tool_name", "Bash", "tool_use_id", id,
			"tool_input", map[string]any{"command": command, "description": "run"}))
	}
	// ended sends the host's report of the call: exit 0 (PostToolUse) or
	// failed with errLine (PostToolUseFailure).
	ended := func(id, command, errLine string) {
		p := with(post, "cwd", wt, "transcript_path", s.transcript, "agent_id", "agreen", "agent_type", "git-ideate:green-worker",
			"tool_use_id", id, "tool_input", map[string]any{"command": command, "description": "run"})
		if errLine != "" {
			p = with(p, "hook_event_name", "PostToolUseFailure", "tool_response", nil, "error", errLine+"\n--- FAIL: TestReverse")
		}
		if d := hookCall(t, wt, p); d.kind != "" {
			t.Fatalf("%s: decision %+v", p["hook_event_name"], d)
		}
	}
	const test = "go test ./strutil/ 2>&1 | tail -20"

	wantAllow(t, "first run", pre("toolu_c1", test))
	ended("toolu_c1", test, "Exit code 1")
	d := pre("toolu_c2", "go test ./strutil/ | head -50")
	wantDeny(t, "the same run on the same tree", d, "already ran on this unchanged tree")
	for _, want := range []string{"rerun", "result: Exit code 1", "tool call toolu_c1", "IDEATE_COST_OVERRIDE", "`" + test + "`"} {
		if !strings.Contains(d.reason, want) {
			t.Errorf("the denial does not say %q: %s", want, d.reason)
		}
	}
	wantAllow(t, "a cheap command", pre("toolu_c3", "git status --short"))
	wantAllow(t, "another selection", pre("toolu_c4", "go test -run TestReverse ./strutil/"))
	wantAllow(t, "overridden", pre("toolu_c5", "IDEATE_COST_OVERRIDE='the fix landed in a dependency' "+test))

	// An edit inside the scope: the tree changed, the run is let through.
	os.WriteFile(filepath.Join(wt, "strutil", "reverse.go"), []byte("package strutil\n\nfunc Reverse(s string) string { return \"\" }\n"), 0o644)
	wantAllow(t, "after an edit", pre("toolu_c6", test))
	ended("toolu_c6", test, "") // it passed
	d = pre("toolu_c7", test)
	wantDeny(t, "a passed run again", d, "result: exit 0")
	// A commit moves HEAD (and the index).
	gt.Git(t, wt, "add", "-A")
	gt.Git(t, wt, "commit", "-q", "-m", "green")
	wantAllow(t, "after a commit", pre("toolu_c8", test))
	// A run whose own tree changed under it is not remembered.
	os.WriteFile(filepath.Join(wt, "strutil", "gen.go"), []byte("package strutil\n"), 0o644)
	ended("toolu_c8", test, "Exit code 2")
	wantAllow(t, "after a run that changed its tree", pre("toolu_c9", test))

	// The bookkeeping keeps no command text verbatim: a key digest and the
	// command with its secrets redacted.
	secret := "go test ./strutil/ -args password=Hunter2Secret"
	wantAllow(t, "a run with a secret", pre("toolu_s1", secret))
	ended("toolu_s1", secret, "Exit code 1")
	runs, _ := filepath.Glob(filepath.Join(dir, ".git", "ideate", "dispatch", "runs*", "*.json*"))
	if len(runs) == 0 {
		t.Fatal("no run remembered under .git/ideate/dispatch/runs*")
	}
	for _, f := range runs {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "Hunter2Secret") || !strings.Contains(string(b), `"key":"sha256:`) {
			t.Errorf("%s keeps the command verbatim: %s", f, b)
		}
	}

	// The override is on the execution log with what the gate would have said.
	// So is every denial, with the command's digest, never its text.
	if r := cli(t, dir, "", "exec", "log", "--phase", "cost", "--json"); strings.Count(r.out, "already ran on this unchanged tree") != 3 ||
		!strings.Contains(r.out, "the fix landed in a dependency") || strings.Contains(r.out, "go test ./strutil/") ||
		strings.Count(r.out, `"result": "FAIL"`) != 2 || !strings.Contains(r.out, "command sha256:") {
		t.Fatalf("cost entries in the exec log:\n%s", r.out)
	}
}
