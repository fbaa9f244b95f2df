package plugintest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/plan"
)

// What the scripted workers of TestHost_RedGreenTask write: the tests
// plan.md declares for S1-01/T1, a shim that makes them fail by
// assertion, and the implementation that makes them pass.
const (
	taskReverseTest = "package strutil\n\nimport (\n\t\"testing\"\n\t\"unicode/utf8\"\n)\n\n" +
		"func TestReverse_ASCII(t *testing.T) {\n\tfor _, c := range []struct{ in, want string }{{\"abc\", \"cba\"}, {\"ab\", \"ba\"}, {\"a\", \"a\"}} {\n" +
		"\t\tif got := Reverse(c.in); got != c.want {\n\t\t\tt.Errorf(\"Reverse(%q) = %q, want %q\", c.in, got, c.want)\n\t\t}\n\t}\n}\n\n" +
		"func TestReverse_MultiByteRunes(t *testing.T) {\n\tfor _, c := range []struct{ in, want string }{{\"h\u00e9llo\", \"oll\u00e9h\"}, {\"a\u00f1b\", \"b\u00f1a\"}} {\n" +
		"\t\tif got := Reverse(c.in); got != c.want || !utf8.ValidString(got) {\n\t\t\tt.Errorf(\"Reverse(%q) = %q, want %q\", c.in, got, c.want)\n\t\t}\n\t}\n}\n\n" +
		"func TestReverse_Empty(t *testing.T) {\n\tif got := Reverse(\"\"); got != \"\" {\n\t\tt.Errorf(\"Reverse(\\\"\\\") = %q, want \\\"\\\"\", got)\n\t}\n}\n"
	taskImportsTest = "package strutil\n\nimport (\n\t\"go/parser\"\n\t\"go/token\"\n\t\"os\"\n\t\"strings\"\n\t\"testing\"\n)\n\n" +
		"func TestPackage_ImportsStdlibOnly(t *testing.T) {\n\tfiles, err := os.ReadDir(\".\")\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tparsed := 0\n" +
		"\tfor _, f := range files {\n\t\tif !strings.HasSuffix(f.Name(), \".go\") || strings.HasSuffix(f.Name(), \"_test.go\") {\n\t\t\tcontinue\n\t\t}\n" +
		"\t\tpf, err := parser.ParseFile(token.NewFileSet(), f.Name(), nil, parser.ImportsOnly)\n\t\tif err != nil {\n\t\t\tt.Fatal(err)\n\t\t}\n\t\tparsed++\n" +
		"\t\tfor _, im := range pf.Imports {\n\t\t\tif p := strings.Trim(im.Path.Value, \"\\\"\"); strings.Contains(strings.Split(p, \"/\")[0], \".\") {\n" +
		"\t\t\t\tt.Errorf(\"%s imports %s\", f.Name(), p)\n\t\t\t}\n\t\t}\n\t}\n\tif parsed == 0 {\n\t\tt.Fatal(\"no file parsed\")\n\t}\n}\n"
	taskShim = "package strutil\n\n// Reverse is a RED shim. agentic:shim\nfunc Reverse(s string) string { return \"shim\" }\n"
	taskImpl = "// Package strutil provides rune-safe string helpers.\npackage strutil\n\n" +
		"// Reverse returns the runes of s in reverse order.\nfunc Reverse(s string) string {\n\tr := []rune(s)\n" +
		"\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n"
)

