package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/corecmd"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// A GREEN whose declared test cannot tell Reverse from a body returning
// "" goes back to RED, end to end through the binary: the GREEN gate
// FAILs unpinned_symbol naming strutil.Reverse (with the check's cost
// note); the feedback's next phase is red; the next attempt opens as a
// red-worker's with the worktree back at the verified RED commit and
// GREEN's commit kept on a branch; the strengthened test passes RED; the
// implementation taken back from the kept branch passes GREEN.
func TestUnpinned_GreenGoesBackToRed(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := goPlanRepo(t, goRunner)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	const task, test = "S1-01/T1", "strutil/reverse_test.go::TestReverse_Empty"
	mustOK(t, bin(t, dir, "", "task", "start", task, "--role", "red-worker", "--test", test, "--scope", "strutil/**"))
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(wt, "strutil", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commitAll := func(msg string) string {
		t.Helper()
		gt.Git(t, wt, "add", "-A")
		gt.Git(t, wt, "commit", "-q", "-m", msg)
		return strings.TrimSpace(gt.Git(t, wt, "rev-parse", "HEAD"))
	}
	os.MkdirAll(filepath.Join(wt, "strutil"), 0o755)
	write("reverse.go", "// agentic:shim\npackage strutil\n\nfunc Reverse(s string) string { return \"x\" }\n")
	weak := "package strutil\n\nimport \"testing\"\n\nfunc TestReverse_Empty(t *testing.T) {\n\tif got := Reverse(\"\"); got != \"\" {\n\t\tt.Fatalf(\"Reverse(\\\"\\\") = %q\", got)\n\t}\n}\n"
	write("reverse_test.go", weak)
	red := commitAll("red")
	mustOK(t, bin(t, dir, "", "gate", "red", "--task", task))

	mustOK(t, bin(t, dir, "", "task", "start", task, "--role", "green-worker", "--test", test))
	mustOK(t, bin(t, dir, "", "task", "attempt", task))
	impl := "// Package strutil provides rune-safe string helpers.\npackage strutil\n\n// Reverse is s with its runes in reverse order.\nfunc Reverse(s string) string {\n\tr := []rune(s)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n"
	write("reverse.go", impl)
	green := commitAll("green")
	r := bin(t, dir, "", "gate", "green", "--task", task)
	if r.code != corecmd.ExitGateFail || !strings.Contains(r.out, "unpinned_symbol") || !strings.Contains(r.out, "strutil.Reverse") || !strings.Contains(r.out, "pin_cost") {
		t.Fatalf("gate green: %d %s %s", r.code, r.out, r.err)
	}

	var fb struct {
		Next string   `json:"next"`
		Fix  []string `json:"fix"`
	}
	if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "task", "feedback", task, "--json")).out), &fb); err != nil ||
		fb.Next != "red" || len(fb.Fix) == 0 || !strings.HasPrefix(fb.Fix[0], "BACK TO RED") {
		t.Fatalf("feedback: %+v %v", fb, err)
	}

	var a struct {
		Attempt int    `json:"attempt"`
		Role    string `json:"role"`
		Init    string `json:"init"`
	}
	out := mustOK(t, bin(t, dir, "", "task", "attempt", task, "--json")).out
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("task attempt: %v %s", err, out)
	}
	if a.Attempt != 2 || a.Role != "red-worker" || !strings.Contains(a.Init, "attempt 2 of 3 (red-worker") || !strings.Contains(a.Init, "BACK TO RED") {
		t.Fatalf("task attempt: %s", out)
	}
	if head := strings.TrimSpace(gt.Git(t, wt, "rev-parse", "HEAD")); head != red {
		t.Fatalf("the worktree is at %s, not the verified RED commit %s", head, red)
	}
	kept := "ideate/task/S1-01+T1-green-1"
	if h := strings.TrimSpace(gt.Git(t, dir, "rev-parse", "refs/heads/"+kept)); h != green {
		t.Fatalf("branch %s holds %s, not GREEN's commit %s", kept, h, green)
	}

	// RED strengthens the declared test: a body returning "" fails it.
	write("reverse_test.go", strings.Replace(weak, "}\n}\n", "}\n\tif got := Reverse(\"ab\"); got != \"ba\" {\n\t\tt.Fatalf(\"Reverse(\\\"ab\\\") = %q\", got)\n\t}\n}\n", 1))
	commitAll("red: Reverse must reverse")
	mustOK(t, bin(t, dir, "", "gate", "red", "--task", task))

	mustOK(t, bin(t, dir, "", "task", "start", task, "--role", "green-worker", "--test", test))
	gt.Git(t, wt, "checkout", kept, "--", "strutil/reverse.go")
	commitAll("green again")
	if r := bin(t, dir, "", "gate", "green", "--task", task); r.code != 0 || strings.Contains(r.out, "unpinned") {
		t.Fatalf("gate green after RED: %d %s %s", r.code, r.out, r.err)
	}
}
