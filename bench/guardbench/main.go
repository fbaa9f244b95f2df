// Command guardbench measures the role guard the way Claude Code runs it:
// a fresh `git ideate hook` process per PreToolUse call, the payload on
// stdin, from inside a bound red-worker's task worktree. It sets up a
// scratch project (a plan with a Go runner, an open task, an approved
// dispatch and the host's meta file binding an agent to it), then times,
// interleaved call by call beside `git rev-parse HEAD`:
//
//   - allow: the red-worker writes a test file (Write) and runs go test on
//     its package (Bash: the role guard, then the bounded-cost gate);
//
//   - cost: a nested command the cost gate passes, `go test ./...` from
//     the one-package task, which it denies, and a package test that
//     failed asked again on the same unchanged tree, which it denies;
//
//   - deny: the red-worker writes production source, and echo > prod.go;
//
//   - main: the main session's Bash while the sprint executes;
//
//   - floor: a call the guard does not look at (the process alone).
//
//     go run ./bench/guardbench            # 60 calls per figure
//     go run ./bench/guardbench -calls 200
//
// The target is a median of at most 15 ms per call.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/plan/plantest"
)

// runners is appended to the example plan's standards.
const runners = "\n## Test runners\n\n### go\n\n- Extensions: `.go`\n- Test files: `**/*_test.go`\n- Run: `go test -json -count=1 -run '{go_regex}' {packages}`\n- Format: `go-test-json`\n"