// The real host runs one whole task of the example sprint as the
// playbook does it, in two sessions. The supervisor checks and imports
// the plan and starts S1-01/T1 for RED; its own writes to production
// source (Write, and a Bash redirection) are refused. A red-worker writes
// the declared tests and a shim with the file tool and commits them; its
// stop is judged. The supervisor starts the task again for GREEN; a
// green-worker tries to change the frozen test (Edit, then Bash), writes
// the implementation and commits; its stop is judged. Checked on disk and
// in refs: the RED and GREEN PASS on the execution log, the test's blob
// on the task branch the RED commit's, the implementation at the branch's
// tip, plan-ready.md written open at RED and ticked at GREEN, each
// worker's commit on the record, no write of the main session in the main
// checkout, and git fsck --strict clean.
func TestHost_RedGreenTask(t *testing.T) {
	h := newHost(t)
	repo := h.planRepo(t)
	wt := filepath.Join(repo, ".ideate", "worktrees", "S1-01+T1")
	const branch = "ideate/task/S1-01+T1"
	item := plan.ItemID(1, "S1-01/T1")
	mainWrite, mainShell := filepath.Join(repo, "strutil", "reverse.go"), filepath.Join(repo, "strutil", "main_bash.go")
	ready := filepath.Join(repo, "docs", "agents", "sprint1", "s1-01-rune-helpers", "plan-ready.md")
	tests := []string{"TestReverse_ASCII", "TestReverse_MultiByteRunes", "TestReverse_Empty"}
	bash := func(cmd string) map[string]any {
		return toolUse("Bash", map[string]any{"command": cmd, "description": "run"})
	}
	write := func(p, content string) map[string]any {
		return toolUse("Write", map[string]any{"file_path": p, "content": content})
	}
	dispatch := func(role, what string) map[string]any {
		return toolUse("Agent", map[string]any{"description": role + " S1-01/T1", "prompt": "ideate-task: S1-01/T1\n" + what,
			"subagent_type": "git-ideate:" + role, "run_in_background": false})
	}

	red := &scriptedAPI{
		main: []map[string]any{
			bash("git ideate plan check && git ideate plan import --human alice && git ideate task start S1-01/T1 --item " + item + " --human alice --role red-worker"),
			write(mainWrite, taskImpl),
			bash("echo 'package strutil' > strutil/main_bash.go"),
			dispatch("red-worker", "Write the failing tests of the task in its worktree, commit them, and stop."),
		},
		sub: []map[string]any{
			write(filepath.Join(wt, "strutil", "reverse_test.go"), taskReverseTest),
			write(filepath.Join(wt, "strutil", "imports_test.go"), taskImportsTest),
			write(filepath.Join(wt, "strutil", "reverse.go"), taskShim),
			bash("git add -A && git commit -q -m 'red: Reverse tests and shim'"),
		},
	}
	out := h.run(t, repo, red, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2")
	redPass := newestVerdict(t, h, repo, "red")
	if redPass.Result != "PASS" || redPass.Commit == "" {
		t.Fatalf("the RED verdict: %+v\nexec log:\n%s\nclaude:\n%s", redPass, h.cli(t, repo, "exec", "log"), out)
	}
	if b, _ := os.ReadFile(ready); !boxes(string(b), tests, "- [ ] ") {
		t.Errorf("plan-ready.md after RED, want T1's boxes open:\n%s", b)
	}

	green := &scriptedAPI{
		main: []map[string]any{
			bash("git ideate task start S1-01/T1 --item " + item + " --human alice --role green-worker"),
			dispatch("green-worker", "Make the failing tests of the task pass in its worktree without touching them; commit and stop."),
		},
		sub: []map[string]any{
			toolUse("Read", map[string]any{"file_path": filepath.Join(wt, "strutil", "reverse_test.go")}),
			toolUse("Edit", map[string]any{"file_path": filepath.Join(wt, "strutil", "reverse_test.go"), "old_string": "func TestReverse_Empty", "new_string": "func testReverse_Empty"}),
			bash("echo '// easier' >> strutil/reverse_test.go"),
			write(filepath.Join(wt, "strutil", "reverse.go"), taskImpl),
			bash("git add -A && git commit -q -m 'green: Reverse'"),
		},
	}
	out = h.run(t, repo, green, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=2")
	greenV := newestVerdict(t, h, repo, "green")
	tip := strings.TrimSpace(h.sh(t, repo, "git", "rev-parse", branch))
	if greenV.Result != "PASS" || greenV.Commit != tip {
		t.Fatalf("the GREEN verdict: %+v (the branch is at %s)\nexec log:\n%s\nclaude:\n%s", greenV, tip, h.cli(t, repo, "exec", "log"), out)
	}
	blob := func(rev string) string {
		return strings.TrimSpace(h.sh(t, repo, "git", "rev-parse", rev+":strutil/reverse_test.go"))
	}
	if was, now := blob(redPass.Commit), blob(branch); was != now {
		t.Errorf("the test changed after RED: blob %s at the RED commit, %s on the branch", was, now)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "strutil", "reverse_test.go")); string(b) != taskReverseTest {
		t.Errorf("the worktree's test is not RED's:\n%s", b)
	}
	if got := h.sh(t, repo, "git", "show", branch+":strutil/reverse.go"); got != taskImpl {
		t.Errorf("the implementation at the branch's tip:\n%s", got)
	}
	if st := h.sh(t, wt, "git", "status", "--porcelain"); st != "" {
		t.Errorf("the worktree holds uncommitted changes:\n%s", st)
	}
	if b, _ := os.ReadFile(ready); !boxes(string(b), tests, "- [x] ") {
		t.Errorf("plan-ready.md after GREEN, want T1's boxes ticked:\n%s", b)
	}
	for _, f := range []string{mainWrite, mainShell} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the main session wrote %s", f)
		}
	}
	// Every refusal is on the log: the main session's two writes, the
	// green-worker's Edit of the test and (put back by its confinement, or
	// denied where there is none) its shell write to it; nothing of the
	// red-worker's, whose every write was its role's.
	var mainRefused, testRefused int
	for _, e := range verdicts(t, h, repo) {
		if (e.Phase != "guard" && e.Phase != "confine") || e.Result == "PASS" {
			continue
		}
		detail := e.Detail
		for _, r := range e.Reasons {
			detail += " " + r.Class + " " + r.Detail
		}
		switch {
		case strings.Contains(detail, "production_source"):
			mainRefused++
		case strings.Contains(detail, "green-worker") && strings.Contains(strings.Join(e.Paths, " ")+detail, "strutil/reverse_test.go"):
			testRefused++
		default:
			t.Errorf("an unexpected refusal on the execution log: %+v", e)
		}
	}
	if mainRefused != 2 || testRefused != 2 {
		t.Errorf("refusals on the execution log: %d of the main session's writes (want 2), %d of the green-worker's writes to the test (want 2)\n%s",
			mainRefused, testRefused, h.cli(t, repo, "exec", "log"))
	}
	// Each worker's commit is on the record, noted on the commit beside
	// its verdict.
	for _, c := range []string{redPass.Commit, tip} {
		if note := h.sh(t, repo, "git", "notes", "--ref=ideate", "show", c); !strings.Contains(note, " commit-boundary") || !strings.Contains(note, " PASS S1-01/T1") {
			t.Errorf("the note on %s:\n%s", c, note)
		}
	}
	if out, err := exec.Command("git", "-C", repo, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v %s", err, out)
	}
}

