package gates_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
)

func TestBashWrites(t *testing.T) {
	for _, c := range []struct {
		line    string
		want    []string // paths; a trailing "/" marks Dir, a leading "+" Mkdir, "@" Repo
		unknown string   // a substring of the reason, "" for none
	}{
		{line: "go test ./... 2>&1 | tail -5"},
		{line: "ls -la; cat a.go | grep x > /dev/null"},
		{line: "git status && git diff --stat && git log -3"},
		{line: `grep -n "a>b" x.go`},
		{line: "echo x > prod.go", want: []string{"prod.go"}},
		{line: "echo x>prod.go", want: []string{"prod.go"}},
		{line: "echo x >> 'a b.go' 2>err.log", want: []string{"a b.go", "err.log"}},
		{line: "echo hi >&2"},
		{line: "make &> build.log", unknown: "make runs code"},
		{line: "go vet ./... &> build.log", want: []string{"build.log"}},
		{line: "printf x | tee -a one.go two_test.go", want: []string{"one.go", "two_test.go"}},
		{line: "sed -i 's/a/b/' x.go y.go", want: []string{"x.go", "y.go"}},
		{line: "sed -i.bak -e 's/a/b/' x.go", want: []string{"x.go"}},
		{line: "sed -n 's/a/b/p' x.go"},
		{line: "cp a.go b/c.go", want: []string{"b/c.go", "b/c.go/a.go"}}, // b/c.go may be a directory
		{line: "cp /tmp/a.go pkg/", want: []string{"pkg", "pkg/a.go"}},
		{line: "cp -t pkg /tmp/a.go", want: []string{"pkg/", "pkg/a.go"}},
		{line: "cp -r src dst", want: []string{"dst/", "dst/src/"}},
		{line: "mv a.go b.go", want: []string{"a.go", "b.go", "b.go/a.go"}},
		{line: "uniq /tmp/a pkg/b.go", want: []string{"pkg/b.go"}},
		{line: "xxd -r /tmp/a pkg/b.go", want: []string{"pkg/b.go"}},
		{line: "tree -o pkg/b.go", want: []string{"pkg/b.go"}},
		{line: "git ideate work ready --claim=true --human h", want: []string{"@."}},
		{line: "rg --pre ./p x", unknown: "rg --pre"},
		{line: "rm -f x_test.go", want: []string{"x_test.go"}},
		{line: "rm -rf build", want: []string{"build/"}},
		{line: "touch a b", want: []string{"a", "b"}},
		{line: "mkdir -p pkg/x", want: []string{"+pkg/x"}},
		{line: "CGO_ENABLED=1 env -i sudo touch z", want: []string{"z"}},
		{line: "FOO=1 touch z", unknown: "assignment to FOO"},
		{line: "GIT_WORK_TREE=/m git checkout HEAD -- f", unknown: "GIT_WORK_TREE"},
		{line: "git checkout -- x_test.go", want: []string{"x_test.go"}},
		{line: "git checkout main", want: []string{"./"}},
		{line: "git restore x_test.go", want: []string{"x_test.go"}},
		{line: "git restore --staged x_test.go", want: []string{"@."}},
		{line: "git add -A && git commit -m 'a > b'", want: []string{"@.", "@."}},
		{line: "cd sub && git commit -qm x", want: []string{"@sub"}},
		{line: "git reset HEAD~1", want: []string{"@."}},
		{line: "git ideate task list && git ideate exec log --phase red && git ideate gate red --task S1-01/T1"},
		{line: "git ideate test run --task S1-01/T1 --label red | tail -3"},
		{line: "git ideate --version; git-ideate work list --json"},
		{line: "git ideate work create --title x --spec y --human h --spec-format text/markdown", want: []string{"@."}},
		{line: "git-ideate -C /r record append --kind note --claim x", want: []string{"@/r"}},
		{line: "git ideate work ready --claim", want: []string{"@."}},
		{line: "cd sub && git ideate task start S1-01/T1", want: []string{"@sub"}},
		{line: "cat > f_test.go <<'EOF'\npackage x\necho y > prod.go\nEOF\ngo test ./...", want: []string{"f_test.go"}},
		{line: "bash -c 'echo x > inner.go'", want: []string{"inner.go"}},
		{line: "python3 -m pytest -q"},
		{line: "git apply p.diff", unknown: "git apply"},
		{line: "git reset --hard HEAD", unknown: "reset --hard"},
		{line: "eval \"$X\"", unknown: "eval"},
		{line: "echo x > $(echo prod.go)", unknown: "expansion"},
		{line: "echo x > \"$F\"", unknown: "expansion"},
		{line: "echo `date` > f", want: []string{"f"}},
		{line: "echo `touch g` > f", want: []string{"g", "f"}},
		{line: "python -c 'open(\"p.go\",\"w\")'", unknown: "runs code"},
		{line: "python3 - <<EOF\nprint(1)\nEOF", unknown: "runs code"},
		{line: "node -e 'require(\"fs\").writeFileSync(\"x\",\"\")'", unknown: "runs code"},
		{line: "perl -pi -e 's/a/b/' x.go", unknown: "runs code"},
		{line: "find . -name '*.orig' -delete", unknown: "-delete"},
		{line: "find . -name x -exec rm {} +", unknown: "rm on arguments"},
		{line: "ls | xargs rm", unknown: "xargs"},
		{line: "source env.sh", unknown: "source"},
		{line: "sh script.sh", unknown: "script"},
		{line: "cat <<EOF > x\nno end", unknown: "does not parse"},
		{line: "cd /abs/wt && go test ./..."},
		{line: "cd sub && rm a_test.go && cd ../other && touch b.go", want: []string{"sub/a_test.go", "other/b.go"}},
		{line: "cd /else; rm x.go", want: []string{"/else/x.go"}},
		{line: "cd sub && echo x > f.go", want: []string{"sub/f.go"}},
		{line: "(cd deep/dir && true); rm ../../../f", want: []string{"../../../f"}},
		{line: "cd $HOME && rm x", unknown: "cd the guard cannot follow"},
		{line: "cd && rm x", unknown: "cd the guard cannot follow"},
		{line: "env -C /else rm x", want: []string{"/else/x"}},
		{line: "timeout 5 touch F", want: []string{"F"}},
		{line: "{ touch F; }", want: []string{"F"}},
		{line: "for i in 1; do touch F; done", want: []string{"F"}},
		{line: "f() { touch F; }; f", want: []string{"F"}},
		{line: "git commit -m 'feat(x): y'", want: []string{"@."}},
		{line: "patch -p1 < x", unknown: "patch is not a program"},
		{line: "gofmt -w a.go", want: []string{"a.go/"}},
		{line: "go generate ./...", unknown: "go generate"},
		{line: "git -c core.fsmonitor=x status", unknown: "git -c"},
		{line: "sort -o F x", want: []string{"F"}},
		{line: "curl -o F file:///etc/passwd", unknown: "curl"},
		{line: "git diff --output=F", want: []string{"F"}},
		{line: "tar xf a.tar", unknown: "tar"},
		{line: "awk -f .ideate/output.md", unknown: "runs code"},
		{line: "sh .ideate/output.md", unknown: "script"},
		{line: "make -f .ideate/output.md", unknown: "runs code"},
	} {
		ws, unknown := gates.BashWrites(c.line)
		var got []string
		for _, w := range ws {
			p := w.Path
			if w.Dir {
				p += "/"
			}
			if w.Mkdir {
				p = "+" + p
			}
			if w.Repo {
				p = "@" + p
			}
			got = append(got, p)
		}
		if c.unknown == "" && unknown != "" || c.unknown != "" && !strings.Contains(unknown, c.unknown) {
			t.Errorf("%q: unknown = %q, want %q", c.line, unknown, c.unknown)
			continue
		}
		if c.unknown == "" && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: writes %q, want %q", c.line, got, c.want)
		}
	}
}

