package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/shell"
)

func TestGitCommitDir(t *testing.T) {
	type want struct {
		dir string
		ok  bool
	}
	for cmd, w := range map[string]want{
		"git commit -m x":                                                    {"", true},
		"git commit":                                                         {"", true},
		"  git   commit --amend --no-edit":                                   {"", true},
		"/usr/bin/git commit -am 'a b'":                                      {"", true},
		"git add -A && git commit -m \"fix && go\"":                          {"", true},
		"make test; git commit -F msg.txt":                                   {"", true},
		"go test ./... || true\ngit commit -m y":                             {"", true},
		"git -C sub commit -m x":                                             {"sub", true},
		"git -C /abs/repo commit":                                            {"/abs/repo", true},
		"git -C a -C b commit":                                               {"a/b", true},
		"cd sub && git commit -m x":                                          {"sub", true},
		"cd sub; cd deeper && git -C x commit":                               {"sub/deeper/x", true},
		"git -c user.name=x -c core.editor=true commit -m y":                 {"", true},
		"git --no-pager --git-dir=.git commit -m y":                          {"", true},
		"GIT_AUTHOR_NAME=x git commit -m y":                                  {"", true},
		"env FOO=1 git commit -m y":                                          {"", true},
		"command git commit -m y":                                            {"", true},
		"git commit -m 'it'\"'\"'s done'":                                    {"", true},
		"git status | cat; git commit -m x 2>&1 | tail -1":                   {"", true},
		"git commit -F - <<'EOF'\nsubject\n\nbody with an apostrophe's\nEOF": {"", true},
		"git commit-tree HEAD^{tree} -m x":                                   {"", false},
		"echo \"git commit\"":                                                {"", false},
		"echo 'git commit -m x'":                                             {"", false},
		"git log --grep commit":                                              {"", false},
		"git show HEAD  # then git commit":                                   {"", false},
		"git":                                                                {"", false},
		"":                                                                   {"", false},
		"gitcommit":                                                          {"", false},
		"git -C":                                                             {"", false},
		"git -c commit":                                                      {"", false},
		"printf '%s' \"unterminated":                                         {"", false},
		"mygit commit":                                                       {"", false},
		"git notes add -m 'git commit'":                                      {"", false},
	} {
		dir, ok := hooks.GitCommitDir(cmd)
		if ok != w.ok || dir != w.dir {
			t.Errorf("GitCommitDir(%q) = %q, %v; want %q, %v", cmd, dir, ok, w.dir, w.ok)
		}
	}
}

// commitPayload is a PostToolUse of the Bash tool that ran command in cwd;
// sha, when set, is the host's abbreviated name of the commit.
func commitPayload(cwd, command, sha string) []byte {
	resp := map[string]any{"stdout": "", "stderr": "", "interrupted": false, "isImage": false}
	if sha != "" {
		resp["gitOperation"] = map[string]any{"commit": map[string]any{"sha": sha, "kind": "committed", "branch": "main"}}
	}
	b, _ := json.Marshal(map[string]any{"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": cwd, "tool_name": "Bash",
		"tool_input": map[string]any{"command": command}, "tool_response": resp, "tool_use_id": "toolu_1"})
	return b
}

