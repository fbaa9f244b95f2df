package hooks_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
)

// seeded is a repository holding one record, so a write shows as a moved ref.
func seeded(t *testing.T) (dir, recTip string) {
	t.Helper()
	dir = gt.NewRepo(t)
	res := runHook(t, dir, []byte(`{"session_id":"s0","hook_event_name":"SessionEnd","reason":"other","cwd":"`+dir+`"}`), "")
	if len(res.notes) != 0 {
		t.Fatal(res.notes)
	}
	return dir, tip(t, dir, record.RefName)
}

func TestRun_UnusableInput(t *testing.T) {
	dir, before := seeded(t)
	for name, in := range map[string]string{
		"garbage": "this is not json", "empty": "", "array": `[{"hook_event_name":"SessionEnd","cwd":"` + dir + `"}]`,
		"null": "null", "truncated": `{"hook_event_name":"SessionEnd","cwd":"` + dir,
	} {
		for _, event := range []string{"", "SessionEnd"} {
			res := runHook(t, dir, []byte(in), event)
			if res.out != "" || len(res.notes) != 1 || !strings.Contains(res.notes[0], "nothing recorded") {
				t.Errorf("%s (event %q): out %q, notes %q", name, event, res.out, res.notes)
			}
		}
	}
	if got := tip(t, dir, record.RefName); got != before {
		t.Fatal("unusable input moved the record")
	}
}

func TestRun_NotARepository(t *testing.T) {
	repo, before := seeded(t)
	outside := t.TempDir()
	missing := filepath.Join(outside, "gone", "away")
	for name, c := range map[string]struct{ cwd, procDir string }{
		"cwd outside any repository":     {outside, repo},
		"cwd that does not exist":        {missing, outside},
		"cwd that is a file":             {writeFile(t, outside, "f.txt"), outside},
		"no cwd, process dir outside":    {"", outside},
		"relative cwd that is not there": {"nope/nope", outside},
	} {
		for _, ev := range []string{"SessionEnd", "PreCompact", "SessionStart", "SubagentStop", "TaskCompleted"} {
			in := `{"session_id":"s","hook_event_name":"` + ev + `","agent_type":"x","cwd":` + quote(c.cwd) + `}`
			var out bytes.Buffer
			var notes []string
			d := &hooks.Dispatcher{Dir: c.procDir, Open: opener(t), Getenv: func(string) string { return "" },
				Warn: func(m string) { notes = append(notes, m) }}
			d.Run(context.Background(), strings.NewReader(in), &out, "")
			if out.Len() != 0 || len(notes) != 1 || !strings.Contains(notes[0], "NOT_A_REPOSITORY") {
				t.Errorf("%s, %s: out %q, notes %q", name, ev, out.String(), notes)
			}
			if c.cwd == missing && !strings.Contains(notes[0], "is not a directory") {
				t.Errorf("%s: the note does not say the cwd is missing: %q", name, notes[0])
			}
		}
	}
	if got := tip(t, repo, record.RefName); got != before {
		t.Fatal("a hook outside the repository wrote to it")
	}
	if _, err := os.Stat(filepath.Join(outside, ".git")); err == nil {
		t.Fatal("a hook created a repository")
	}
}