func TestGuard(t *testing.T) {
	root := t.TempDir()
	top := filepath.Join(root, "repo")
	wt := filepath.Join(top, ".ideate", "worktrees", "S1-01+T1")
	for _, d := range []string{wt, filepath.Join(top, "docs", "agents")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, "shim.go"), []byte("package x // agentic:shim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A hard link: a production name for a test file.
	os.WriteFile(filepath.Join(wt, "frozen_test.go"), []byte("package x\n"), 0o644)
	if err := os.Link(filepath.Join(wt, "frozen_test.go"), filepath.Join(wt, "alias.go")); err != nil {
		t.Fatal(err)
	}
	// A symlink inside the worktree that leads out of it.
	if err := os.Symlink(top, filepath.Join(wt, "up")); err != nil {
		t.Fatal(err)
	}
	facts := func(mod func(*gates.GuardFacts)) *gates.GuardFacts {
		f := &gates.GuardFacts{Subagent: true, Bound: true, Cwd: wt, Top: top, Worktree: wt,
			TestGlobs: []string{"**/*_test.go"}, ShimMarker: "agentic:shim", Frozen: []string{"frozen.go"}}
		if mod != nil {
			mod(f)
		}
		return f
	}
	run := func(role, tool, cmd string, paths []string, f *gates.GuardFacts) gates.Verdict {
		if f != nil && f.Bound && f.Agent == nil && gates.IsExecutionRole(role) {
			f.Agent = &gates.AgentFacts{Task: "S1-01/T1", Status: "open", Open: true, TaskRole: role}
		}
		v, err := gates.Guard.Run(context.Background(), gates.Input{Point: gates.BeforeTool, Role: role, Tool: tool, Command: cmd, Paths: paths, Guard: f})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name, role, tool, cmd string
		paths                 []string
		f                     *gates.GuardFacts
		want                  gates.Result
		class                 string
	}{
		{"red writes a test", "red-worker", "Write", "", []string{"pkg/a_test.go"}, facts(nil), gates.PASS, ""},
		{"red writes a test, absolute", "red-worker", "Edit", "", []string{filepath.Join(wt, "a_test.go")}, facts(nil), gates.PASS, ""},
		{"red writes production", "red-worker", "Write", "", []string{"a.go"}, facts(nil), gates.FAIL, "not_a_test"},
		{"red writes a new shim", "red-worker", "Write", "", []string{"b.go"}, facts(func(f *gates.GuardFacts) { f.Content, f.HasContent = "// agentic:shim\n", true }), gates.PASS, ""},
		{"red edits an existing shim", "red-worker", "Edit", "", []string{"shim.go"}, facts(nil), gates.PASS, ""},
		{"red escapes with ..", "red-worker", "Write", "", []string{"../../../x_test.go"}, facts(nil), gates.FAIL, "outside_worktree"},
		{"red escapes through a symlink", "red-worker", "Write", "", []string{"up/x_test.go"}, facts(nil), gates.FAIL, "outside_worktree"},
		{"red bash echo to prod", "red-worker", "Bash", "echo x > prod.go", nil, facts(nil), gates.FAIL, "not_a_test"},
		{"red bash tee a test", "red-worker", "Bash", "echo x | tee a_test.go", nil, facts(nil), gates.PASS, ""},
		{"red go test", "red-worker", "Bash", "go test ./... 2>&1 | tail", nil, facts(nil), gates.PASS, ""},
		{"red commits in its worktree", "red-worker", "Bash", "git add -A && git commit -qm red", nil, facts(nil), gates.PASS, ""},
		{"red commits in the main checkout", "red-worker", "Bash", "git add -A && git commit -qm red", nil, facts(func(f *gates.GuardFacts) { f.Cwd = top }), gates.FAIL, "outside_worktree"},
		{"unbound sub-agent in a sprint commits", "", "Bash", "git commit -q --allow-empty -m x", nil, facts(func(f *gates.GuardFacts) { f.Bound, f.Sprint, f.Worktree, f.Cwd = false, true, "", top }), gates.FAIL, "sprint_read_only"},
		{"main session in a sprint commits", "", "Bash", "git add -A && git commit -qm plan", nil, &gates.GuardFacts{Cwd: top, Top: top, Sprint: true}, gates.PASS, ""},
		{"unbound sub-agent in a sprint files an item", "", "Bash", "git ideate work create --title x --spec y", nil, facts(func(f *gates.GuardFacts) { f.Bound, f.Sprint, f.Worktree, f.Cwd = false, true, "", top }), gates.FAIL, "sprint_read_only"},
		{"unbound sub-agent in a sprint reads the board", "", "Bash", "git ideate work list", nil, facts(func(f *gates.GuardFacts) { f.Bound, f.Sprint, f.Worktree, f.Cwd = false, true, "", top }), gates.PASS, ""},
		{"red runs its tests", "red-worker", "Bash", "git ideate test run --task S1-01/T1 --label red", nil, facts(func(f *gates.GuardFacts) { f.Cwd = top }), gates.PASS, ""},
		{"red cd out and rm", "red-worker", "Bash", "cd .. && rm -f x_test.go", nil, facts(nil), gates.FAIL, "outside_worktree"},
		{"red cd in and rm a test", "red-worker", "Bash", "cd pkg && rm -f x_test.go", nil, facts(nil), gates.PASS, ""},
		{"red unparseable", "red-worker", "Bash", "eval $X", nil, facts(nil), gates.UNVERIFIABLE, "unknown_command"},
		{"red an MCP tool that writes", "red-worker", "mcp__ideate__task_complete", "", nil, facts(nil), gates.FAIL, "mcp_tool"},
		{"green another server's tool", "green-worker", "mcp__fs__write_file", "", nil, facts(nil), gates.FAIL, "mcp_tool"},
		{"red a read-only MCP tool", "red-worker", "mcp__ideate__record_read", "", nil, facts(func(f *gates.GuardFacts) { f.ReadOnlyTool = true }), gates.PASS, ""},
		{"red reads", "red-worker", "Read", "", nil, facts(nil), gates.PASS, ""},
		{"red a host tool that runs a command", "red-worker", "Monitor", "", nil, facts(nil), gates.UNVERIFIABLE, "unknown_tool"},
		{"green a host tool that stops a running call", "green-worker", "TaskStop", "", nil, facts(nil), gates.UNVERIFIABLE, "unknown_tool"},
		{"unbound sub-agent outside a sprint, a host tool", "", "Monitor", "", nil, facts(func(f *gates.GuardFacts) { f.Bound = false }), gates.PASS, ""},
		{"unbound sub-agent in a sprint, MCP write", "", "mcp__ideate__work_claim", "", nil, facts(func(f *gates.GuardFacts) { f.Bound, f.Sprint = false, true }), gates.FAIL, "mcp_tool"},
		{"unbound sub-agent outside a sprint, MCP write", "", "mcp__ideate__work_claim", "", nil, facts(func(f *gates.GuardFacts) { f.Bound = false }), gates.PASS, ""},
		{"main session in a sprint, MCP write", "", "mcp__ideate__work_claim", "", nil, facts(func(f *gates.GuardFacts) { f.Subagent, f.Bound, f.Sprint = false, false, true }), gates.PASS, ""},
		{"green edits a test", "green-worker", "Edit", "", []string{"x_test.go"}, facts(nil), gates.FAIL, "test_changed"},
		{"green edits a frozen file", "green-worker", "Edit", "", []string{"frozen.go"}, facts(nil), gates.FAIL, "test_changed"},
		{"green edits production", "green-worker", "Edit", "", []string{"x.go"}, facts(nil), gates.PASS, ""},
		{"green edits a test through a hard link", "green-worker", "Edit", "", []string{"alias.go"}, facts(nil), gates.FAIL, "hard_link"},
		{"green sed -i a test", "green-worker", "Bash", "sed -i s/a/b/ x_test.go", nil, facts(nil), gates.FAIL, "test_changed"},
		{"green git checkout a test", "green-worker", "Bash", "git checkout -- x_test.go", nil, facts(nil), gates.FAIL, "test_changed"},
		{"green dispatches", "green-worker", "Agent", "", nil, facts(nil), gates.FAIL, "dispatch"},
		{"green writes init.md", "green-worker", "Write", "", []string{".ideate/init.md"}, facts(nil), gates.FAIL, "init_read_only"},
		{"red chmods init.md", "red-worker", "Bash", "chmod u+w .ideate/init.md", nil, facts(nil), gates.FAIL, "init_read_only"},
		{"red removes .ideate", "red-worker", "Bash", "rm -rf .ideate", nil, facts(nil), gates.FAIL, "init_read_only"},
		{"red writes its report", "red-worker", "Write", "", []string{".ideate/output.md"}, facts(nil), gates.PASS, ""},
		{"green writes its report with tee", "green-worker", "Bash", "git diff --stat | tee .ideate/output.md", nil, facts(nil), gates.PASS, ""},
		{"sub-agent edits the plan", "red-worker", "Write", "", []string{"docs/agents/sprint1/plan_test.go"}, facts(nil), gates.FAIL, "planning_artifact"},
		{"other sub-agent edits the plan", "toy", "Write", "", []string{filepath.Join(top, "docs/agents/x.md")}, facts(func(f *gates.GuardFacts) { f.Bound = false; f.Worktree = "" }), gates.FAIL, "planning_artifact"},
		{"other sub-agent writes code", "toy", "Write", "", []string{filepath.Join(top, "x.go")}, facts(func(f *gates.GuardFacts) { f.Bound = false; f.Worktree = "" }), gates.PASS, ""},
		{"main session, sprint, source", "", "Write", "", []string{filepath.Join(top, "x.go")}, &gates.GuardFacts{Cwd: top, Top: top, Sprint: true}, gates.FAIL, "production_source"},
		{"main session, sprint, source through Monitor", "", "Monitor", "echo x > x.go", nil, &gates.GuardFacts{Cwd: top, Top: top, Sprint: true}, gates.FAIL, "production_source"},
		{"unbound sub-agent in a sprint commits through Monitor", "", "Monitor", "git commit -q --allow-empty -m x", nil, facts(func(f *gates.GuardFacts) { f.Bound, f.Sprint, f.Worktree, f.Cwd = false, true, "", top }), gates.FAIL, "sprint_read_only"},
		{"main session, sprint, plan", "", "Write", "", []string{filepath.Join(top, "docs/agents/x.md")}, &gates.GuardFacts{Cwd: top, Top: top, Sprint: true}, gates.PASS, ""},
		{"main session, no sprint", "", "Write", "", []string{filepath.Join(top, "x.go")}, &gates.GuardFacts{Cwd: top, Top: top}, gates.PASS, ""},
		{"main session, unparseable", "", "Bash", "eval x", nil, &gates.GuardFacts{Cwd: top, Top: top, Sprint: true}, gates.PASS, ""},
		{"no facts", "red-worker", "Write", "", []string{"a_test.go"}, nil, gates.UNVERIFIABLE, "no_facts"},
	} {
		v := run(c.role, c.tool, c.cmd, c.paths, c.f)
		if v.Result != c.want || c.class != "" && (len(v.Reasons) == 0 || v.Reasons[0].Class != c.class) {
			t.Errorf("%s: %s", c.name, v)
		}
	}
	// Only BeforeTool is judged.
	if v, _ := gates.Guard.Run(context.Background(), gates.Input{Point: gates.AgentStop}); v.Result != gates.PASS {
		t.Errorf("agent stop: %s", v)
	}
}

// A red-worker's Edit of a file that is not a test asks whether the file
// is a shim, by reading it: a FIFO the worker made in its worktree is no
// shim, and the guard (run in the PreToolUse hook) answers at once.
func TestGuard_RedEditOfAFIFODoesNotHang(t *testing.T) {
	wt := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(wt, "prod.go"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	f := &gates.GuardFacts{Subagent: true, Bound: true, Cwd: wt, Top: wt, Worktree: wt,
		TestGlobs: []string{"**/*_test.go"}, ShimMarker: "agentic:shim",
		Agent: &gates.AgentFacts{Task: "S1-01/T1", Status: "open", Open: true, TaskRole: "red-worker"}}
	done := make(chan gates.Verdict, 1)
	go func() {
		v, _ := gates.Guard.Run(context.Background(), gates.Input{Point: gates.BeforeTool, Role: "red-worker", Tool: "Edit", Paths: []string{"prod.go"}, Guard: f})
		done <- v
	}()
	select {
	case v := <-done:
		if v.Result != gates.FAIL || !strings.Contains(v.String(), "not_a_test") {
			t.Fatalf("verdict %s", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the guard still waits on a FIFO after 10 s")
	}
}
