package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func mustOK(t testing.TB, r result) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
	}
	return r
}

func TestRecord_Golden(t *testing.T) {
	dir := gt.NewRepo(t)
	a := strings.TrimSpace(mustOK(t, cli(t, dir, "", "record", "append", "--kind", "finding", "--claim", "Packed refs are rescanned per lookup",
		"--anchor", "bench:refs", "--scope", "gitstore", "--session", "s1", "--content", "go-git scans packed-refs linearly.")).out)
	mustOK(t, cli(t, dir, "Measured: lockfile CAS is safe beside git.", "record", "decision", "--claim", "Use our own lockfile CAS",
		"--rationale", "-", "--scope", "gitstore", "--session", "s1", "--supersedes", a))
	mustOK(t, cli(t, dir, "multi\nline body\n", "record", "append", "--kind", "note", "--claim", "Body from stdin", "--content", "-",
		"--task", "T-1", "--session", "s2"))

	var all strings.Builder
	step := func(title string, r result) {
		fmt.Fprintf(&all, "$ %s\n[exit %d]\n%s", title, r.code, r.out)
		if r.err != "" {
			fmt.Fprintf(&all, "[stderr]\n%s", r.err)
		}
		all.WriteString("\n")
	}
	step("record read", cli(t, dir, "", "record", "read"))
	step("record read --limit 2", cli(t, dir, "", "record", "read", "--limit", "2"))
	step("record read --json --limit 1 --scope gitstore", cli(t, dir, "", "record", "read", "--json", "--limit", "1", "--scope", "gitstore"))
	step("record read --json --id A --include-content", cli(t, dir, "", "record", "read", "--json", "--id", a, "--include-content"))
	step("record read --scope nothing", cli(t, dir, "", "record", "read", "--scope", "nothing"))
	step("record prime --budget 2", cli(t, dir, "", "record", "prime", "--budget", "2"))
	step("record prime --budget 99", cli(t, dir, "", "record", "prime", "--budget", "99", "--scope", "zzz"))
	step("record append (missing kind)", cli(t, dir, "", "record", "append", "--claim", "x"))
	step("record append (empty kind)", cli(t, dir, "", "record", "append", "--kind", " ", "--claim", "x"))
	step("record read --include-content", cli(t, dir, "", "record", "read", "--include-content"))
	step("record read --limit -1", cli(t, dir, "", "record", "read", "--limit", "-1"))
	step("record read --json --cursor bad", cli(t, dir, "", "record", "read", "--json", "--cursor", "bad"))
	step("record append --supersedes unknown", cli(t, dir, "", "record", "append", "--kind", "k", "--claim", "c", "--supersedes", "01JDQ3Z5E8X9K2M4N6P8R0T1VW"))
	golden(t, "record", all.String())
	gt.Fsck(t, dir)
}

func TestRecord_HelpAndVersion(t *testing.T) {
	dir := gt.NewRepo(t)
	r := cli(t, dir, "", "--help")
	if r.code != 0 || !strings.Contains(r.out, "record") {
		t.Fatalf("--help: %+v", r)
	}
	golden(t, "help-record", cli(t, dir, "", "record", "--help").out)
	r = cli(t, dir, "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.out, "git-ideate ") {
		t.Fatalf("--version: %+v", r)
	}
	if r := cli(t, dir, ""); r.code != 0 || !strings.Contains(r.out, "Usage") {
		t.Fatalf("no args: %+v", r)
	}
	if r := cli(t, dir, "", "bogus"); r.code != 1 {
		t.Fatalf("unknown command exit %d", r.code)
	}
}