func TestPostToolUse_CommitBoundary(t *testing.T) {
	dir := gt.NewRepo(t)
	head := commitFiles(t, dir, "feat: parse empty input\n\nLonger body.", map[string]string{
		"parser/parse.go": "package parser\n", "parser/parse_test.go": "package parser\n", "README.md": "x\n",
		"docs/a/b/c.md": "c\n", "docs/a/d.md": "d\n", "cmd/x/main.go": "package main\n", "cmd/y/main.go": "package main\n",
		"e/f.txt": "f\n", "g/h.txt": "h\n",
	})
	res := runHook(t, dir, commitPayload(dir, "git add -A && git commit -m 'feat: parse empty input'", head[:7]), "")
	if res.out != "" || len(res.notes) != 0 {
		t.Fatalf("out %q notes %q", res.out, res.notes)
	}
	recs := records(t, dir)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Kind != "commit-boundary" || r.Claim != "Git commit "+head[:12]+" landed in session s1: feat: parse empty input" ||
		r.VerificationAnchor != head || r.Source.CapturePoint != "commit-boundary" || r.Source.SessionID != "s1" {
		t.Fatalf("record %+v", r)
	}
	if r.Scope != "., cmd/x, cmd/y, docs/a/b, docs/a, e" {
		t.Errorf("scope = %q", r.Scope)
	}
	wantContent := "Command: git add -A && git commit -m 'feat: parse empty input'\n" +
		"Changed paths (9): README.md, cmd/x/main.go, cmd/y/main.go, docs/a/b/c.md, docs/a/d.md, e/f.txt, g/h.txt, parser/parse.go, and 1 more."
	if r.Content != wantContent {
		t.Errorf("content:\n%s\nwant\n%s", r.Content, wantContent)
	}
	line := "ideate-record: " + r.ID + " commit-boundary"
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", head); got != line {
		t.Fatalf("git notes show = %q", got)
	}
	if log := gt.Git(t, dir, "log", "--notes=ideate", "-1", head); !strings.Contains(log, "Notes (ideate):\n    "+line) {
		t.Fatalf("git log --notes=ideate:\n%s", log)
	}

	// The same payload again (a replay, or a chain whose commit failed)
	// records nothing more.
	res = runHook(t, dir, commitPayload(dir, "git commit -m again", head[:7]), "")
	if len(records(t, dir)) != 1 || len(res.notes) != 1 || !strings.Contains(res.notes[0], "already has a commit-boundary") {
		t.Fatalf("replay: %d records, notes %q", len(records(t, dir)), res.notes)
	}

	// A commit someone annotated with git notes: the record's line is
	// appended to that note. Without gitOperation the hook takes HEAD.
	second := commitFiles(t, dir, "fix: second", map[string]string{"parser/parse.go": "package parser // v2\n"})
	gt.Git(t, dir, "notes", "--ref=ideate", "add", "-m", "reviewed by Dan before any commit-boundary", second)
	runHook(t, dir, commitPayload(dir, "git commit -am 'fix: second'", ""), "")
	r2 := records(t, dir)[0]
	if r2.VerificationAnchor != second || r2.Scope != "parser" || !strings.HasSuffix(r2.Content, "Changed paths (1): parser/parse.go.") {
		t.Fatalf("second record %+v", r2)
	}
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", second); got != "reviewed by Dan before any commit-boundary\nideate-record: "+r2.ID+" commit-boundary" {
		t.Fatalf("note after append = %q", got)
	}
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", head); got != line {
		t.Fatalf("the first note changed: %q", got)
	}
	// An empty commit.
	third := commitFiles(t, dir, "chore: empty", nil)
	runHook(t, dir, commitPayload(dir, "git commit --allow-empty -m 'chore: empty'", third[:10]), "")
	if r3 := records(t, dir)[0]; r3.VerificationAnchor != third || r3.Scope != "" || !strings.HasSuffix(r3.Content, "Changed paths: none.") {
		t.Fatalf("empty commit record %+v", r3)
	}
	gt.Fsck(t, dir)
}

func TestPostToolUse_CommitElsewhere(t *testing.T) {
	top := t.TempDir() // not a repository
	gt.Isolate(t)
	sub := filepath.Join(top, "svc")
	os.MkdirAll(sub, 0o755)
	gt.Git(t, sub, "init", "-q")
	head := commitFiles(t, sub, "svc: first", map[string]string{"main.go": "package main\n"})
	for _, cmd := range []string{"git -C svc commit -m 'svc: first'", "cd svc && git commit -m 'svc: first'"} {
		gt.Git(t, sub, "update-ref", "-d", record.NotesRef)
		res := runHook(t, top, commitPayload(top, cmd, head[:8]), "")
		if len(res.notes) != 0 {
			t.Fatalf("%s: %q", cmd, res.notes)
		}
		if got := records(t, sub)[0]; got.VerificationAnchor != head {
			t.Fatalf("%s: record %+v", cmd, got)
		}
		if got := gt.Git(t, sub, "notes", "--ref=ideate", "show", head); !strings.HasPrefix(got, "ideate-record: ") {
			t.Fatalf("%s: note %q", cmd, got)
		}
	}
}

func TestPostToolUse_UnknownCommit(t *testing.T) {
	dir, before := seeded(t)
	for _, sha := range []string{"e0fab59", "zzzzzzz"} {
		res := runHook(t, dir, commitPayload(dir, "git commit -m x", sha), "")
		if res.out != "" || len(res.notes) != 1 || !strings.Contains(res.notes[0], "nothing recorded") {
			t.Fatalf("sha %s: out %q notes %q", sha, res.out, res.notes)
		}
	}
	if tip(t, dir, record.RefName) != before || tip(t, dir, record.NotesRef) != "" {
		t.Fatal("an unknown commit was recorded")
	}
	// An unborn branch: no HEAD to fall back on.
	empty := t.TempDir()
	gt.Git(t, empty, "init", "-q")
	if res := runHook(t, empty, commitPayload(empty, "git commit -m x", ""), ""); len(res.notes) != 1 || tip(t, empty, record.RefName) != "" {
		t.Fatalf("unborn: %q", res.notes)
	}
}

