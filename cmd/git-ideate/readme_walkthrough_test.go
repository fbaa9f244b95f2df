package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// walkthrough returns the README's execution walk-through: exactly the
// text of the shell block between its walkthrough markers.
func walkthrough(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- walkthrough:begin -->\n```sh\n")
	text, _, ok2 := strings.Cut(rest, "```\n<!-- walkthrough:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no walkthrough block between its markers")
	}
	return text
}

// The README's walk-through, run as written from the top of this
// repository with the built binary on PATH, completes the sprint of two
// stories: every gate PASS, the execution log exported, retro run.
func TestReadme_ExecutionWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	goEnv := strings.Split(strings.TrimSpace(string(out)), "\n")
	gt.Isolate(t)
	t.Setenv("GOCACHE", goEnv[0])
	t.Setenv("GOMODCACHE", goEnv[1])
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOFLAGS", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	script := walkthrough(t) + "\necho \"DEMO=$demo\"\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binPath)+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, err := cmd.CombinedOutput()
	text := string(b)
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", err, text)
	}
	for _, gate := range []string{"red", "scaffold", "green", "structure", "final"} {
		for _, task := range []string{"S1-01/T1", "S1-02/T1"} {
			// A PASS line may carry notes before the bracket
			// ("green: PASS: pin_cost: … [task …").
			if !regexp.MustCompile(`(?m)^` + gate + `: PASS\b[^\n]*\[task ` + regexp.QuoteMeta(task) + ` `).MatchString(text) {
				t.Errorf("no %s PASS for %s in:\n%s", gate, task, text)
			}
		}
	}
	if strings.Contains(text, ": FAIL") || strings.Contains(text, "UNVERIFIABLE") {
		t.Errorf("a gate did not pass:\n%s", text)
	}
	demo := text[strings.LastIndex(text, "DEMO=")+len("DEMO="):]
	demo = strings.TrimSpace(demo)
	if _, err := os.Stat(filepath.Join(demo, "docs", "agents", "sprint1", "execution.log")); err != nil {
		t.Errorf("exec export wrote no execution.log: %v", err)
	}
	if !strings.Contains(text, "retrospective input") {
		t.Errorf("retro did not run:\n%s", text)
	}
	for _, story := range []string{"s1-01-add", "s1-02-sum"} {
		b, err := os.ReadFile(filepath.Join(demo, "docs", "agents", "sprint1", story, "plan-ready.md"))
		if err != nil || strings.Contains(string(b), "- [ ]") || !strings.Contains(string(b), "- [x]") {
			t.Errorf("%s/plan-ready.md: %v\n%s", story, err, b)
		}
	}
}