func run(dir string, in []byte, bin string, args ...string) (benchutil.Sample, []byte) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil || errb.Len() > 0 {
		benchutil.Must(fmt.Errorf("%s %v: %v %s", filepath.Base(bin), args, err, errb.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return benchutil.Sample{Wall: wall, CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}, out
}

func js(v any) []byte {
	b, err := json.Marshal(v)
	benchutil.Must(err)
	return b
}

func git(dir string, args ...string) {
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		benchutil.Must(fmt.Errorf("git %v: %v %s", args, err, out))
	}
}

func main() {
	calls := flag.Int("calls", 60, "calls per figure")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "guardbench-")
	benchutil.Must(err)
	defer os.RemoveAll(tmp)
	bin, err := benchutil.Build(tmp)
	benchutil.Must(err)
	bin = benchutil.Full(bin) // the plugin runs hooks and the MCP server in the full binary
	dir := filepath.Join(tmp, "repo")
	benchutil.Must(benchutil.InitRepo(dir))
	benchutil.Must(plantest.CopyExample(dir))
	std := filepath.Join(dir, "docs", "agents", "sprint1", "standards.md")
	b, err := os.ReadFile(std)
	benchutil.Must(err)
	benchutil.Must(os.WriteFile(std, append(b, runners...), 0o644))
	for p, content := range map[string]string{
		"go.mod": "module m\n", "strutil/reverse.go": "package strutil\n",
	} {
		full := filepath.Join(dir, p)
		benchutil.Must(os.MkdirAll(filepath.Dir(full), 0o755))
		benchutil.Must(os.WriteFile(full, []byte(content), 0o644))
	}
	// A few hundred more files and commits, so a scan would show.
	for i := 0; i < 300; i++ {
		full := filepath.Join(dir, fmt.Sprintf("pkg%d/f%d.go", i%20, i))
		benchutil.Must(os.MkdirAll(filepath.Dir(full), 0o755))
		benchutil.Must(os.WriteFile(full, []byte("package p\n"), 0o644))
	}
	git(dir, "add", "-A")
	git(dir, "commit", "-q", "-m", "project")
	// The planning→execution gate: a stored PASS of the plan's check.
	if _, out := run(dir, nil, bin, "plan", "check"); len(out) == 0 {
		benchutil.Must(fmt.Errorf("plan check printed nothing"))
	}
	for _, task := range []string{"S1-01/T1", "S1-01/T2", "S1-02/T1"} {
		if _, out := run(dir, nil, bin, "task", "start", task, "--role", "red-worker", "--test", "strutil/reverse_test.go::TestX", "--scope", "strutil/**"); len(out) == 0 {
			benchutil.Must(fmt.Errorf("task start printed nothing"))
		}
	}
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	tr := filepath.Join(tmp, "projects", "sess.jsonl")
	base := map[string]any{"session_id": "3b311f76-4634-48ab-b822-33299bd463ef", "transcript_path": tr, "prompt_id": "p1",
		"permission_mode": "bypassPermissions", "effort": map[string]any{"level": "medium"}, "hook_event_name": "PreToolUse"}
	with := func(kv ...any) []byte {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return js(m)
	}
	// The dispatch, approved; the host's meta file; the first call binds.
	_, out := run(dir, with("cwd", dir, "tool_name", "Agent", "tool_use_id", "toolu_bench",
		"tool_input", map[string]any{"description": "d", "prompt": "ideate-task: S1-01/T1", "subagent_type": "git-ideate:red-worker"}), bin, "hook")
	if len(out) != 0 {
		benchutil.Must(fmt.Errorf("dispatch denied: %s", out))
	}
	meta := filepath.Join(strings.TrimSuffix(tr, ".jsonl"), "subagents", "agent-abench.meta.json")
	benchutil.Must(os.MkdirAll(filepath.Dir(meta), 0o755))
	benchutil.Must(os.WriteFile(meta, js(map[string]any{"agentType": "git-ideate:red-worker", "toolUseId": "toolu_bench"}), 0o644))
	sub := func(tool string, input map[string]any) []byte {
		return with("cwd", wt, "agent_id", "abench", "agent_type", "git-ideate:red-worker", "tool_name", tool, "tool_use_id", "toolu_x", "tool_input", input)
	}
	// A package test that failed, as the host reports it: the cost gate
	// remembers it on this tree, and the same line again is a rerun.
	const rerun = "go test -run TestX ./strutil/"
	if _, out := run(wt, with("cwd", wt, "agent_id", "abench", "agent_type", "git-ideate:red-worker", "tool_name", "Bash", "tool_use_id", "toolu_r1",
		"tool_input", map[string]any{"command": rerun}), bin, "hook"); len(out) != 0 {
		benchutil.Must(fmt.Errorf("first run denied: %s", out))
	}
	run(wt, with("cwd", wt, "agent_id", "abench", "agent_type", "git-ideate:red-worker", "tool_name", "Bash", "tool_use_id", "toolu_r1",
		"hook_event_name", "PostToolUseFailure", "error", "Exit code 1", "tool_input", map[string]any{"command": rerun}), bin, "hook")
	cases := []struct {
		name, dir string
		in        []byte
		deny      bool
	}{
		{"allow: red Write a test", wt, sub("Write", map[string]any{"file_path": "strutil/reverse_test.go", "content": "package strutil\n"}), false},
		{"allow: red Bash go test (guard+cost)", wt, sub("Bash", map[string]any{"command": "go test ./strutil/ 2>&1 | tail -20"}), false},
		{"cost allow: bash -c, cd, timeout", wt, sub("Bash", map[string]any{"command": "cd strutil && timeout 60 bash -c 'go test -run TestX ./...'"}), false},
		{"cost deny: go test ./...", wt, sub("Bash", map[string]any{"command": "go test ./... -run TestX"}), true},
		{"cost deny: the same unchanged tree", wt, sub("Bash", map[string]any{"command": rerun}), true},
		{"deny: red Write production", wt, sub("Write", map[string]any{"file_path": "strutil/reverse.go", "content": "package strutil\n"}), true},
		{"deny: red Bash echo > prod.go", wt, sub("Bash", map[string]any{"command": "echo x > strutil/prod.go"}), true},
		{"floor: main Read (nothing opened)", dir, with("cwd", dir, "tool_name", "Read", "tool_input", map[string]any{"file_path": "x"}), false},
		{"main: Bash during the sprint", dir, with("cwd", dir, "tool_name", "Bash", "tool_input", map[string]any{"command": "go vet ./..."}), false},
	}
	for _, c := range cases { // warm up, and check each decision
		_, out := run(c.dir, c.in, bin, "hook")
		if denied := bytes.Contains(out, []byte(`"deny"`)); denied != c.deny {
			benchutil.Must(fmt.Errorf("%s: output %q", c.name, out))
		}
	}
	samples := make([][]benchutil.Sample, len(cases))
	var baseSamples []benchutil.Sample
	for i := 0; i < *calls; i++ {
		s, _ := run(wt, nil, "git", "rev-parse", "HEAD")
		baseSamples = append(baseSamples, s)
		for j, c := range cases {
			s, _ := run(c.dir, c.in, bin, "hook")
			samples[j] = append(samples[j], s)
		}
	}
	baseStats := benchutil.Summarize(baseSamples)
	fmt.Printf("%-8s %-40s %10s %10s %8s\n", "calls", "figure", "wall", "cpu", "×rev-parse")
	benchutil.Row(*calls, "git rev-parse HEAD", baseStats, baseStats)
	for j, c := range cases {
		benchutil.Row(*calls, c.name, benchutil.Summarize(samples[j]), baseStats)
	}
}