func TestPostToolUse_ChangedPathsMatchGit(t *testing.T) {
	dir := gt.NewRepo(t)
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("d%d/sub%d/f%d.txt", i%4, i%3, i)] = fmt.Sprint(i)
	}
	files["top.txt"] = "t"
	files["swap"] = "a file that becomes a directory"
	files["gone/x.txt"] = "a directory that becomes a file"
	commitFiles(t, dir, "base", files)
	// Modify, delete, rename, and swap files and directories.
	os.WriteFile(filepath.Join(dir, "d1/sub1/f1.txt"), []byte("changed"), 0o644)
	os.Remove(filepath.Join(dir, "d2/sub2/f2.txt"))
	os.Rename(filepath.Join(dir, "d3/sub0/f3.txt"), filepath.Join(dir, "d3/sub0/f3-renamed.txt"))
	os.Remove(filepath.Join(dir, "swap"))
	os.MkdirAll(filepath.Join(dir, "swap"), 0o755)
	os.WriteFile(filepath.Join(dir, "swap", "inner.txt"), []byte("i"), 0o644)
	os.RemoveAll(filepath.Join(dir, "gone"))
	os.WriteFile(filepath.Join(dir, "gone"), []byte("now a file"), 0o644)
	os.Chmod(filepath.Join(dir, "top.txt"), 0o755)
	head := commitFiles(t, dir, "shuffle", nil)

	runHook(t, dir, commitPayload(dir, "git commit -am shuffle", head[:7]), "")
	want := strings.Split(gt.Git(t, dir, "diff-tree", "-r", "--no-renames", "--name-only", "--no-commit-id", head), "\n")
	r := records(t, dir)[0]
	wantLine := fmt.Sprintf("Changed paths (%d): %s", len(want), strings.Join(want[:8], ", "))
	if !strings.Contains(r.Content, wantLine) || !strings.HasSuffix(r.Content, fmt.Sprintf(", and %d more.", len(want)-8)) {
		t.Fatalf("content:\n%s\nwant the paths git names: %v", r.Content, want)
	}

	// A root commit: every file is new.
	root := t.TempDir()
	gt.Git(t, root, "init", "-q")
	rh := commitFiles(t, root, "root", map[string]string{"a.txt": "a", "b/c.txt": "c"})
	runHook(t, root, commitPayload(root, "git commit -m root", rh[:7]), "")
	if r := records(t, root)[0]; !strings.HasSuffix(r.Content, "Changed paths (2): a.txt, b/c.txt.") || r.Scope != "., b" {
		t.Fatalf("root commit record: %+v", r)
	}
}

// A confined worker's commit: the host reports its Bash call with the
// command it ran, the confining entry the PreToolUse hook wrote, and no
// gitOperation. The commit in the task's worktree is recorded and noted
// all the same; a line that only looks like this agent's entry is not
// taken for one.
func TestPostToolUse_ConfinedWorkerCommit(t *testing.T) {
	dir := execRepo(t, map[string]string{"S1-01/T1": "red-worker"})
	wt := worktreeOf(dir, "S1-01/T1")
	head := commitFiles(t, wt, "red: TestX", map[string]string{"x/x_test.go": "package x\n"})
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	state := g.Repo().StateDir()
	g.Close()
	binding := filepath.Join(state, "dispatch", "agents", "ared1.json")
	os.MkdirAll(filepath.Dir(binding), 0o755)
	b, _ := json.Marshal(map[string]any{"tool_use_id": "toolu_d", "task": "S1-01/T1", "attempt": 1, "role": "red-worker", "worktree": wt, "agent": "ared1"})
	if err := os.WriteFile(binding, b, 0o600); err != nil {
		t.Fatal(err)
	}
	entry := func(task, role, agent, command string) string {
		return "/opt/bin/git-ideate confine --task " + shell.Quote(task) + " --role " + shell.Quote(role) + " --agent " + shell.Quote(agent) + " -- " + shell.Quote(command)
	}
	post := func(agent, command string) []string {
		in, _ := json.Marshal(map[string]any{"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": dir, "agent_id": agent, "agent_type": "git-ideate:red-worker",
			"tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_response": map[string]any{"stdout": "", "stderr": ""}, "tool_use_id": "toolu_c"})
		var notes []string
		d := &hooks.Dispatcher{Dir: dir, Open: opener(t), Getenv: func(string) string { return "" }, Confine: entry,
			Warn: func(m string) { notes = append(notes, m) }}
		d.Run(context.Background(), bytes.NewReader(in), io.Discard, "")
		return notes
	}
	post("ared2", entry("S1-01/T1", "red-worker", "ared1", "git add -A && git commit -qm 'red: TestX'"))
	post("ared1", entry("S1-01/T1", "red-worker", "ared1", "git add -A && git commit -qm 'red: TestX'")+" ")
	if recs := records(t, dir); len(recs) != 0 {
		t.Fatalf("a line that is not the agent's own entry was taken for one: %+v", recs[0])
	}
	if notes := post("ared1", entry("S1-01/T1", "red-worker", "ared1", "git add -A && git commit -qm 'red: TestX'")); len(notes) != 0 {
		t.Fatalf("notes %q", notes)
	}
	recs := records(t, dir)
	if len(recs) != 1 || recs[0].Kind != "commit-boundary" || recs[0].VerificationAnchor != head {
		t.Fatalf("records %+v, want the worktree's commit %s", recs, head)
	}
	if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", head); !strings.HasPrefix(got, "ideate-record: "+recs[0].ID) {
		t.Fatalf("note %q", got)
	}
	gt.Fsck(t, dir)
}
