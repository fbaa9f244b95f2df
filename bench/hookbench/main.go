// Command hookbench measures `git ideate hook` the way Claude Code runs it:
// a fresh git-ideate process per event, the payload on stdin. It fills a
// scratch repository with records and board items (some claimed, a few of
// those with lapsed leases), then times each hook beside `git rev-parse
// HEAD`, interleaved call by call so a noisy machine shows up in both.
//
//	TMPDIR=/work/tmp-hookbench go run ./bench/hookbench
//	go run ./bench/hookbench -records 1000 -items 100 -calls 50   # quicker
//
// Capture hooks write a record per call, so the record grows by a few
// hundred during the run. Each PostToolUse call is given a fresh commit
// (made untimed with git) since a commit is recorded once. The capture
// figures (PostToolUse on a tool that is not a commit, UserPromptSubmit)
// append to .git/ideate/transcripts; the first Stop copies the session
// transcript whole, every later one only what it gained (nothing here).
package main

import (
	"bytes"
	"context"
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
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/record"
)

// run runs bin with args in dir, stdin fed from in, and returns its wall
// and CPU time and stdout; a non-zero exit is an error.
func run(dir string, in []byte, bin string, args ...string) (benchutil.Sample, []byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil {
		return benchutil.Sample{}, out, fmt.Errorf("%s %v: %w: %s", filepath.Base(bin), args, err, errb.String())
	}
	if errb.Len() > 0 {
		return benchutil.Sample{}, out, fmt.Errorf("%s %v wrote to stderr: %s", filepath.Base(bin), args, errb.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return benchutil.Sample{Wall: wall, CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}, out, nil
}

func git(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		benchutil.Must(fmt.Errorf("git %v: %v %s", args, err, out))
	}
	return strings.TrimSpace(string(out))
}

func js(v any) []byte {
	b, err := json.Marshal(v)
	benchutil.Must(err)
	return b
}

// transcript writes a session transcript of about size bytes: prompts,
// assistant text, tool calls on files of the repository, tool results.
func transcript(path, cwd string, size int) {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		file := fmt.Sprintf("%s/pkg%d/file%d.go", cwd, i%9, i%31)
		b.Write(js(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: change %s.", i, file)}}))
		b.WriteByte('\n')
		b.Write(js(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Looking at the file before editing it."},
			map[string]any{"type": "tool_use", "id": fmt.Sprint("t", i), "name": []string{"Read", "Edit", "Bash"}[i%3],
				"input": map[string]any{"file_path": file, "old_string": "a", "new_string": "b"}}}}}))
		b.WriteByte('\n')
		b.Write(js(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprint("t", i), "content": strings.Repeat("package pkg // line\n", 60)}}}}))
		b.WriteByte('\n')
	}
	benchutil.Must(os.WriteFile(path, b.Bytes(), 0o644))
}

