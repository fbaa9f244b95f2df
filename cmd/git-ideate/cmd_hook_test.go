package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
)

// runBin runs the built binary directly (not through git), so the exit
// code is the binary's own.
func runBin(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	return runProcess(t, cmd, stdin)
}

// checkHostOutput fails unless stdout is empty or exactly one JSON object
// (and a newline) whose hookSpecificOutput names event.
func checkHostOutput(t *testing.T, what string, r result, event string) {
	t.Helper()
	if r.code != 0 {
		t.Errorf("%s: exit %d (stderr %q)", what, r.code, r.err)
	}
	if r.out == "" {
		return
	}
	var m struct {
		HookSpecificOutput *struct {
			HookEventName string `json:"hookEventName"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(r.out))
	if err := dec.Decode(&m); err != nil || dec.More() || strings.Count(r.out, "\n") != 1 || !strings.HasSuffix(r.out, "}\n") {
		t.Errorf("%s: stdout is not one JSON object: %q", what, r.out)
		return
	}
	if m.HookSpecificOutput == nil || m.HookSpecificOutput.HookEventName != event {
		t.Errorf("%s: hookSpecificOutput.hookEventName is not %q: %s", what, event, r.out)
	}
}

func TestHook_Binary_ReplaysFixtures(t *testing.T) {
	dir := gt.NewRepo(t)
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	f, err := os.Open(filepath.Join("..", "..", "internal", "hooks", "testdata", "hook-payloads-2.1.328.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	printed := 0
	for n := 1; sc.Scan(); n++ {
		var fx struct {
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &fx); err != nil {
			t.Fatal(err)
		}
		p := fx.Payload
		p["cwd"] = dir
		if resp, ok := p["tool_response"].(map[string]any); ok && resp["gitOperation"] != nil {
			resp["gitOperation"].(map[string]any)["commit"].(map[string]any)["sha"] = head[:7]
		}
		in, _ := json.Marshal(p)
		r := runBin(t, t.TempDir(), string(in), "hook")
		checkHostOutput(t, "line "+p["hook_event_name"].(string), r, p["hook_event_name"].(string))
		if r.err != "" {
			t.Errorf("line %d: stderr %q", n, r.err)
		}
		if r.out != "" {
			printed++
		}
	}
	if printed != 4 { // SubagentStart and three SessionStarts once the record holds something
		t.Errorf("%d hooks printed context, want 4", printed)
	}
	kinds := gt.Git(t, dir, "log", "--format=%s", "refs/ideate/record")
	for _, k := range []string{"session-outcome", "compaction-snapshot", "compaction-summary", "subagent-outcome", "commit-boundary"} {
		if !strings.Contains(kinds, k+": ") {
			t.Errorf("no %s record:\n%s", k, kinds)
		}
	}
	if got := strings.Count(kinds, "\n") + 1; got != 8 {
		t.Errorf("%d records, want 8:\n%s", got, kinds)
	}
	if note := gt.Git(t, dir, "notes", "--ref=ideate", "show", head); !strings.HasPrefix(note, "ideate-record: ") {
		t.Errorf("note on the commit: %q", note)
	}
	// Telemetry heard the captures under the host's session.
	tel, _ := os.ReadFile(filepath.Join(dir, ".git", "ideate", "telemetry.ndjson"))
	if !strings.Contains(string(tel), "3b311f76-4634-48ab-b822-33299bd463ef") || !strings.Contains(string(tel), "commit-boundary") ||
		!strings.Contains(string(tel), "hook:session-start") {
		t.Errorf("telemetry:\n%s", tel)
	}
	gt.Fsck(t, dir)
}

func TestHook_Binary_AlwaysExitsZero(t *testing.T) {
	dir := gt.NewRepo(t)
	outside := t.TempDir()
	end := func(cwd string) string {
		return `{"session_id":"s","hook_event_name":"SessionEnd","reason":"other","cwd":"` + cwd + `"}`
	}
	for _, c := range []struct {
		name, stdin string
		args        []string
	}{
		{"garbage", "}{ not json", []string{"hook"}},
		{"empty", "", []string{"hook"}},
		{"array", `[` + end(dir) + `]`, []string{"hook"}},
		{"cwd outside a repository", end(outside), []string{"hook"}},
		{"cwd that does not exist", end(filepath.Join(outside, "gone")), []string{"hook"}},
		{"bad flag", end(dir), []string{"hook", "--bogus"}},
		{"bad flag after the event", end(dir), []string{"hook", "SessionEnd", "--bogus"}},
		{"two events", end(dir), []string{"hook", "SessionEnd", "Stop"}},
	} {
		r := runBin(t, outside, c.stdin, c.args...)
		if r.code != 0 || r.out != "" || strings.Count(strings.TrimSuffix(r.err, "\n"), "\n") != 0 || r.err == "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q (want exit 0, no stdout, one line)", c.name, r.code, r.out, r.err)
		}
	}
	if refs := gt.Git(t, dir, "for-each-ref", "refs/ideate/"); refs != "" {
		t.Fatalf("refused input wrote: %s", refs)
	}
	// Through git, with the event named on the command line.
	r := bin(t, dir, `{"session_id":"s","reason":"other"}`, "hook", "session-end")
	if r.code != 0 || r.out != "" || r.err != "" {
		t.Fatalf("git ideate hook session-end: %+v", r)
	}
	if got := gt.Git(t, dir, "log", "--format=%s", "refs/ideate/record"); got != "session-outcome: Session s ended (other)." {
		t.Fatalf("record: %q", got)
	}
}

func TestHook_InProcess(t *testing.T) {
	dir := gt.NewRepo(t)
	r := cli(t, dir, `{"session_id":"s","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}`, "hook")
	if r.code != 0 || r.out != "" || r.err != "" {
		t.Fatalf("%+v", r)
	}
	// The compaction happened: the host starts the session again.
	if r = cli(t, dir, `{"session_id":"s","hook_event_name":"SessionStart","source":"compact"}`, "hook"); r.code != 0 || r.err != "" {
		t.Fatalf("%+v", r)
	}
	r = cli(t, dir, `{"session_id":"s","hook_event_name":"SubagentStart","agent_type":"Plan"}`, "hook")
	checkHostOutput(t, "SubagentStart", r, "SubagentStart")
	if !strings.Contains(r.out, "hit auto context compaction") {
		t.Fatalf("digest: %s", r.out)
	}
	r = cli(t, dir, "nope", "hook")
	if r.code != 0 || r.out != "" || !strings.HasPrefix(r.err, "git ideate hook: SCHEMA: the hook payload is not a JSON object") {
		t.Fatalf("%+v", r)
	}
}

func TestHook_StdinTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if stdinIsTerminal(null) || stdinIsTerminal(r) || stdinIsTerminal(strings.NewReader("")) {
		t.Fatal("/dev/null, a pipe or a buffer taken for a terminal")
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to give the binary a terminal")
	}
	dir := gt.NewRepo(t)
	cmd := exec.Command(script, "-qec", binPath+" hook", os.DevNull)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "git ideate hook: stdin is a terminal") {
		t.Fatalf("under a terminal: %v\n%s", err, out)
	}
}

// The hook entries' two command lines, recognised without kong, are the
// HookCmd kong parses from them; every other line is left to kong.
func TestHookLine_AsKongParsesIt(t *testing.T) {
	for _, args := range [][]string{{"hook"}, {"hook", hooks.GateFlag}} {
		got, ok := hookLine(args)
		if !ok {
			t.Fatalf("%q is not recognised", args)
		}
		parser, err := kong.New(&CLI{}, kongOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		kctx, err := parser.Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		want, isHook := kctx.Selected().Target.Addr().Interface().(*HookCmd)
		if !isHook || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: recognised as %+v, kong parses %+v", args, got, want)
		}
	}
	for _, args := range [][]string{nil, {"hooks"}, {"hook", "PreToolUse"}, {"hook", "--gate", "SubagentStop"}, {"-C", "x", "hook"},
		{"hook", "--help"}, {"hook", "--gate=true"}, {"hook", "-h"}, {"record", "hook"}} {
		if _, ok := hookLine(args); ok {
			t.Errorf("%q is recognised; it is kong's to parse", args)
		}
	}
}
