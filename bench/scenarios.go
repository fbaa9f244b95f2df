package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
)

// recordScenario: `record append` and `record read --limit 10` through
// the CLI, on a store of b.records records, beside `git rev-parse HEAD`;
// then the files an append leaves in the repository, and (under strace,
// where there is one) the files it creates, temporary ones included.
func recordScenario(b *bench) {
	repos := map[string]string{}
	for _, s := range []subject{b.a, b.b} {
		repos[s.label] = b.newRepo("record-" + s.label)
		b.seedRecords(s, repos[s.label])
	}
	ser := series{}
	for i := 0; i < b.calls; i++ {
		ser.add("base", revParse(repos["A"]))
		for _, s := range b.turns(i) {
			x, _ := run(repos[s.label], "", nil, s.cli("record", "append", "--kind", "finding", "--claim", fmt.Sprintf("bench %d", i),
				"--content", strings.Repeat("bench body ", 30), "--scope", "bench")...)
			ser.add(s.label+" append", x)
			x, _ = run(repos[s.label], "", nil, s.cli("record", "read", "--limit", "10")...)
			ser.add(s.label+" read --limit 10", x)
		}
	}
	ser.table([]string{"append", "read --limit 10"}, "base")
	n := max(20, b.calls/2)
	for _, s := range []subject{b.a, b.b} {
		before := countFiles(repos[s.label])
		for i := 0; i < n; i++ {
			run(repos[s.label], "", nil, s.cli("record", "append", "--kind", "finding", "--claim", fmt.Sprintf("files %d", i), "--content", "x")...)
		}
		left := float64(countFiles(repos[s.label])-before) / float64(n)
		fmt.Printf("%s: files left per append %.2f (net, over %d appends)", s.label, left, n)
		if created, ok := createdFiles(repos[s.label], s.cli("record", "append", "--kind", "finding", "--claim", "traced", "--content", "x")); ok {
			fmt.Printf("; files created by one append %d (strace: opens with O_CREAT, mkdir, link)", created)
		}
		fmt.Println()
	}
}

// createdFiles runs argv under strace and counts the files it created.
func createdFiles(dir string, argv []string) (int, bool) {
	if _, err := exec.LookPath("strace"); err != nil {
		return 0, false
	}
	log := filepath.Join(dir, "..", "strace.log")
	defer os.Remove(log)
	run(dir, "", nil, append([]string{"strace", "-f", "-qq", "-e", "trace=open,openat,creat,mkdir,mkdirat,link,linkat", "-o", log}, argv...)...)
	b, err := os.ReadFile(log)
	if err != nil {
		return 0, false
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " = -1 ") || l == "" {
			continue
		}
		if strings.Contains(l, "O_CREAT") || strings.Contains(l, "mkdir") || strings.Contains(l, "link") || strings.Contains(l, "creat(") {
			n++
		}
	}
	return n, true
}

// boardScenario: work create, claim and complete through the CLI beside
// `git rev-parse HEAD`, each round on a fresh item.
func boardScenario(b *bench) {
	repos := map[string]string{"A": b.newRepo("board-A"), "B": b.newRepo("board-B")}
	ser := series{}
	for i := 0; i < b.calls; i++ {
		ser.add("base", revParse(repos["A"]))
		for _, s := range b.turns(i) {
			dir := repos[s.label]
			x, out := run(dir, "", nil, s.cli("work", "create", "--title", fmt.Sprintf("item %d", i), "--spec", "s", "--spec-format", "text", "--human", "bench")...)
			ser.add(s.label+" work create", x)
			id := firstID(out)
			x, out = run(dir, "", nil, s.cli("work", "claim", "--id", id, "--human", "bench")...)
			ser.add(s.label+" work claim", x)
			tok := strconv.FormatInt(claimToken(out), 10)
			x, _ = run(dir, "", nil, s.cli("work", "complete", "--id", id, "--token", tok, "--note", "done")...)
			ser.add(s.label+" work complete", x)
		}
	}
	ser.table([]string{"work create", "work claim", "work complete"}, "base")
}