func main() {
	nRecords := flag.Int("records", 10000, "records in the scratch repository")
	nItems := flag.Int("items", 1000, "board items")
	calls := flag.Int("calls", 100, "calls per figure")
	trSize := flag.Int("transcript", 1<<20, "bytes of the session transcript")
	keep := flag.Bool("keep", false, "keep the scratch repository")
	flag.Parse()

	work, err := os.MkdirTemp("", "hookbench-")
	benchutil.Must(err)
	if !*keep {
		defer os.RemoveAll(work)
	}
	bin, err := benchutil.Build(work)
	benchutil.Must(err)
	bin = benchutil.Full(bin) // the plugin runs hooks and the MCP server in the full binary
	repo := filepath.Join(work, "repo")
	benchutil.Must(benchutil.InitRepo(repo))
	fmt.Printf("hookbench: %s, %d records, %d items, %d calls per figure, scratch in %s\n",
		time.Now().UTC().Format(time.RFC3339), *nRecords, *nItems, *calls, filepath.Dir(work))

	// Fill: records through the library, as a long-lived project has them.
	t0 := time.Now()
	g, err := gitstore.Open(repo)
	benchutil.Must(err)
	rec := record.Open(g)
	kinds := []string{"finding", "decision", "session-outcome", "commit-boundary", "subagent-outcome"}
	body := strings.Repeat("The lockfile CAS held under contention; ", 8)[:300]
	for i := 0; i < *nRecords; i++ {
		_, err := rec.Append(context.Background(), record.AppendInput{Kind: kinds[i%len(kinds)], Claim: fmt.Sprintf("bench claim %d about the parser", i),
			Scope: fmt.Sprintf("pkg%d", i%9), VerificationAnchor: fmt.Sprintf("test:%d", i),
			Source: record.Source{CapturePoint: "bench", SessionID: fmt.Sprintf("bench-%d", i/50)}, Content: body})
		benchutil.Must(err)
	}
	// Items: a tenth claimed, a quarter of those five hours ago (lapsed
	// four-hour leases, swept by the first SessionStart).
	b := board.Open(g, rec)
	past := time.Now().Add(-5 * time.Hour)
	lapsed := 0
	for i := 0; i < *nItems; i++ {
		out, err := b.Create(context.Background(), board.CreateInput{Title: fmt.Sprintf("Bench item %d: tidy the parser", i), Spec: strings.Repeat("spec ", 40),
			SpecFormat: "plan/outline", CreatedBy: board.Actor{Human: "bench"}})
		benchutil.Must(err)
		if i%10 == 0 {
			if i%40 == 0 {
				b.Now = func() time.Time { return past }
				lapsed++
			}
			_, err := b.Claim(context.Background(), out.Item.ID, board.Actor{Human: "bench", Agent: "w"}, nil)
			benchutil.Must(err)
			b.Now = time.Now
		}
	}
	g.Close()
	fill := time.Since(t0)
	git(repo, "config", "user.name", "Bench")
	git(repo, "config", "user.email", "bench@example.com")
	for i := 0; i < 9; i++ {
		os.MkdirAll(filepath.Join(repo, fmt.Sprintf("pkg%d", i)), 0o755)
		os.WriteFile(filepath.Join(repo, fmt.Sprintf("pkg%d", i), "file.go"), []byte("package pkg\n"), 0o644)
	}
	git(repo, "add", "-A")
	git(repo, "commit", "-q", "-m", "code")
	// The fill created items faster than the board's background pack-refs
	// (at most one per 5 s) keeps up with, leaving hundreds of loose item
	// refs that every board read would list; pack them as that maintenance
	// would at the next write.
	git(repo, "pack-refs", "--all")
	fmt.Printf("fill: %v (%d records, %d items, %d of them claimed with lapsed leases)\n", fill.Round(time.Second), *nRecords, *nItems, lapsed)

	tr := filepath.Join(work, "session.jsonl")
	transcript(tr, repo, *trSize)
	agentTr := filepath.Join(work, "agent.jsonl")
	transcript(agentTr, repo, *trSize/8)
	session := "3b311f76-4634-48ab-b822-33299bd463ef"
	common := func(event string, extra map[string]any) []byte {
		m := map[string]any{"session_id": session, "transcript_path": tr, "cwd": repo, "hook_event_name": event}
		for k, v := range extra {
			m[k] = v
		}
		return js(m)
	}

	// The first SessionStart sweeps the lapsed claims: timed alone.
	s, out, err := run(repo, common("SessionStart", map[string]any{"source": "startup"}), bin, "hook")
	benchutil.Must(err)
	var first struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	benchutil.Must(json.Unmarshal(out, &first))
	ctx := first.HookSpecificOutput.AdditionalContext
	fmt.Printf("first SessionStart (sweeps %d of the %d lapsed claims): %v wall, %v cpu; context %d characters\n",
		min(lapsed, hooks.SweepMax), lapsed, s.Wall.Round(10*time.Microsecond), s.CPU.Round(10*time.Microsecond), len([]rune(ctx)))

	type figure struct {
		name    string
		args    []string // instead of "hook" (a reference figure)
		payload func(i int) []byte
		before  func(i int) // untimed preparation
		samples []benchutil.Sample
	}
	figures := []*figure{
		{name: "SessionStart (digest + board)", payload: func(int) []byte {
			return common("SessionStart", map[string]any{"source": "resume"})
		}},
		{name: "SubagentStart (scope matches)", payload: func(int) []byte {
			return common("SubagentStart", map[string]any{"agent_id": "a1", "agent_type": "ideate:pkg3"})
		}},
		{name: "SubagentStart (scope matches none)", payload: func(int) []byte {
			return common("SubagentStart", map[string]any{"agent_id": "a1", "agent_type": "ideate:nobody"})
		}},
		{name: "PreToolUse (no handler)", payload: func(int) []byte {
			return common("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
		}},
		{name: "SessionEnd (record + sweep)", payload: func(int) []byte {
			return common("SessionEnd", map[string]any{"reason": "other"})
		}},
		{name: "PreCompact", payload: func(int) []byte {
			return common("PreCompact", map[string]any{"trigger": "auto", "custom_instructions": nil})
		}},
		{name: "SubagentStop", payload: func(i int) []byte {
			return common("SubagentStop", map[string]any{"agent_id": fmt.Sprint("a", i), "agent_type": "ideate:pkg3",
				"agent_transcript_path": agentTr, "last_assistant_message": strings.Repeat("The subagent's report. ", 40)})
		}},
		{name: "SubagentStop (compaction summary)", payload: func(i int) []byte {
			return common("SubagentStop", map[string]any{"agent_id": fmt.Sprint("c", i), "agent_type": "",
				"agent_transcript_path": agentTr, "last_assistant_message": "<summary>" + strings.Repeat("Summary. ", 100) + "</summary>"})
		}},
		{name: "PostToolUse (capture: Read)", payload: func(i int) []byte {
			return common("PostToolUse", map[string]any{"tool_name": "Read", "tool_use_id": fmt.Sprint("toolu_r", i),
				"tool_input": map[string]any{"file_path": repo + "/pkg3/file.go"}, "tool_response": map[string]any{"type": "text",
					"file": map[string]any{"filePath": repo + "/pkg3/file.go", "content": strings.Repeat("package pkg // line\n", 100)}}})
		}},
		{name: "PostToolUse (capture: Bash, not a commit)", payload: func(i int) []byte {
			return common("PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": fmt.Sprint("toolu_b", i),
				"tool_input":    map[string]any{"command": "go test ./pkg3/", "description": "test"},
				"tool_response": map[string]any{"stdout": strings.Repeat("ok  \tpkg3\t0.01s\n", 40), "stderr": "", "interrupted": false}})
		}},
		{name: "UserPromptSubmit (capture)", payload: func(i int) []byte {
			return common("UserPromptSubmit", map[string]any{"prompt": fmt.Sprintf("Step %d: tidy the parser.", i)})
		}},
		{name: "Stop (transcript copy, incremental)", payload: func(i int) []byte {
			return common("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": "Done."})
		}},
		{name: "TaskCompleted", payload: func(i int) []byte {
			return common("TaskCompleted", map[string]any{"task_id": fmt.Sprint(i), "task_subject": "Tidy the parser",
				"task_description": "Remove the dead branches.", "teammate_name": "alice"})
		}},
	}
	var head string
	commit := &figure{name: "PostToolUse (git commit: record + note)", before: func(i int) {
		f := filepath.Join(repo, fmt.Sprintf("pkg%d", i%9), "file.go")
		os.WriteFile(f, []byte(fmt.Sprintf("package pkg // %d\n", i)), 0o644)
		git(repo, "commit", "-q", "-am", fmt.Sprintf("pkg%d: change %d", i%9, i))
		head = git(repo, "rev-parse", "HEAD")
	}}
	commit.payload = func(i int) []byte {
		return common("PostToolUse", map[string]any{"tool_name": "Bash", "tool_use_id": "toolu_1",
			"tool_input":    map[string]any{"command": fmt.Sprintf("git commit -am 'pkg%d: change %d'", i%9, i)},
			"tool_response": map[string]any{"stdout": "", "stderr": "", "gitOperation": map[string]any{"commit": map[string]any{"sha": head[:7]}}}})
	}
	figures = append(figures, commit, &figure{name: "record append (CLI, for reference)", payload: func(int) []byte { return nil },
		args: []string{"record", "append", "--kind", "finding", "--claim", "reference append", "--content", "x"}})

	var base []benchutil.Sample
	for i := 0; i < *calls; i++ {
		s, _, err := benchutil.Run(repo, "git", "rev-parse", "HEAD")
		benchutil.Must(err)
		base = append(base, s)
		for _, f := range figures {
			if f.before != nil {
				f.before(i)
			}
			args := f.args
			if args == nil {
				args = []string{"hook"}
			}
			s, _, err := run(repo, f.payload(i), bin, args...)
			benchutil.Must(err)
			f.samples = append(f.samples, s)
		}
	}
	fmt.Printf("%-8s %-40s %10s %10s %8s\n", "records", "figure", "median", "cpu", "ratio")
	bs := benchutil.Summarize(base)
	benchutil.Row(*nRecords, "git rev-parse HEAD (baseline)", bs, bs)
	for _, f := range figures {
		benchutil.Row(*nRecords, f.name, benchutil.Summarize(f.samples), bs)
	}
	rss, err := benchutil.PeakRSS(repo, "sh", "-c", bin+" hook < "+shellQuote(writeTemp(work, common("SessionStart", map[string]any{"source": "resume"}))))
	benchutil.Must(err)
	fmt.Printf("%-8d %-40s   SessionStart %d KiB (with sh)\n", *nRecords, "peak RSS", rss)
	fmt.Printf("records at the end: %s; notes on %s commits\n", git(repo, "rev-list", "--count", record.RefName),
		fmt.Sprint(strings.Count(git(repo, "notes", "--ref=ideate", "list"), "\n")+1))
}

func writeTemp(dir string, data []byte) string {
	p := filepath.Join(dir, "payload.json")
	benchutil.Must(os.WriteFile(p, data, 0o644))
	return p
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
