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

// git ideate scaffold through the binary: after a verified RED, the
// shim becomes a stub, each action is on the execution log (phase
// scaffold, the file, the qualified symbol), the scaffold gate passes the
// committed result, and a second run does nothing.
func TestScaffold_CLI(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := goPlanRepo(t, goRunner)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	test := "strutil/reverse_test.go::TestReverse_ASCII"
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--test", test, "--scope", "strutil/**"))
	wt := filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1")
	os.MkdirAll(filepath.Join(wt, "strutil"), 0o755)
	os.WriteFile(filepath.Join(wt, "strutil", "zz_agentic_shim_s1_01_t1.go"), []byte("// agentic:shim\npackage strutil\n\nfunc Reverse(s string) string { return s }\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "strutil", "reverse_test.go"), []byte("package strutil\n\nimport \"testing\"\n\nfunc TestReverse_ASCII(t *testing.T) {\n\tif Reverse(\"abc\") != \"cba\" {\n\t\tt.Fatal(\"Reverse(abc) != cba\")\n\t}\n}\n"), 0o644)
	gt.Git(t, wt, "add", "-A")
	gt.Git(t, wt, "commit", "-q", "-m", "red")
	mustOK(t, bin(t, dir, "", "gate", "red", "--task", "S1-01/T1"))

	r := bin(t, dir, "", "scaffold", "--task", "S1-01/T1", "--json")
	var out struct {
		MessageType string `json:"message_type"`
		Task        string `json:"task"`
		Attempt     int    `json:"attempt"`
		Actions     []struct{ Op, Path, Symbol string }
		Undecided   []struct{ Symbol, Reason string }
		Logged      int `json:"logged"`
	}
	if err := json.Unmarshal([]byte(r.out), &out); err != nil || r.code != 0 {
		t.Fatalf("scaffold: %v %+v", err, r)
	}
	var got []string
	for _, a := range out.Actions {
		got = append(got, a.Op+" "+a.Path+" "+a.Symbol)
	}
	want := "delete strutil/zz_agentic_shim_s1_01_t1.go strutil.Reverse;create strutil/reverse.go strutil.Reverse"
	if strings.Join(got, ";") != want || out.Logged != 2 || out.Attempt != 1 || len(out.Undecided) != 0 {
		t.Fatalf("scaffold result %+v", out)
	}
	var log struct {
		Entries []struct {
			Phase, Event, Task, Detail string
			Attempt, Wave              int
			Paths                      []string
		}
	}
	if err := json.Unmarshal([]byte(bin(t, dir, "", "exec", "log", "--json", "--phase", "scaffold").out), &log); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, e := range log.Entries {
		got = append(got, e.Phase+" "+e.Event+" "+e.Task+" "+strings.Join(e.Paths, ",")+" "+e.Detail)
		if e.Attempt != 1 || e.Wave != 1 {
			t.Errorf("entry %+v", e)
		}
	}
	if strings.Join(got, ";") != "scaffold delete S1-01/T1 strutil/zz_agentic_shim_s1_01_t1.go strutil.Reverse;scaffold create S1-01/T1 strutil/reverse.go strutil.Reverse" {
		t.Fatalf("execution log: %v", got)
	}
	gt.Git(t, wt, "add", "-A")
	gt.Git(t, wt, "commit", "-q", "-m", "scaffold")
	if r := bin(t, dir, "", "gate", "scaffold", "--task", "S1-01/T1"); r.code != 0 {
		t.Fatalf("scaffold gate: %+v", r)
	}
	if r := bin(t, dir, "", "scaffold", "--task", "S1-01/T1"); r.code != 0 || strings.TrimSpace(r.out) != "nothing to scaffold" {
		t.Fatalf("second run: %+v", r)
	}
}
