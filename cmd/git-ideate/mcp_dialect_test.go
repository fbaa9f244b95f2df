package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// A runner dialect spelling passes plan_check exactly when test_run
// accepts it: both ask the one registry. The runner copies a committed
// JUnit report, so test_run runs a real process and reads its report.
func TestMCP_DialectSpellingsAgree(t *testing.T) {
	dir := goPlanRepo(t, "")
	std := filepath.Join(dir, "docs", "agents", "sprint1", "standards.md")
	base, err := os.ReadFile(std)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "strutil", "reverse_test.go"), []byte("package strutil\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "report.xml"), []byte(`<testsuite name="s" tests="1"><testcase classname="strutil" name="TestReverse" file="strutil/reverse_test.go"/></testsuite>`+"\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--role", "red-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**"))
	r := startMCP(t, dir)
	id := 1
	for _, spelling := range []string{"nextest", "cargo-nextest", "Cargo-Nextest", "pytest-plugin", "libtest", "surefire", "junit", "jest", "nextest-junit"} {
		runner := "\n## Test runners\n\n### go\n\n- Extensions: `.go`\n- Run: `cp report.xml {report}`\n- Format: `junit-xml`\n- Dialect: `" + spelling + "`\n"
		os.WriteFile(std, append(append([]byte{}, base...), runner...), 0o644)
		check := r.call(id, "plan_check", map[string]any{})
		id++
		if check.IsError {
			t.Fatalf("plan_check: %+v", check.Out)
		}
		planOK := true
		for _, f := range check.Out["findings"].([]any) {
			if f.(map[string]any)["rule"] == "runner.missing_dialect" {
				planOK = false
			}
		}
		run := r.call(id, "test_run", map[string]any{"task": "S1-01/T1"})
		id++
		if run.IsError {
			t.Fatalf("test_run with dialect %s: %+v", spelling, run.Out)
		}
		reason, _ := run.Out["report"].(map[string]any)["reason"].(string)
		runOK := !strings.Contains(reason, "dialect")
		if planOK != runOK {
			t.Errorf("dialect %q: plan_check accepts it %v, test_run %v (%s)", spelling, planOK, runOK, reason)
		}
		if want := !strings.Contains(spelling, "junit") && spelling != "jest"; planOK != want {
			t.Errorf("dialect %q: accepted %v, want %v", spelling, planOK, want)
		}
	}
}
