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

// boundWorker is the benchmarks' repository: the example plan with a Go
// runner, a strutil package, task S1-01/T1 started for an execution role
// (red-worker, green-worker), and agent abench dispatched (toolu_bench1)
// and bound to it. payload builds a
// PreToolUse payload in the worktree for the bound agent (toolu_bench2);
// run runs the built binary in the repository and returns its stdout;
// dispatch has the main session dispatch a worker for a started task.
type boundWorker struct {
	dir, wt  string
	run      func(stdin string, args ...string) string
	payload  func(tool string, input map[string]any) string
	mainCall func(tool string, input map[string]any) string // the main session's call, from the main checkout
	dispatch func(toolUse, task, role string)
}

func newBoundWorker(b *testing.B, role string) *boundWorker {
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
	f := &boundWorker{dir: dir, wt: filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")}
	f.run = func(stdin string, args ...string) string {
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
	f.run("", "plan", "check")
	f.run("", "task", "start", "S1-01/T1", "--role", role, "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**")
	tr := filepath.Join(b.TempDir(), "projects", "s1.jsonl")
	meta := filepath.Join(strings.TrimSuffix(tr, ".jsonl"), "subagents", "agent-abench.meta.json")
	os.MkdirAll(filepath.Dir(meta), 0o755)
	os.WriteFile(meta, []byte(`{"agentType":"git-ideate:`+role+`","toolUseId":"toolu_bench1"}`), 0o644)
	f.dispatch = func(toolUse, task, role string) {
		data, _ := json.Marshal(map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Agent",
			"tool_use_id": toolUse, "tool_input": map[string]any{"description": role, "prompt": "ideate-task: " + task, "subagent_type": "git-ideate:" + role}})
		if out := f.run(string(data), "hook"); out != "" {
			b.Fatalf("dispatch of %s: %s", task, out)
		}
	}
	f.dispatch("toolu_bench1", "S1-01/T1", role)
	f.payload = func(tool string, input map[string]any) string {
		data, _ := json.Marshal(map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": f.wt, "hook_event_name": "PreToolUse",
			"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_bench2", "agent_id": "abench", "agent_type": "git-ideate:" + role})
		return string(data)
	}
	f.mainCall = func(tool string, input map[string]any) string {
		data, _ := json.Marshal(map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": dir, "hook_event_name": "PreToolUse",
			"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_bench3"})
		return string(data)
	}
	return f
}

// BenchmarkHook_PreToolUse is the PreToolUse decision for a bound
// red-worker and a bound green-worker as the host asks it: a fresh built
// binary per call, the payload on stdin, interleaved call by call with
// `git rev-parse HEAD` in the same worktree. It reports each median and
// the ratio to git's. Write is the role guard's file check (a test file
// for the red-worker, a production file for the green-worker); Bash is
// the answer that wraps the command in the confining entry (binding,
// contract, cost gate, rewrite). The calls are timed once the fixture's
// git configuration is kept (see below). Beside another worker (a second
// task's red-worker dispatched), the confined Bash call's writes are
// logged for the ledger by the confining entry, not the hook (ledger.go);
// a Write's at its PostToolUse. The main session's own calls while the
// worker is at work (a Write of a note, a Bash `go test`) are guarded
// too, and its Bash call notes the working trees' state for the ledger.
func BenchmarkHook_PreToolUse(b *testing.B) {
	for _, c := range []struct {
		name, role, file string
		beside, main     bool
	}{
		{"red-worker", "red-worker", "a_test.go", false, false},
		{"green-worker", "green-worker", "a.go", false, false},
		{"red-worker-beside-another", "red-worker", "a_test.go", true, false},
		{"main-session-beside-a-worker", "red-worker", "", false, true},
	} {
		b.Run(c.name, func(b *testing.B) { benchmarkPreToolUse(b, c.role, c.file, c.beside, c.main) })
	}
}