func writeFile(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestRun_RepositoryFallbacks(t *testing.T) {
	project := gt.NewRepo(t)
	proc := gt.NewRepo(t)
	missing := filepath.Join(t.TempDir(), "gone")
	run := func(cwd string, env map[string]string) {
		in := `{"session_id":"s","hook_event_name":"SessionEnd","reason":"other","cwd":` + quote(cwd) + `}`
		var notes []string
		d := &hooks.Dispatcher{Dir: proc, Open: opener(t), Getenv: func(k string) string { return env[k] },
			Warn: func(m string) { notes = append(notes, m) }}
		d.Run(context.Background(), strings.NewReader(in), &bytes.Buffer{}, "")
		if len(notes) != 0 {
			t.Fatal(notes)
		}
	}
	// A cwd that is gone falls back to $CLAUDE_PROJECT_DIR, then to the
	// process directory.
	run(missing, map[string]string{"CLAUDE_PROJECT_DIR": project})
	if len(records(t, project)) != 1 || tip(t, proc, record.RefName) != "" {
		t.Fatal("the record did not go to $CLAUDE_PROJECT_DIR")
	}
	run(missing, map[string]string{"CLAUDE_PROJECT_DIR": missing})
	if len(records(t, proc)) != 1 {
		t.Fatal("the record did not go to the process directory")
	}
	// An existing cwd wins over both; a subdirectory finds its repository.
	sub := filepath.Join(project, "deep", "er")
	os.MkdirAll(sub, 0o755)
	run(sub, map[string]string{"CLAUDE_PROJECT_DIR": proc})
	if len(records(t, project)) != 2 || len(records(t, proc)) != 1 {
		t.Fatal("the payload's cwd did not win")
	}
}

func TestRun_EventArgument(t *testing.T) {
	dir := gt.NewRepo(t)
	// The payload names no event: the argument does, in any spelling.
	res := runHook(t, dir, []byte(`{"session_id":"s","reason":"other","cwd":"`+dir+`"}`), "session-end")
	if len(res.notes) != 0 || len(records(t, dir)) != 1 || records(t, dir)[0].Kind != "session-outcome" {
		t.Fatalf("event from the argument: %q, %d records", res.notes, len(records(t, dir)))
	}
	// The payload's own name wins over a different argument, with a note.
	res = runHook(t, dir, []byte(`{"session_id":"s","hook_event_name":"TaskCompleted","task_id":"3","task_subject":"t","cwd":"`+dir+`"}`), "SessionEnd")
	if len(res.notes) != 1 || !strings.Contains(res.notes[0], "TaskCompleted") || records(t, dir)[0].Kind != "native-task-completion" {
		t.Fatalf("payload event vs argument: %q, newest %s", res.notes, records(t, dir)[0].Kind)
	}
	// Neither names one: nothing.
	res = runHook(t, dir, []byte(`{"session_id":"s","cwd":"`+dir+`"}`), "")
	if len(res.notes) != 0 || res.out != "" || len(records(t, dir)) != 2 {
		t.Fatalf("no event: %q %q", res.notes, res.out)
	}
}

func TestRun_UnhandledEventsTouchNothing(t *testing.T) {
	var opened bool
	d := &hooks.Dispatcher{Open: func(string, string) (*hooks.Stores, error) { opened = true; return nil, errors.New("no") }}
	for _, ev := range []string{"PreToolUse", "PostCompact", "Notification", "StopFailure", "SomethingNew"} {
		var out bytes.Buffer
		d.Run(context.Background(), strings.NewReader(`{"hook_event_name":"`+ev+`","session_id":"s"}`), &out, "")
		if out.Len() != 0 || opened {
			t.Fatalf("%s: printed %q, opened the repository %v", ev, out.String(), opened)
		}
	}
	// A PostToolUse is captured (so the repository is opened), but one
	// that is not a git commit asks for no commit record: the only note
	// is the capture's.
	for _, in := range []string{
		`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo \"git commit\""}}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git commit-tree HEAD^{tree}"}}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"command":"git commit"}}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":"git commit"}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Bash"}`,
	} {
		var notes []string
		d.Warn = func(m string) { notes = append(notes, m) }
		var out bytes.Buffer
		d.Run(context.Background(), strings.NewReader(in), &out, "")
		if out.Len() != 0 || len(notes) != 1 || !strings.Contains(notes[0], "not captured") {
			t.Fatalf("%s: printed %q, notes %q", in, out.String(), notes)
		}
	}
	var notes []string
	d.Warn = func(m string) { notes = append(notes, m) }
	d.Run(context.Background(), strings.NewReader(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git commit -m x"}}`), &bytes.Buffer{}, "")
	if len(notes) != 2 {
		t.Fatalf("a commit line: notes %q, want the capture's and the commit record's", notes)
	}
}

// A PreToolUse hook that cannot decide in time denies the call and ends
// the process: the host would otherwise run the tool unjudged (and a
// worker's Bash call unconfined) once the hook's timeout passed. Here the
// repository's stores never open; the denial comes at the budget, and
// nothing is written after it.
func TestRun_PreToolUseDeniesWhatItCannotJudgeInTime(t *testing.T) {
	dir := gt.NewRepo(t)
	release, exited := make(chan struct{}), make(chan struct{})
	d := &hooks.Dispatcher{
		Dir:           dir,
		Gates:         gates.NewRegistry(),
		Open:          func(string, string) (*hooks.Stores, error) { <-release; return nil, errors.New("opened too late") },
		PreToolBudget: 300 * time.Millisecond,
		Exit:          func() { close(exited) },
	}
	payload := `{"session_id":"s1","hook_event_name":"PreToolUse","cwd":"` + dir + `","agent_id":"a1","agent_type":"git-ideate:green-worker",` +
		`"tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"t1"}`
	var out proctest.Buffer
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		d.Run(context.Background(), strings.NewReader(payload), &out, "")
	}()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("no decision 10 s after a 300 ms budget")
	}
	took := time.Since(start)
	said := out.String()
	if !strings.Contains(said, `"permissionDecision":"deny"`) || !strings.Contains(said, "could not be judged within 300ms") {
		t.Fatalf("after %s the hook said %q", took, said)
	}
	close(release)
	<-done
	if out.String() != said {
		t.Fatalf("the hook wrote again after its late denial: %q", out.String())
	}
}

// A tool call's input can make its payload one the hook cannot read (a
// value nested past the JSON reader's depth): a PreToolUse payload that
// cannot be read is denied, never answered with silence, which the host
// takes for an allow (a bound worker's Bash call would then run
// unconfined).
func TestRun_UnreadablePreToolUseIsDenied(t *testing.T) {
	dir := gt.NewRepo(t)
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	payload := `{"session_id":"s1","transcript_path":"/x","cwd":"` + dir + `","hook_event_name":"PreToolUse","agent_id":"a1","agent_type":"git-ideate:red-worker",` +
		`"tool_name":"Bash","tool_input":{"command":"echo x > prod.go","x":` + deep + `},"tool_use_id":"t1"}`
	for _, event := range []string{"", "PreToolUse"} {
		d := &hooks.Dispatcher{Dir: dir, Gates: gates.NewRegistry(),
			Open: func(string, string) (*hooks.Stores, error) { return nil, errors.New("not opened") }}
		var out bytes.Buffer
		d.Run(context.Background(), strings.NewReader(payload), &out, event)
		if !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
			t.Errorf("event %q: the hook said %q", event, out.String())
		}
	}
	// Another event's unreadable payload is still only a note.
	d := &hooks.Dispatcher{Dir: dir}
	var out bytes.Buffer
	d.Run(context.Background(), strings.NewReader(`{"hook_event_name":"PostToolUse","tool_input":{"x":`+deep+`}}`), &out, "")
	if out.String() != "" {
		t.Errorf("PostToolUse: the hook said %q", out.String())
	}
}
