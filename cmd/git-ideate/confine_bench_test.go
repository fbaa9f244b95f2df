package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan/plantest"
)

// BenchmarkHook_PreToolUse is the PreToolUse decision for a bound
// red-worker as the host asks it: a fresh built binary per call, the
// payload on stdin, interleaved call by call with `git rev-parse HEAD`
// in the same worktree. It reports each median and the ratio to git's.
// Write is the role guard's file check; Bash is the answer that wraps the
// command in the confining entry (binding, contract, cost gate, rewrite).
func BenchmarkHook_PreToolUse(b *testing.B) {
	dir := gt.NewRepo(b)
	if out, err := exec.Command("cp", "-r", filepath.Join(plantest.ExampleDir(), "docs"), dir).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
	std := filepath.Join(dir, "docs", "agents", "sprint1", "standards.md")
	raw, _ := os.ReadFile(std)
	os.WriteFile(std, plantest.ReplaceRunners(raw, goRunner), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "strutil"), 0o755)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse.go"), []byte("package strutil\n\nfunc Reverse(s string) string { return s }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse_test.go"), []byte("package strutil\n"), 0o644)
	gt.Git(b, dir, "add", "-A")
	gt.Git(b, dir, "commit", "-qm", "base")
	run := func(stdin string, args ...string) string {
		c := exec.Command(binPath, args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "IDEATE_CONFINE=1")
		c.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil {
			b.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String()
	}
	run("", "plan", "check")
	run("", "task", "start", "S1-01/T1", "--role", "red-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**")
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	tr := filepath.Join(b.TempDir(), "projects", "s1.jsonl")
	meta := filepath.Join(strings.TrimSuffix(tr, ".jsonl"), "subagents", "agent-abench.meta.json")
	os.MkdirAll(filepath.Dir(meta), 0o755)
	os.WriteFile(meta, []byte(`{"agentType":"git-ideate:red-worker","toolUseId":"toolu_bench1"}`), 0o644)
	payload := func(cwd, tool string, input map[string]any, sub bool) string {
		p := map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": cwd, "hook_event_name": "PreToolUse",
			"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_bench1"}
		if sub {
			p["agent_id"], p["agent_type"] = "abench", "git-ideate:red-worker"
			p["tool_use_id"] = "toolu_bench2"
		}
		data, _ := json.Marshal(p)
		return string(data)
	}
	if out := run(payload(dir, "Agent", map[string]any{"description": "red", "prompt": "ideate-task: S1-01/T1", "subagent_type": "git-ideate:red-worker"}, false), "hook"); out != "" {
		b.Fatalf("dispatch: %s", out)
	}
	write := payload(wt, "Write", map[string]any{"file_path": filepath.Join(wt, "strutil", "a_test.go"), "content": "package strutil\n"}, true)
	bash := payload(wt, "Bash", map[string]any{"command": "go test ./strutil/", "description": "test"}, true)
	if out := run(write, "hook"); out != "" {
		b.Fatalf("write: %s", out)
	}
	if out := run(bash, "hook"); !strings.Contains(out, "updatedInput") {
		b.Fatalf("bash: %s", out)
	}
	timeIt := func(name string, args []string, stdin string) time.Duration {
		c := exec.Command(name, args...)
		c.Dir = wt
		c.Env = append(os.Environ(), "IDEATE_CONFINE=1")
		c.Stdin = strings.NewReader(stdin)
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v %s", name, err, out)
		}
		return time.Since(start)
	}
	var git, w, sh []time.Duration
	for b.Loop() {
		git = append(git, timeIt("git", []string{"rev-parse", "HEAD"}, ""))
		w = append(w, timeIt(binPath, []string{"hook"}, write))
		sh = append(sh, timeIt(binPath, []string{"hook"}, bash))
	}
	med := func(d []time.Duration) time.Duration {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[len(s)/2]
	}
	g := med(git)
	b.ReportMetric(float64(g.Microseconds())/1000, "rev-parse-ms")
	b.ReportMetric(float64(med(w).Microseconds())/1000, "write-ms")
	b.ReportMetric(float64(med(sh).Microseconds())/1000, "bash-ms")
	b.ReportMetric(float64(med(w))/float64(g), "write/rev-parse")
	b.ReportMetric(float64(med(sh))/float64(g), "bash/rev-parse")
}