func benchmarkPreToolUse(b *testing.B, role, file string, beside, main bool) {
	f := newBoundWorker(b, role)
	wt, run := f.wt, f.run
	if beside {
		run("", "task", "start", "S1-01/T2", "--role", "red-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**")
		f.dispatch("toolu_other", "S1-01/T2", "red-worker")
	}
	write := f.payload("Write", map[string]any{"file_path": filepath.Join(wt, "strutil", file), "content": "package strutil\n"})
	bash := f.payload("Bash", map[string]any{"command": "go test ./strutil/", "description": "test"})
	bashAnswer := "updatedInput"
	if main {
		write = f.mainCall("Write", map[string]any{"file_path": filepath.Join(f.dir, "notes.md"), "content": "notes\n"})
		bash = f.mainCall("Bash", map[string]any{"command": "go test ./strutil/", "description": "test"})
		bashAnswer = ""
	}
	if out := run(write, "hook"); out != "" {
		b.Fatalf("write: %s", out)
	}
	if out := run(bash, "hook"); !strings.Contains(out, bashAnswer) || bashAnswer == "" && out != "" {
		b.Fatalf("bash: %s", out)
	}
	// A git configuration file changed under two seconds ago (task start
	// just wrote the worktree's) cannot be told from a change in the same
	// clock tick, so until then every call runs `git config` instead of
	// reading the kept copy. A worker's first call comes later than that
	// (its model answers first): the figure is the calls after it.
	cache := filepath.Join(f.dir, ".git", "worktrees", "S1-01+T1", "ideate", "config-cache")
	if main {
		cache = filepath.Join(f.dir, ".git", "ideate", "config-cache")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		run(write, "hook")
		if _, err := os.Stat(cache); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the configuration is not kept after 10 s (%s)", cache)
		}
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
	// HOOK_BENCH_BEFORE names another build (an earlier commit's) to time
	// in the same run, in turn with this one: a change's before and after.
	before := os.Getenv("HOOK_BENCH_BEFORE")
	// The main session's Bash call is noted for the escape ledger at its
	// PreToolUse and logged at its PostToolUse: the pair is timed too.
	var post string
	if main {
		var m map[string]any
		json.Unmarshal([]byte(bash), &m)
		m["hook_event_name"] = "PostToolUse"
		m["tool_response"] = map[string]any{"stdout": "ok", "stderr": ""}
		data, _ := json.Marshal(m)
		post = string(data)
	}
	var git, w, sh, bw, bsh, sp, bsp []time.Duration
	turn := func(bin string, w, sh, sp *[]time.Duration) {
		*w = append(*w, timeIt(bin, []string{"hook"}, write))
		*sh = append(*sh, timeIt(bin, []string{"hook"}, bash))
		if post != "" {
			*sp = append(*sp, timeIt(bin, []string{"hook"}, post))
		}
	}
	for i := 0; b.Loop(); i++ {
		git = append(git, timeIt("git", []string{"rev-parse", "HEAD"}, ""))
		if before != "" && i%2 == 0 {
			turn(before, &bw, &bsh, &bsp)
		}
		turn(binPath, &w, &sh, &sp)
		if before != "" && i%2 == 1 {
			turn(before, &bw, &bsh, &bsp)
		}
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
	if post != "" {
		b.ReportMetric(float64(med(sp))/float64(g), "bash-post/rev-parse")
	}
	if before != "" {
		b.ReportMetric(float64(med(bw))/float64(g), "before-write/rev-parse")
		b.ReportMetric(float64(med(bsh))/float64(g), "before-bash/rev-parse")
		if post != "" {
			b.ReportMetric(float64(med(bsp))/float64(g), "before-bash-post/rev-parse")
		}
	}
}

// BenchmarkConfine_GoTest is what confinement adds to a worker's
// `go test ./strutil/`: the bound red-worker's command run bare in its
// worktree and through the confining entry the hook rewrites it to, call
// by call in turn, both with the workers' warm build cache. It reports
// each median and their difference, and the difference for `true` (the
// confining entry's own cost, which the build's noise hides).
func BenchmarkConfine_GoTest(b *testing.B) {
	f := newBoundWorker(b, "red-worker")
	dir, wt, run := f.dir, f.wt, f.run
	if !strings.Contains(run("", "doctor"), "mode: confined") {
		b.Skip("no operating-system confinement here")
	}
	if out := run(f.payload("Bash", map[string]any{"command": "go test ./strutil/"}), "hook"); !strings.Contains(out, "updatedInput") {
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
	// HOOK_BENCH_BEFORE names another build whose entry is timed in turn
	// too (`true` only): a change's before and after.
	before := os.Getenv("HOOK_BENCH_BEFORE")
	var bare, conf, bareTrue, confTrue, beforeTrue, beforeConf []time.Duration
	for b.Loop() {
		bare = append(bare, timeIt("go", "test", "./strutil/"))
		conf = append(conf, timeIt(confined...))
		bareTrue = append(bareTrue, timeIt("bash", "-c", "true"))
		confTrue = append(confTrue, timeIt(empty...))
		if before != "" {
			beforeTrue = append(beforeTrue, timeIt(append([]string{before}, empty[1:]...)...))
			beforeConf = append(beforeConf, timeIt(append([]string{before}, confined[1:]...)...))
		}
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
	if before != "" {
		b.ReportMetric(float64((med(beforeTrue)-med(bareTrue)).Microseconds())/1000, "before-entry-overhead-ms")
		b.ReportMetric(float64((med(beforeConf)-med(bare)).Microseconds())/1000, "before-overhead-ms")
	}
}
