package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

const tapRunner = `
### python

- Extensions: ` + "`.py`" + `
- Test files: ` + "`**/test_*.py`" + `
- Run: ` + "`python3 -m pytest {node_ids}`" + `
- Format: ` + "`tap`" + `
`

// git ideate gate through the built binary: the verdict printed (one line
// or JSON with every field) and the exit status telling PASS (0), FAIL (3)
// and UNVERIFIABLE (4) apart.
func TestGate_CLI_ExitStatuses(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := goPlanRepo(t, strings.Replace(goRunner, "- Compile: `go vet {packages}`\n", "", 1)+tapRunner)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	test := "strutil/reverse_test.go::TestReverse_ASCII"
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--test", test, "--scope", "strutil/**"))
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T2", "--test", test, "--scope", "strutil/**"))
	mustOK(t, bin(t, dir, "", "task", "start", "S1-02/T1", "--test", "py/test_x.py::test_a", "--scope", "py/**"))
	wt := func(task string) string {
		return filepath.Join(dir, ".ideate", "worktrees", strings.ReplaceAll(task, "/", "+"))
	}
	testFile := "package strutil\n\nimport \"testing\"\n\nfunc TestReverse_ASCII(t *testing.T) {\n\tif Reverse(\"abc\") != \"cba\" {\n\t\tt.Fatal(\"Reverse(abc) != cba\")\n\t}\n}\n"
	for task, body := range map[string]string{
		"S1-01/T1": "package strutil\n\n// agentic:shim\nfunc Reverse(s string) string { return s }\n",
		"S1-01/T2": "package strutil\n\n// agentic:shim\nfunc Reverse(s string) string { return \"cba\" }\n",
	} {
		os.MkdirAll(filepath.Join(wt(task), "strutil"), 0o755)
		os.WriteFile(filepath.Join(wt(task), "strutil", "reverse.go"), []byte(body), 0o644)
		os.WriteFile(filepath.Join(wt(task), "strutil", "reverse_test.go"), []byte(testFile), 0o644)
		gt.Git(t, wt(task), "add", "-A")
		gt.Git(t, wt(task), "commit", "-q", "-m", "red")
	}
	os.MkdirAll(filepath.Join(wt("S1-02/T1"), "py"), 0o755)
	os.WriteFile(filepath.Join(wt("S1-02/T1"), "py", "test_x.py"), []byte("def test_a():\n    assert False\n"), 0o644)
	gt.Git(t, wt("S1-02/T1"), "add", "-A")
	gt.Git(t, wt("S1-02/T1"), "commit", "-q", "-m", "red")

	r := bin(t, dir, "", "gate", "red", "--task", "S1-01/T1")
	if r.code != 0 || !strings.HasPrefix(r.out, "red: PASS [task S1-01/T1 attempt 1 commit ") {
		t.Errorf("red PASS: %+v", r)
	}
	// The verdict is in the execution log and noted on the judged commit.
	if n := gt.Git(t, wt("S1-01/T1"), "log", "-1", "--notes=ideate", "--format=%N"); !strings.Contains(n, "ideate: red PASS S1-01/T1 attempt 1 (exec ") {
		t.Errorf("note on the judged commit: %q", n)
	}
	r = bin(t, dir, "", "gate", "red", "--task", "S1-01/T2", "--json")
	var v struct {
		MessageType string `json:"message_type"`
		Gate        string `json:"gate"`
		Result      string `json:"result"`
		Task        string `json:"task"`
		Attempt     int    `json:"attempt"`
		Commit      string `json:"commit"`
		Tree        string `json:"tree"`
		Base        string `json:"base"`
		Sprint      int    `json:"sprint"`
		Reasons     []struct {
			Class string   `json:"class"`
			Paths []string `json:"paths"`
		} `json:"reasons"`
		Tests []struct {
			ID      string `json:"id"`
			Outcome string `json:"outcome"`
		} `json:"tests"`
	}
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || r.code != 3 || !strings.Contains(r.err, "GATE_FAIL") {
		t.Fatalf("red FAIL: %v %+v", err, r)
	}
	if v.MessageType != "gate_verdict" || v.Gate != "red" || v.Result != "FAIL" || v.Task != "S1-01/T2" || v.Attempt != 1 ||
		v.Commit != gt.Git(t, wt("S1-01/T2"), "rev-parse", "HEAD") || v.Tree == "" || v.Base == "" || v.Sprint != 1 ||
		len(v.Reasons) != 1 || v.Reasons[0].Class != "unexpected_pass" || len(v.Tests) != 1 || v.Tests[0].Outcome != "PASS" {
		t.Errorf("red FAIL verdict: %+v", v)
	}
	r = bin(t, dir, "", "gate", "red", "--task", "S1-02/T1")
	if r.code != 4 || !strings.Contains(r.out, "UNVERIFIABLE: unknown_format") || !strings.Contains(r.err, "UNVERIFIABLE") {
		t.Errorf("unknown format: %+v", r)
	}
	if r := bin(t, dir, "", "gate", "blue", "--task", "S1-01/T1"); r.code != 1 {
		t.Errorf("unknown gate: %+v", r)
	}
}
