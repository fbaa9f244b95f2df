package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The worker's output.md is captured when it stops (the stop gate entry,
// through the built binary with the recorded SubagentStop payload): the
// output.md of attempt K lands on the task's ref as the role's report,
// attempts/K/output-red-worker.md, whatever the verdict, and the next
// attempt's feedback quotes it.
func TestHookGate_Binary_CaptureOutputAtStop(t *testing.T) {
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker"})
	const task = "S1-01/T1"
	s := newSession(t, dir)
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	type attempt struct {
		Attempt int `json:"attempt"`
		Outputs []struct {
			Role string `json:"role"`
			Text string `json:"text"`
		} `json:"outputs"`
		Output  string `json:"-"` // the red-worker's report
		Verdict string `json:"verdict"`
	}
	attempts := func() []attempt {
		t.Helper()
		var out struct {
			Attempts []attempt `json:"attempts"`
		}
		if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "task", "show", task, "--json")).out), &out); err != nil {
			t.Fatal(err)
		}
		for i, a := range out.Attempts {
			for _, o := range a.Outputs {
				if o.Role == "red-worker" {
					out.Attempts[i].Output = o.Text
				}
			}
		}
		return out.Attempts
	}
	// stop is agent's stop through the gate entry, after it wrote report.
	stop := func(toolUse, agent, report string) {
		t.Helper()
		wantAllow(t, "dispatch", s.dispatch(toolUse, "red-worker", "ideate-task: "+task))
		s.meta(agent, "red-worker", toolUse)
		if err := os.WriteFile(filepath.Join(wt, ".ideate", "output.md"), []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
		p := with(s.subStop, "cwd", wt, "transcript_path", s.transcript, "agent_id", agent, "agent_type", "git-ideate:red-worker", "stop_hook_active", false)
		if d := hookCall(t, wt, p, "--gate"); d.kind != "block" || !strings.Contains(d.reason, "git ideate gate red: ") {
			t.Fatalf("red stop: %+v", d)
		}
	}

	mustOK(t, bin(t, dir, "", "task", "attempt", task))
	const first = "# output\n\nattempt 1: the test is not written yet.\n"
	stop("toolu_o1", "aout1", first)
	as := attempts()
	if len(as) != 1 || as[0].Attempt != 1 || as[0].Output != first || !strings.HasPrefix(as[0].Verdict, "red ") {
		t.Fatalf("after the first stop: %+v", as)
	}
	// The verdict failed: the next attempt quotes the captured report.
	r := mustOK(t, bin(t, dir, "", "task", "attempt", task))
	if !strings.Contains(r.out, "attempt 2 of 3 opened") || !strings.Contains(r.out, "> attempt 1: the test is not written yet.") {
		t.Fatalf("attempt 2:\n%s", r.out)
	}
	const second = "# output\n\nattempt 2: still no test.\n"
	stop("toolu_o2", "aout2", second)
	as = attempts()
	if len(as) != 2 || as[0].Output != first || as[1].Attempt != 2 || as[1].Output != second {
		t.Fatalf("after the second stop: %+v", as)
	}
	// The worktree stays clean: output.md lives in the ignored .ideate/.
	if st := strings.TrimSpace(runGit(t, wt, "status", "--porcelain")); st != "" {
		t.Fatalf("the worktree is not clean: %q", st)
	}
}