// mcpScenario: one server per subject, each on a store of b.records
// records; a cycle of record_append, work_create, work_claim and
// work_complete on one server, then the other, the first switching every
// cycle. Also each server's CPU time per cycle.
func mcpScenario(b *bench) {
	cs := map[string]*mcpClient{}
	for _, s := range []subject{b.a, b.b} {
		repo := b.newRepo("mcp-" + s.label)
		b.seedRecords(s, repo)
		cs[s.label] = startMCP(s, repo)
		defer cs[s.label].stop()
	}
	tools := []string{"record_append", "work_create", "work_claim", "work_complete"}
	ser := series{}
	cpu0 := map[string]time.Duration{"A": cs["A"].cpu(), "B": cs["B"].cpu()}
	for i := 0; i < b.calls; i++ {
		for _, s := range b.turns(i) {
			c := cs[s.label]
			_, d := c.tool("record_append", map[string]any{"kind": "finding", "claim": fmt.Sprintf("mcp %d", i), "content": strings.Repeat("mcp body ", 30), "scope": "bench"})
			ser.add(s.label+" record_append", sample{wall: d})
			out, d := c.tool("work_create", map[string]any{"title": fmt.Sprintf("item %d", i), "spec": "s", "spec_format": "text", "actor_human": "bench"})
			ser.add(s.label+" work_create", sample{wall: d})
			id := firstID(out)
			out, d = c.tool("work_claim", map[string]any{"id": id, "actor_human": "bench"})
			ser.add(s.label+" work_claim", sample{wall: d})
			_, d = c.tool("work_complete", map[string]any{"id": id, "claim_token": claimToken(out), "note": "done"})
			ser.add(s.label+" work_complete", sample{wall: d})
		}
	}
	ser.table(tools, "")
	for _, l := range []string{"A", "B"} {
		fmt.Printf("%s server CPU per cycle: %v\n", l, ((cs[l].cpu() - cpu0[l]) / time.Duration(b.calls)).Round(time.Microsecond))
	}
}

// oursOnly returns the subjects a scenario without a counterpart in the
// reference compares: A and B, or A twice.
func (b *bench) oursOnly() (subject, subject) {
	if b.b.isRef() {
		fmt.Println("(the reference has no counterpart: A against itself)")
		return b.a, ours("B", b.a.bin)
	}
	return b.a, b.b
}

// syncScenario: a remote-authoritative claim (`work claim --remote
// origin`) and a no-op `sync` of a clone in step with a bare remote,
// beside `git fetch` of the same remote.
func syncScenario(b *bench) {
	a, bb := b.oursOnly()
	ser := series{}
	repos := map[string]string{}
	for _, s := range []subject{a, bb} {
		remote := filepath.Join(b.work, "sync-remote-"+s.label+".git")
		git(b.work, "init", "-q", "--bare", remote)
		dir := b.newRepo("sync-" + s.label)
		git(dir, "remote", "add", "origin", remote)
		git(dir, "push", "-q", "origin", "HEAD")
		run(dir, "", nil, s.bin, "sync")
		repos[s.label] = dir
	}
	for i := 0; i < b.calls; i++ {
		x, _ := run(repos["A"], "", nil, "git", "fetch", "-q", "origin")
		ser.add("base", x)
		for _, s := range pairTurns(i, a, bb) {
			dir := repos[s.label]
			_, out := run(dir, "", nil, s.bin, "work", "create", "--title", "t", "--spec", "s", "--spec-format", "text", "--human", "bench")
			id := firstID(out)
			run(dir, "", nil, s.bin, "sync")
			x, _ := run(dir, "", nil, s.bin, "work", "claim", "--id", id, "--human", "bench", "--remote", "origin")
			ser.add(s.label+" claim --remote", x)
			x, _ = run(dir, "", nil, s.bin, "sync")
			ser.add(s.label+" sync (in step)", x)
		}
	}
	ser.table([]string{"claim --remote", "sync (in step)"}, "base")
}

func pairTurns(i int, a, b subject) []subject {
	if i%2 == 0 {
		return []subject{a, b}
	}
	return []subject{b, a}
}

// gatesScenario: the PreToolUse hook as Claude Code runs it on every tool
// call (a fresh process, the payload on stdin), for a Bash command and a
// Write, beside `git rev-parse HEAD`.
func gatesScenario(b *bench) {
	a, bb := b.oursOnly()
	dir := b.newRepo("gates")
	payload := func(tool, input string) string {
		return fmt.Sprintf(`{"session_id":"bench","transcript_path":"","cwd":%q,"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s}`, dir, tool, input)
	}
	bash := payload("Bash", `{"command":"go test ./... && git status"}`)
	write := payload("Write", fmt.Sprintf(`{"file_path":%q,"content":"x"}`, filepath.Join(dir, "a.txt")))
	ser := series{}
	for i := 0; i < b.calls; i++ {
		ser.add("base", revParse(dir))
		for _, s := range pairTurns(i, a, bb) {
			x, _ := run(dir, bash, nil, s.bin, "hook")
			ser.add(s.label+" hook PreToolUse Bash", x)
			x, _ = run(dir, write, nil, s.bin, "hook")
			ser.add(s.label+" hook PreToolUse Write", x)
		}
	}
	ser.table([]string{"hook PreToolUse Bash", "hook PreToolUse Write"}, "base")
}

