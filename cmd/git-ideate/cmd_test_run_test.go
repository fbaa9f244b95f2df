package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/plan/plantest"
)

const goRunner = `
## Test runners

### go

- Extensions: ` + "`.go`" + `
- Test files: ` + "`**/*_test.go`" + `
- Compile: ` + "`go vet {packages}`" + `
- Run: ` + "`go test -json -count=1 -run '{go_regex}' {packages}`" + `
- Format: ` + "`go-test-json`" + `
- Isolate on crash: yes
`

// test run --task runs the task's declared tests with the standards
// file's runner in the task's worktree, prints one outcome per test, and
// records the run keyed by (task, attempt, commit) when the worktree is
// committed.
func TestTestRun_CLI_RecordsARunOfTheTasksWorktree(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := redReverseRepo(t)
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--test", "strutil/reverse_test.go::TestReverse_ASCII",
		"--test", "strutil/reverse_test.go::TestReverse_Empty", "--scope", "strutil/**"))
	r := bin(t, dir, "", "test", "run", "--task", "S1-01/T1", "--label", "red")
	var out struct {
		Recorded bool   `json:"recorded"`
		Commit   string `json:"commit"`
		Report   struct {
			Tests []struct {
				ID      string `json:"id"`
				Outcome string `json:"outcome"`
			} `json:"tests"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("test run: %v\n%+v", err, r)
	}
	got := map[string]string{}
	for _, x := range out.Report.Tests {
		got[x.ID] = x.Outcome
	}
	if got["strutil/reverse_test.go::TestReverse_ASCII"] != "FAIL_ASSERT" || got["strutil/reverse_test.go::TestReverse_Empty"] != "NOT_RUN" {
		t.Errorf("outcomes %v\n%s", got, r.out)
	}
	if !out.Recorded || out.Commit != gt.Git(t, dir, "rev-parse", "HEAD") {
		t.Errorf("not recorded at HEAD: %+v", out)
	}
	if l := gt.Git(t, dir, "log", "--format=%s", "-1", "refs/ideate/tasks/S1-01+T1"); !strings.Contains(l, "red run of attempt 1") {
		t.Errorf("task ref: %s", l)
	}
	// Uncommitted work runs but is not recorded.
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	os.WriteFile(filepath.Join(wt, "strutil", "reverse.go"), []byte("package strutil\n\nfunc Reverse(s string) string { r := []rune(s); for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 { r[i], r[j] = r[j], r[i] }; return string(r) }\n"), 0o644)
	r = bin(t, dir, "", "test", "run", "--task", "S1-01/T1", "--label", "green")
	if !strings.Contains(r.out, `"PASS"`) || !strings.Contains(r.out, "not recorded") {
		t.Errorf("uncommitted run:\n%s\n%s", r.out, r.err)
	}
	// No runner for the tests' language: NO_RUNNER.
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T2", "--test", "py/test_x.py::test_a", "--scope", "py/**"))
	if r := bin(t, dir, "", "test", "run", "--task", "S1-01/T2"); r.code != 1 || !strings.Contains(r.err, "NO_RUNNER") {
		t.Errorf("no runner: %+v", r)
	}
}

// test_run is test run through MCP: the same outcomes, recorded on the
// task's ref when the worktree is committed, not recorded (and said so)
// when it is not; a task never started is an error, not an empty run.
func TestMCP_TestRun(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := redReverseRepo(t)
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--test", "strutil/reverse_test.go::TestReverse_ASCII", "--scope", "strutil/**"))
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	t.Cleanup(env.Close)
	srv := mcpserver.New("test", func() (*mcpserver.Backend, error) { return backendFor(env, "mcp-test") })
	type result struct {
		OK       bool   `json:"ok"`
		Recorded bool   `json:"recorded"`
		Commit   string `json:"commit"`
		Label    string `json:"label"`
		Note     string `json:"note"`
		Report   struct {
			Tests []struct {
				ID      string `json:"id"`
				Outcome string `json:"outcome"`
			} `json:"tests"`
		} `json:"report"`
	}
	call := func(args string) result {
		t.Helper()
		res := srv.Call(context.Background(), "test_run", json.RawMessage(args))
		var out result
		if res.IsError || json.Unmarshal([]byte(res.Content[0].Text), &out) != nil {
			t.Fatalf("%s: %+v", args, res)
		}
		return out
	}
	r := call(`{"task":"S1-01/T1","label":"red"}`)
	if len(r.Report.Tests) != 1 || r.Report.Tests[0].Outcome != "FAIL_ASSERT" {
		t.Errorf("outcomes: %+v", r.Report.Tests)
	}
	if !r.Recorded || r.Label != "red" || r.Commit != gt.Git(t, dir, "rev-parse", "HEAD") {
		t.Errorf("not recorded at HEAD: %+v", r)
	}
	if l := gt.Git(t, dir, "log", "--format=%s", "-1", "refs/ideate/tasks/S1-01+T1"); !strings.Contains(l, "red run of attempt 1") {
		t.Errorf("task ref: %s", l)
	}
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	os.WriteFile(filepath.Join(wt, "strutil", "reverse.go"), []byte("package strutil\n\nfunc Reverse(s string) string { r := []rune(s); for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 { r[i], r[j] = r[j], r[i] }; return string(r) }\n"), 0o644)
	before := gt.Git(t, dir, "rev-parse", "refs/ideate/tasks/S1-01+T1")
	r = call(`{"task":"S1-01/T1","label":"green"}`)
	if r.Recorded || !strings.Contains(r.Note, "uncommitted") || len(r.Report.Tests) != 1 || r.Report.Tests[0].Outcome != "PASS" {
		t.Errorf("uncommitted run: %+v", r)
	}
	if after := gt.Git(t, dir, "rev-parse", "refs/ideate/tasks/S1-01+T1"); after != before {
		t.Errorf("an uncommitted run moved the task's ref")
	}
	if res := srv.Call(context.Background(), "test_run", json.RawMessage(`{"task":"S1-09/T9"}`)); !res.IsError {
		t.Errorf("a task never started: %+v", res)
	}
}

// redReverseRepo is goPlanRepo with a committed RED for strutil.Reverse:
// a shim that returns its input and TestReverse_ASCII, which fails on it.
func redReverseRepo(t *testing.T) string {
	t.Helper()
	dir := goPlanRepo(t, goRunner)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse.go"), []byte("package strutil\n\n// Reverse is a RED shim.\nfunc Reverse(s string) string { return s }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse_test.go"), []byte(`package strutil

import "testing"

func TestReverse_ASCII(t *testing.T) {
	if got := Reverse("abc"); got != "cba" {
		t.Fatalf("Reverse(abc) = %q, want cba", got)
	}
}
`), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "red")
	return dir
}

// goPlanRepo is a repository holding the example plan set with runners
// appended to its standards, a Go module and an empty strutil/ (nothing
// committed yet).
func goPlanRepo(t *testing.T, runners string) string {
	t.Helper()
	dir := gt.NewRepo(t)
	if out, err := exec.Command("cp", "-r", filepath.Join(plantest.ExampleDir(), "docs"), dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	std := filepath.Join(dir, "docs", "agents", "sprint1", "standards.md")
	b, err := os.ReadFile(std)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(std, plantest.ReplaceRunners(b, runners), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "strutil"), 0o755)
	return dir
}