// BenchmarkConfine_GoTest is what confinement adds to a worker's
// `go test ./strutil/`: the bound red-worker's command run bare in its
// worktree and through the confining entry the hook rewrites it to, call
// by call in turn, both with the workers' warm build cache. It reports
// each median and their difference, and the difference for `true` (the
// confining entry's own cost, which the build's noise hides).
func BenchmarkConfine_GoTest(b *testing.B) {
	dir := gt.NewRepo(b)
	if out, err := exec.Command("cp", "-r", filepath.Join(plantest.ExampleDir(), "docs"), dir).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
	std := filepath.Join(dir, "docs", "agents", "sprint1", "standards.md")
	raw, _ := os.ReadFile(std)
	os.WriteFile(std, plantest.ReplaceRunners(raw, goRunner), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "strutil"), 0o755)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse.go"), []byte("package strutil\n\nfunc Reverse(s string) string { return s }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse_test.go"), []byte("package strutil\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) { _ = Reverse(\"ab\") }\n"), 0o644)
	gt.Git(b, dir, "add", "-A")
	gt.Git(b, dir, "commit", "-qm", "base")
	run := func(stdin string, args ...string) string {
		c := exec.Command(binPath, args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "IDEATE_CONFINE=1")
		c.Stdin = strings.NewReader(stdin)
		out, err := c.CombinedOutput()
		if err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if !strings.Contains(run("", "doctor"), "mode: confined") {
		b.Skip("no operating-system confinement here")
	}
	run("", "plan", "check")
	run("", "task", "start", "S1-01/T1", "--role", "red-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**")
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	tr := filepath.Join(b.TempDir(), "projects", "s1.jsonl")
	meta := filepath.Join(strings.TrimSuffix(tr, ".jsonl"), "subagents", "agent-abench.meta.json")
	os.MkdirAll(filepath.Dir(meta), 0o755)
	os.WriteFile(meta, []byte(`{"agentType":"git-ideate:red-worker","toolUseId":"toolu_bench1"}`), 0o644)
	p, _ := json.Marshal(map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Agent",
		"tool_use_id": "toolu_bench1", "tool_input": map[string]any{"description": "red", "prompt": "ideate-task: S1-01/T1", "subagent_type": "git-ideate:red-worker"}})
	run(string(p), "hook")
	p, _ = json.Marshal(map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": wt, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_use_id": "toolu_bench2", "agent_id": "abench", "agent_type": "git-ideate:red-worker", "tool_input": map[string]any{"command": "go test ./strutil/"}})
	if out := run(string(p), "hook"); !strings.Contains(out, "updatedInput") {
		b.Fatalf("the bound red-worker's Bash is not confined: %s", out)
	}
	cache := filepath.Join(dir, ".git", "ideate", "confine", "cache")
	timeIt := func(args ...string) time.Duration {
		c := exec.Command(args[0], args[1:]...)
		c.Dir = wt
		c.Env = append(os.Environ(), "IDEATE_CONFINE=1", "GOCACHE="+filepath.Join(cache, "go-build"), "GOFLAGS=-count=1")
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v %s", args, err, out)
		}
		return time.Since(start)
	}
	confined := []string{binPath, "confine", "--task", "S1-01/T1", "--role", "red-worker", "--agent", "abench", "--", "go test ./strutil/"}
	timeIt(confined...) // warms the workers' cache
	// The entry's own cost, apart from the build's noise: a command that
	// does nothing, bare and confined.
	empty := []string{binPath, "confine", "--task", "S1-01/T1", "--role", "red-worker", "--agent", "abench", "--", "true"}
	var bare, conf, bareTrue, confTrue []time.Duration
	for b.Loop() {
		bare = append(bare, timeIt("go", "test", "./strutil/"))
		conf = append(conf, timeIt(confined...))
		bareTrue = append(bareTrue, timeIt("bash", "-c", "true"))
		confTrue = append(confTrue, timeIt(empty...))
	}
	med := func(d []time.Duration) time.Duration {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[len(s)/2]
	}
	b.ReportMetric(float64(med(bare).Microseconds())/1000, "bare-ms")
	b.ReportMetric(float64(med(conf).Microseconds())/1000, "confined-ms")
	b.ReportMetric(float64((med(conf)-med(bare)).Microseconds())/1000, "overhead-ms")
	b.ReportMetric(float64((med(confTrue)-med(bareTrue)).Microseconds())/1000, "entry-overhead-ms")
}