func TestRecord_ThroughGit(t *testing.T) {
	dir := gt.NewRepo(t)
	sub := filepath.Join(dir, "deep", "er")
	os.MkdirAll(sub, 0o755)
	r := mustOK(t, bin(t, sub, "from stdin", "record", "append", "--kind", "finding", "--claim", "via git", "--content", "-"))
	id := strings.TrimSpace(r.out)
	if got := gt.Git(t, dir, "log", "--format=%s", "refs/ideate/record"); got != "finding: via git" {
		t.Fatalf("git log: %q", got)
	}
	r = mustOK(t, bin(t, dir, "", "record", "read", "--json", "--include-content"))
	var page struct {
		Records []struct {
			ID      string `json:"id"`
			Content string `json:"content"`
		} `json:"records"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(r.out), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 1 || page.Records[0].ID != id || page.Records[0].Content != "from stdin" || page.NextCursor != nil {
		t.Fatalf("read: %+v", page)
	}
	// Outside a repository: one line, exit 1, nothing written.
	out := t.TempDir()
	r = bin(t, out, "", "record", "append", "--kind", "k", "--claim", "c")
	if r.code != 1 || strings.Count(strings.TrimSpace(r.err), "\n") != 0 || !strings.Contains(r.err, "NOT_A_REPOSITORY") {
		t.Fatalf("outside a repo: %+v", r)
	}
	// Hook paths exit 0 even outside a repository or with garbage.
	if r := bin(t, out, "", "record", "prime"); r.code != 0 {
		t.Fatalf("prime outside a repo exit %d", r.code)
	}
	if r := bin(t, dir, "not json", "record", "session-end"); r.code != 0 || r.out != "" {
		t.Fatalf("session-end garbage: %+v", r)
	}
	for _, args := range [][]string{{"record", "prime", "--bogus"}, {"record", "session-end", "--x"}, {"work", "sweep", "--nope"}} {
		if r := bin(t, dir, "", args...); r.code != 0 || !strings.Contains(r.err, "SCHEMA") {
			t.Fatalf("%v: hook paths exit 0 with a note, got %+v", args, r)
		}
	}
	gt.Fsck(t, dir)
}

func TestRecord_SessionEnd(t *testing.T) {
	dir := gt.NewRepo(t)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	lines := []string{
		`{"type":"user","message":{"role":"user","content":"fix the bug"}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Edit","input":{"file_path":"` + dir + `/src/a.go"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed   the\nbug."}]}}`,
	}
	os.WriteFile(tr, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	payload := fmt.Sprintf(`{"session_id":"sess-1","transcript_path":%q,"cwd":%q,"hook_event_name":"SessionEnd","reason":"other"}`, tr, dir)
	r := mustOK(t, bin(t, t.TempDir(), payload, "record", "session-end"))
	id := strings.TrimSpace(r.out)
	r = mustOK(t, bin(t, dir, "", "record", "read", "--json", "--id", id, "--include-content"))
	for _, want := range []string{`"kind": "session-outcome"`, `"capture_point": "session-end"`, `"session_id": "sess-1"`,
		`after 1 user and 2 assistant turns`, `Turns: 1 user (prompts typed), 2 assistant; 2 user-side log entries in all, tool results included.`, `Edit (1x)`, `src/a.go`, `Fixed the bug.`, `"scope": "src"`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("session-outcome lacks %s:\n%s", want, r.out)
		}
	}
	// Without a readable transcript: a minimal record.
	payload = fmt.Sprintf(`{"session_id":"sess-2","transcript_path":"/nonexistent","cwd":%q,"reason":"clear"}`, dir)
	r = mustOK(t, bin(t, dir, payload, "record", "session-end"))
	r = mustOK(t, bin(t, dir, "", "record", "read", "--id", strings.TrimSpace(r.out)))
	if !strings.Contains(r.out, "No readable transcript") {
		t.Fatalf("minimal record: %s", r.out)
	}
}

func TestRecord_ExportAndWalk(t *testing.T) {
	dir := gt.NewRepo(t)
	for i := 0; i < 130; i++ {
		mustOK(t, cli(t, dir, "", "record", "append", "--kind", "finding", "--claim", fmt.Sprintf("c%d", i), "--content", strings.Repeat("z", 600)))
	}
	out := filepath.Join(t.TempDir(), "export")
	r := mustOK(t, bin(t, dir, "", "record", "export", out))
	if !strings.Contains(r.out, "exported 130 records") {
		t.Fatalf("export: %s", r.out)
	}
	n := 0
	filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".md") {
			n++
		}
		return nil
	})
	if n != 130 {
		t.Fatalf("%d files exported", n)
	}
	r = mustOK(t, bin(t, dir, "", "record", "export", "--json", out))
	var counts struct{ Total, Written, Unchanged int }
	if err := json.Unmarshal([]byte(r.out), &counts); err != nil || counts.Total != 130 || counts.Unchanged != 130 || counts.Written != 0 {
		t.Fatalf("export --json again: %s (%v)", r.out, err)
	}
	// A full cursor walk through the CLI covers every record once.
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		args := []string{"record", "read", "--json", "--include-content"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		r := mustOK(t, cli(t, dir, "", args...))
		var page struct {
			Records    []struct{ ID string } `json:"records"`
			NextCursor *string               `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(r.out), &page); err != nil {
			t.Fatal(err)
		}
		for _, rec := range page.Records {
			if seen[rec.ID] {
				t.Fatalf("%s seen twice", rec.ID)
			}
			seen[rec.ID] = true
		}
		if page.NextCursor == nil {
			break
		}
		if pages > 100 {
			t.Fatal("walk does not end")
		}
		cursor = *page.NextCursor
	}
	if len(seen) != 130 {
		t.Fatalf("walk saw %d", len(seen))
	}
}

// A configuration git cannot read stops a write before anything is
// written: the tool does not run on a guess of the settings. The binary
// runs directly, as the hooks and the MCP server run it (through `git
// ideate`, git itself refuses first).
func TestRecord_CLI_UnreadableConfigWritesNothing(t *testing.T) {
	dir := gt.NewRepo(t)
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[ideate\n")
	f.Close()
	cmd := exec.Command(binPath, "record", "append", "--kind", "finding", "--claim", "c")
	cmd.Dir = dir
	r := runProcess(t, cmd, "")
	if r.code == 0 || !strings.Contains(r.err, "GIT_FAILED") || !strings.Contains(r.err, "configuration") {
		t.Fatalf("record append with a malformed config: %+v", r)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git", "refs", "ideate")); len(entries) != 0 {
		t.Fatalf("refs written: %v", entries)
	}
}
