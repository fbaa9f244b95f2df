package hooks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/worktree"
)

const fixtureFile = "testdata/hook-payloads-2.1.328.jsonl"

// fixture is one recorded hook call of the host.
type fixture struct {
	Line     int
	Hook     string                     `json:"hook"`
	ExitCode int                        `json:"exit_code"`
	Payload  map[string]json.RawMessage `json:"payload"`
}

func (f fixture) event() string { return str(f.Payload["hook_event_name"]) }

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	data, err := os.ReadFile(fixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []fixture
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var f fixture
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("fixture line %d: %v", n, err)
		}
		f.Line = n
		out = append(out, f)
	}
	if len(out) < 20 {
		t.Fatalf("only %d fixtures", len(out))
	}
	return out
}

// payload renders a fixture's payload with some fields replaced (a nil
// value deletes the field).
func payload(t testing.TB, base map[string]json.RawMessage, set map[string]any) []byte {
	t.Helper()
	m := map[string]any{}
	for k, v := range base {
		m[k] = v
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// opener opens real stores, closed at the end of the test.
func opener(t testing.TB) func(dir, session string) (*hooks.Stores, error) {
	return func(dir, session string) (*hooks.Stores, error) {
		g, err := gitstore.Open(dir)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { g.Close() })
		rec := record.Open(g)
		st := &hooks.Stores{Record: rec, Board: board.Open(g, rec), Tasks: worktree.Open(g), StateDir: g.Repo().StateDir(), Top: g.Repo().WorkTree}
		if cd := g.Repo().CommonDir; filepath.Base(cd) == ".git" {
			st.Top = filepath.Dir(cd)
		}
		st.Standards = func(ctx context.Context) (*plan.Standards, error) {
			s, err := plan.LoadDir(ctx, st.Top, plan.Options{})
			if err != nil {
				return nil, err
			}
			return s.Standards, nil
		}
		return st, nil
	}
}

type result struct {
	out   string
	notes []string
}

// runHook runs one hook the way the command does, from dir.
func runHook(t testing.TB, dir string, input []byte, event string) result {
	t.Helper()
	var out bytes.Buffer
	var notes []string
	d := &hooks.Dispatcher{Dir: dir, Open: opener(t), Getenv: func(string) string { return "" },
		Warn: func(m string) { notes = append(notes, m) }}
	d.Run(context.Background(), bytes.NewReader(input), &out, event)
	for _, n := range notes {
		if strings.Contains(n, "\n") {
			t.Fatalf("a note spans lines: %q", n)
		}
	}
	return result{out.String(), notes}
}

// tip is the commit a ref names, "" when it does not exist.
func tip(t testing.TB, dir, ref string) string {
	t.Helper()
	out, _ := gt.GitErr(dir, "rev-parse", "-q", "--verify", ref)
	return out
}

// records returns every record, newest first.
func records(t testing.TB, dir string) []*record.Record {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sn, err := record.Open(g).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := sn.Select(record.Filter{}, "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// hostOutput decodes what a hook printed: nil for nothing; it fails the
// test unless it is exactly one JSON object naming event.
func hostOutput(t testing.TB, out, event string) map[string]any {
	t.Helper()
	if out == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, out)
	}
	if dec.More() || !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("stdout holds more than one JSON object and a newline:\n%s", out)
	}
	hso, _ := m["hookSpecificOutput"].(map[string]any)
	if hso == nil || hso["hookEventName"] != event {
		t.Fatalf("stdout lacks hookSpecificOutput.hookEventName %q:\n%s", event, out)
	}
	return m
}

func contextOf(t testing.TB, out, event string) string {
	t.Helper()
	m := hostOutput(t, out, event)
	if m == nil {
		return ""
	}
	s, _ := m["hookSpecificOutput"].(map[string]any)["additionalContext"].(string)
	return s
}

// writeTranscript writes a small Claude Code transcript for a session in
// cwd: 2 prompts, 4 assistant entries with 3 tool calls, 2 tool results.
func writeTranscript(t testing.TB, cwd string) string {
	t.Helper()
	lines := []string{
		`{"type":"user","message":{"role":"user","content":"Fix the parser and add a test."},"cwd":"` + cwd + `"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Reading the parser first."}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"` + cwd + `/parser/parse.go"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"package parser"}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"` + cwd + `/parser/parse_test.go","old_string":"a","new_string":"b"}},{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"go test ./..."}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}`,
		`{"type":"user","message":{"role":"user","content":"Thanks, now commit."}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"The parser handles   empty input now;\nthe new test covers it."}]}}`,
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