// planScenario: `plan check` of the sprint `plan new` writes, beside
// `git rev-parse HEAD`.
func planScenario(b *bench) {
	a, bb := b.oursOnly()
	dir := b.newRepo("plan")
	run(dir, "", nil, a.bin, "plan", "new")
	ser := series{}
	for i := 0; i < b.calls; i++ {
		ser.add("base", revParse(dir))
		for _, s := range pairTurns(i, a, bb) {
			cmd := exec.Command(s.bin, "plan", "check")
			cmd.Dir = dir
			t0 := time.Now()
			cmd.Run() // a fresh template has findings: its exit status is the verdict, not a crash
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() > 2 && cmd.ProcessState.ExitCode() != 3 && cmd.ProcessState.ExitCode() != 4 {
				must(fmt.Errorf("plan check crashed: %v", cmd.ProcessState))
			}
			ser.add(s.label+" plan check", sample{wall: time.Since(t0)})
		}
	}
	ser.table([]string{"plan check"}, "base")
}

// worktreeScenario: a task worktree's changes on a b.files-file
// repository with 50 changed files, through the store (git status and
// git diff underneath), beside `git status --porcelain` as a process.
func worktreeScenario(b *bench) {
	dir := b.newRepo("worktree")
	for i := 0; i < b.files; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.txt", i))
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644))
	}
	git(dir, "add", "-A")
	git(dir, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "files")
	base := git(dir, "rev-parse", "HEAD")
	for i := 0; i < min(50, b.files); i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.txt", i))
		must(os.WriteFile(p, []byte("changed\n"), 0o644))
	}
	g, err := gitstore.Open(dir)
	must(err)
	h, err := gitstore.ParseHash(base)
	must(err)
	ser := series{}
	for i := 0; i < b.calls; i++ {
		x, _ := run(dir, "", nil, "git", "status", "--porcelain")
		ser.add("base", x)
		t0 := time.Now()
		_, err := g.WorktreeChanges(context.Background(), h, dir)
		must(err)
		ser.add("A changes", sample{wall: time.Since(t0)})
	}
	w, _ := ser.med("A changes")
	bw, _ := ser.med("base")
	fmt.Printf("WorktreeChanges (in process, %d files, 50 changed): %v; git status --porcelain: %v; ratio %.2f\n", b.files, w.Round(time.Microsecond), bw.Round(time.Microsecond), ratio(w, bw))
}

// symbolsScenario: `symbols find` over a repository of b.files Python,
// TypeScript and Go files, with the tree-sitter helper beside the binary
// and without it (GIT_IDEATE_SYMBOLS=off), beside `git rev-parse HEAD`.
func symbolsScenario(b *bench) {
	a, _ := b.oursOnly()
	dir := b.newRepo("symbols")
	n := max(3, b.files/10)
	for i := 0; i < n; i++ {
		var p, src string
		switch i % 3 {
		case 0:
			p, src = fmt.Sprintf("py/m%04d.py", i), fmt.Sprintf("class C%d:\n    def run(self):\n        return %d\n\n\ndef f%d():\n    return C%d().run()\n", i, i, i, i)
		case 1:
			p, src = fmt.Sprintf("ts/m%04d.ts", i), fmt.Sprintf("export class C%d { run(): number { return %d } }\nexport function f%d() { return new C%d().run() }\n", i, i, i, i)
		default:
			p, src = fmt.Sprintf("go/m%04d/m.go", i), fmt.Sprintf("package m%d\n\ntype C%d struct{}\n\nfunc (C%d) Run() int { return %d }\n\nfunc F%d() int { return C%d{}.Run() }\n", i, i, i, i, i, i)
		}
		must(os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		must(os.WriteFile(filepath.Join(dir, p), []byte(src), 0o644))
	}
	ser := series{}
	for i := 0; i < b.calls; i++ {
		ser.add("base", revParse(dir))
		order := []string{"", "off"}
		if i%2 == 1 {
			order = []string{"off", ""}
		}
		for _, h := range order {
			label := "A"
			if h == "off" {
				label = "B"
			}
			x, _ := run(dir, "", []string{"GIT_IDEATE_SYMBOLS=" + h}, a.bin, "symbols", "find", "run", "--json")
			ser.add(label+" symbols find run", x)
		}
	}
	fmt.Printf("(A: the helper beside the binary where it was built; B: GIT_IDEATE_SYMBOLS=off, the fallback; %d files)\n", n)
	ser.table([]string{"symbols find run"}, "base")
}
