package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// binDir holds the two binaries side by side, as go install and the
// release archives put them.
var binDir string

func TestMain(m *testing.M) {
	os.Setenv("IDEATE_FSMONITOR", "0")
	dir, err := os.MkdirTemp("", "git-ideate-lean-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	for _, b := range []struct{ name, pkg string }{{"git-ideate", "."}, {"git-ideate-full", "../git-ideate-full"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b.name), b.pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.name, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code     int
	out, err string
}

// runIn runs exe with args in dir, stdin given, PATH set to path (plus
// the directory of git).
func runIn(t *testing.T, exe, dir, path, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+filepath.Dir(git))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %q: %v", exe, args, err)
	}
	return result{code, out.String(), errb.String()}
}

func lean(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runIn(t, filepath.Join(binDir, "git-ideate"), dir, "", "", args...)
}

func full(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runIn(t, filepath.Join(binDir, "git-ideate-full"), dir, "", "", args...)
}

// What the lean binary runs itself, the full one reads back: one store,
// one format, whichever binary wrote it.
func TestLean_WritesWhatTheFullBinaryReads(t *testing.T) {
	gt.Isolate(t)
	dir := gt.NewRepo(t)
	if v, f := lean(t, dir, "--version"), full(t, dir, "--version"); v != f || v.code != 0 || !strings.HasPrefix(v.out, "git-ideate ") {
		t.Fatalf("--version: lean %+v, full %+v", v, f)
	}
	r := lean(t, dir, "record", "append", "--kind", "finding", "--claim", "lean wrote this", "--json")
	var app struct{ ID string }
	if r.code != 0 || json.Unmarshal([]byte(r.out), &app) != nil || app.ID == "" {
		t.Fatalf("record append: %+v", r)
	}
	r = lean(t, dir, "work", "create", "--title", "a task", "--spec", "s", "--spec-format", "plan", "--human", "h")
	var item struct {
		ID     string
		Status string
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &item) != nil || item.ID == "" {
		t.Fatalf("work create: %+v", r)
	}
	r = lean(t, dir, "work", "claim", "--id", item.ID, "--human", "h")
	var claim struct {
		Claim struct {
			Token int64 `json:"claim_token"`
		}
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &claim) != nil || claim.Claim.Token == 0 {
		t.Fatalf("work claim: %+v", r)
	}
	if r = lean(t, dir, "work", "complete", "--id", item.ID, "--token", fmt.Sprint(claim.Claim.Token), "--note", "done by lean"); r.code != 0 {
		t.Fatalf("work complete: %+v", r)
	}
	r = full(t, dir, "work", "get", "--id", item.ID)
	if r.code != 0 || json.Unmarshal([]byte(r.out), &item) != nil || item.Status != "done" {
		t.Fatalf("full work get: %+v", r)
	}
	// Both read the same records the same way.
	l, f := lean(t, dir, "record", "read", "--json"), full(t, dir, "record", "read", "--json")
	if l != f || l.code != 0 || !strings.Contains(l.out, app.ID) || !strings.Contains(l.out, "work-completion") {
		t.Fatalf("record read: lean %+v\nfull %+v", l, f)
	}
	gt.Fsck(t, dir)
}

// A line the lean binary does not run itself is the full binary's, with
// its stdin, stdout, stderr and exit status: help, a line kong must parse
// (a positional argument, a bad or missing flag), a command only the full
// binary holds, a hook with its payload on stdin.
func TestLean_HandsEveryOtherLineToTheFullBinary(t *testing.T) {
	gt.Isolate(t)
	dir := gt.NewRepo(t)
	lean(t, dir, "record", "append", "--kind", "finding", "--claim", "c")
	payload := `{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"` + dir + `"}`
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"--help"}},
		{"", []string{"help", "work", "claim"}},
		{"", []string{"record", "append", "--kind", "finding"}},
		{"", []string{"record", "read", "--no-such-flag"}},
		{"", []string{"record", "export"}},
		{"", []string{"exec", "log"}},
		{"", []string{"task", "list"}},
		{"", []string{"plan", "check"}},
		{"", []string{"no-such-command"}},
		{payload, []string{"hook"}},
	} {
		l := runIn(t, filepath.Join(binDir, "git-ideate"), dir, "", c.stdin, c.args...)
		f := runIn(t, filepath.Join(binDir, "git-ideate-full"), dir, "", c.stdin, c.args...)
		if l.code != f.code || l.out != f.out || l.err != f.err {
			t.Errorf("%q:\n lean %+v\n full %+v", c.args, l, f)
		}
		if len(c.args) > 0 && c.args[0] == "hook" && (l.code != 0 || !strings.Contains(l.out, "additionalContext")) {
			t.Errorf("hook: %+v", l)
		}
	}
}

// Without git-ideate-full beside it or on PATH, the lean binary still
// runs its own commands; any other line is NOT_INSTALLED, exit 1, and a
// hook line exits 0 (a hook never fails its host). Beside it through a
// symbolic link, or on PATH, the full binary is found.
func TestLean_FindsTheFullBinaryOrSaysItIsMissing(t *testing.T) {
	gt.Isolate(t)
	dir := gt.NewRepo(t)
	alone := t.TempDir()
	exe := filepath.Join(alone, "git-ideate")
	b, err := os.ReadFile(filepath.Join(binDir, "git-ideate"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, exe, dir, "", "", "record", "append", "--kind", "finding", "--claim", "alone"); r.code != 0 {
		t.Fatalf("record append without the full binary: %+v", r)
	}
	r := full(t, dir, "work", "create", "--title", "t", "--spec", "s", "--spec-format", "plan", "--human", "h")
	var item struct{ ID string }
	if json.Unmarshal([]byte(r.out), &item) != nil {
		t.Fatalf("work create: %+v", r)
	}
	for _, args := range [][]string{
		{"work", "claim", "--id", item.ID, "--human", "h"},
		{"work", "complete", "--id", item.ID, "--token", "1"},
		{"work", "get", "--id", item.ID},
		{"work", "list"},
		{"record", "read"},
		{"telemetry"},
	} {
		if r := runIn(t, exe, dir, "", "", args...); r.code != 0 || r.err != "" {
			t.Errorf("%q without the full binary: %+v", args, r)
		}
	}
	r = runIn(t, exe, dir, "", "", "plan", "check")
	if r.code != 1 || r.out != "" || !strings.Contains(r.err, "NOT_INSTALLED") || !strings.Contains(r.err, "go install github.com/ideate/git-ideate/cmd/...@v") {
		t.Fatalf("plan check without the full binary: %+v", r)
	}
	for _, hook := range [][]string{{"hook"}, {"hook", "--gate"}, {"record", "session-end"}} {
		if r := runIn(t, exe, dir, "", "{}", hook...); r.code != 0 || !strings.Contains(r.err, "NOT_INSTALLED") {
			t.Errorf("%q without the full binary: %+v", hook, r)
		}
	}
	// On PATH.
	if r := runIn(t, exe, dir, binDir, "", "plan", "check"); strings.Contains(r.err, "NOT_INSTALLED") {
		t.Fatalf("with git-ideate-full on PATH: %+v", r)
	}
	// Beside the binary a symbolic link points to.
	link := filepath.Join(t.TempDir(), "git-ideate")
	if err := os.Symlink(filepath.Join(binDir, "git-ideate"), link); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, link, dir, "", "", "help"); r.code != 0 || strings.Contains(r.err, "NOT_INSTALLED") {
		t.Fatalf("through a symbolic link: %+v", r)
	}
}