// execEntry is the part of an execution log entry the host tests read.
type execEntry struct {
	Phase, Event, Result, Commit, Task, Detail string
	Paths                                      []string
	Reasons                                    []struct{ Class, Detail string }
}

// verdicts are the execution log's entries, newest first.
func verdicts(t *testing.T, h *host, repo string) []execEntry {
	t.Helper()
	var log struct{ Entries []execEntry }
	out := h.cli(t, repo, "exec", "log", "--json")
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("exec log --json: %v\n%s", err, out)
	}
	return log.Entries
}

// newestVerdict is S1-01/T1's newest verdict of the phase.
func newestVerdict(t *testing.T, h *host, repo, phase string) execEntry {
	t.Helper()
	for _, e := range verdicts(t, h, repo) {
		if e.Phase == phase && e.Event == "verdict" && e.Task == "S1-01/T1" {
			return e
		}
	}
	return execEntry{}
}

// boxes reports whether plan-ready.md's text holds a box starting with
// mark for each of tests, and no box of T1's tests otherwise marked.
func boxes(text string, tests []string, mark string) bool {
	for _, name := range tests {
		want := mark + "`strutil/reverse_test.go::" + name + "`"
		if !strings.Contains(text, want) {
			return false
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "`strutil/reverse_test.go::") && !strings.HasPrefix(l, mark) {
			return false
		}
	}
	return true
}

// The real host, a red-worker in the background while the main session
// works: the main session's Bash call writes a file of the main checkout
// (logged as its own: the call's PreToolUse notes it, its PostToolUse
// lists what changed since) and leaves a process behind that writes
// another a second later, which no call accounts for. The worker's stop
// is refused as escaped_write naming that one file only.
func TestHost_WorkerIsBlamedOnlyForWhatNobodyLogged(t *testing.T) {
	h := newHost(t)
	repo := h.sprintRepo(t)
	wt := filepath.Join(repo, ".ideate", "worktrees", "S1-01+T1")
	logged, late := filepath.Join(repo, "NOTES.txt"), filepath.Join(repo, "LATE.txt")
	api := &scriptedAPI{
		main: []map[string]any{
			toolUse("Agent", map[string]any{"description": "red", "prompt": "ideate-task: S1-01/T1\nWrite the failing test.",
				"subagent_type": "git-ideate:red-worker", "run_in_background": true}),
			toolUse("Bash", map[string]any{"command": "echo notes >> NOTES.txt; (sleep 1; echo late > LATE.txt) >/dev/null 2>&1 &", "description": "note"}),
		},
		sub: []map[string]any{
			// Long enough for the main session's call and its late write
			// to land while the worker is at work.
			toolUse("Bash", map[string]any{"command": "sleep 6", "description": "wait"}),
			toolUse("Write", map[string]any{"file_path": filepath.Join(wt, "strutil", "reverse_test.go"),
				"content": "package strutil\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) {\n\tif got := Reverse(\"ab\"); got != \"ba\" {\n\t\tt.Fatalf(\"Reverse(ab) = %q, want ba\", got)\n\t}\n}\n"}),
			toolUse("Write", map[string]any{"file_path": filepath.Join(wt, "strutil", "reverse.go"),
				"content": "package strutil\n\n// Reverse is a shim until GREEN. agentic:shim\nfunc Reverse(s string) string { return \"\" }\n"}),
			toolUse("Bash", map[string]any{"command": "git add -A && git commit -q -m 'red: TestReverse'", "description": "commit"}),
		},
	}
	out := h.run(t, repo, api, true, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1")
	for _, f := range []string{logged, late} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the main session's write did not land: %v\nclaude:\n%s", err, out)
		}
	}
	escape := newestVerdict(t, h, repo, "escape")
	if escape.Result != "FAIL" || strings.Join(escape.Paths, " ") != late {
		t.Fatalf("the worker's escape check: %+v, want a FAIL naming %s alone\nexec log:\n%s\nclaude:\n%s", escape, late, h.cli(t, repo, "exec", "log"), out)
	}
}
