package telemetry_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/telemetry"
)

// The recorder is what the stores' observers are wired to.
var (
	_ record.Observer = (*telemetry.Recorder)(nil)
	_ board.Observer  = (*telemetry.Recorder)(nil)
)

var update = flag.Bool("update", false, "rewrite golden files")

// clock returns a Now that starts at a fixed instant and moves 1 ms per
// call.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 8, 6, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func newRecorder(t *testing.T, session string) (*telemetry.Recorder, *[]string) {
	t.Helper()
	r := telemetry.Open(filepath.Join(t.TempDir(), "state", "ideate"), session)
	r.Now = clock()
	var warns []string
	r.Warn = func(msg string) { warns = append(warns, msg) }
	return r, &warns
}

func lines(t *testing.T, r *telemetry.Recorder) []string {
	t.Helper()
	b, err := os.ReadFile(r.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("file does not end with a newline: %q", b)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// Each counter writes its contract shape and folds back into its total.
func TestCounters_RoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		emit   func(r *telemetry.Recorder)
		line   string
		totals telemetry.Totals
		check  func(t *testing.T, s *telemetry.Summary)
	}{
		{"capture_fired", func(r *telemetry.Recorder) { r.Captured("post-tool-use", "host-1") },
			`{"counter":"capture_fired","point":"post-tool-use","sessionId":"host-1","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{CaptureFired: 1},
			func(t *testing.T, s *telemetry.Summary) {
				want(t, s.CapturesByPoint, map[string]int{"post-tool-use": 1})
			}},
		{"capture_fired (session from the recorder)", func(r *telemetry.Recorder) { r.Captured("cli", "") },
			`{"counter":"capture_fired","point":"cli","sessionId":"cli-S","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{CaptureFired: 1}, nil},
		{"capture_write_failed", func(r *telemetry.Recorder) { r.CaptureFailed("cli", "s2", "claim is required") },
			`{"counter":"capture_write_failed","point":"cli","reason":"claim is required","sessionId":"s2","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{CaptureWriteFailed: 1},
			func(t *testing.T, s *telemetry.Summary) {
				want(t, s.FailuresByPoint, map[string]int{"cli": 1})
				want(t, s.FailuresByReason, map[string]int{"claim is required": 1})
			}},
		{"capture_write_failed without a reason", func(r *telemetry.Recorder) { r.CaptureFailed("cli", "s2", "") },
			`{"counter":"capture_write_failed","point":"cli","sessionId":"s2","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{CaptureWriteFailed: 1},
			func(t *testing.T, s *telemetry.Summary) { want(t, s.FailuresByReason, map[string]int{"(none)": 1}) }},
		{"priming requested", func(r *telemetry.Recorder) { r.PrimingRequested("cli:prime") },
			`{"counter":"priming","kind":"requested","source":"cli:prime","sessionId":"cli-S","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{PrimingRequested: 1},
			func(t *testing.T, s *telemetry.Summary) { want(t, s.PrimingBySource, map[string]int{"cli:prime": 1}) }},
		{"priming usefulness", func(r *telemetry.Recorder) { r.PrimingUsefulness("cited") },
			`{"counter":"priming","kind":"usefulness","signal":"cited","sessionId":"cli-S","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{PrimingUsefulness: 1},
			func(t *testing.T, s *telemetry.Summary) { want(t, s.UsefulnessBySignal, map[string]int{"cited": 1}) }},
		{"kg_unreachable", func(r *telemetry.Recorder) { r.KGUnreachable() },
			`{"counter":"kg_unreachable","sessionId":"cli-S","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{KGUnreachable: 1}, nil},
		{"frontier_size", func(r *telemetry.Recorder) { r.FrontierSize(7) },
			`{"counter":"frontier_size","size":7,"sessionId":"cli-S","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{FrontierSize: 1},
			func(t *testing.T, s *telemetry.Summary) {
				if s.Frontier.Samples != 1 || s.Frontier.Min != 7 || s.Frontier.Max != 7 || s.Frontier.Last != 7 || s.Frontier.Mean != 7 {
					t.Fatalf("frontier = %+v", s.Frontier)
				}
			}},
		{"redactions", func(r *telemetry.Recorder) { r.Redacted("aws-access-key", 3, "s3") },
			`{"counter":"redactions","pattern":"aws-access-key","count":3,"sessionId":"s3","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{Redactions: 3},
			func(t *testing.T, s *telemetry.Summary) {
				want(t, s.RedactionsByPattern, map[string]int{"aws-access-key": 3})
			}},
		{"work_claims", func(r *telemetry.Recorder) { r.Claimed("01JDQ3Z5E8X9K2M4N6P8R0T1VW") },
			`{"counter":"work_claims","itemId":"01JDQ3Z5E8X9K2M4N6P8R0T1VW","sessionId":"cli-S","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{WorkClaims: 1},
			func(t *testing.T, s *telemetry.Summary) {
				want(t, s.ClaimsByItem, map[string]int{"01JDQ3Z5E8X9K2M4N6P8R0T1VW": 1})
			}},
		{"board_degraded_opens", func(r *telemetry.Recorder) { r.DegradedOpen("refs/ideate/board", "4") },
			`{"counter":"board_degraded_opens","what":"refs/ideate/board","boardVersion":"4","sessionId":"cli-S","at":"2026-08-06T12:00:00.001Z"}`,
			telemetry.Totals{BoardDegradedOpens: 1},
			func(t *testing.T, s *telemetry.Summary) {
				want(t, s.DegradedOpens, map[string]int{"refs/ideate/board (version 4)": 1})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, warns := newRecorder(t, "cli-S")
			if _, err := os.Stat(r.Dir); !os.IsNotExist(err) {
				t.Fatalf("Open created the state directory: %v", err)
			}
			c.emit(r)
			got := lines(t, r)
			if len(got) != 1 || got[0] != c.line {
				t.Fatalf("line:\n got %s\nwant %s", got, c.line)
			}
			if !json.Valid([]byte(got[0])) {
				t.Fatalf("invalid JSON: %s", got[0])
			}
			s, err := telemetry.Read(r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.totals, s.Totals); d != "" {
				t.Fatalf("totals (-want +got):\n%s", d)
			}
			if s.Events != 1 || s.BadLines != 0 || s.FirstAt != "2026-08-06T12:00:00.001Z" || s.LastAt != s.FirstAt {
				t.Fatalf("summary = %+v", s)
			}
			var ev map[string]any
			json.Unmarshal([]byte(got[0]), &ev)
			sess := ev["sessionId"].(string)
			if d := cmp.Diff(map[string]*telemetry.Totals{sess: &c.totals}, s.BySession); d != "" {
				t.Fatalf("by session (-want +got):\n%s", d)
			}
			if c.check != nil {
				c.check(t, s)
			}
			if len(*warns) != 0 {
				t.Fatalf("warnings: %v", *warns)
			}
		})
	}
}

func want(t *testing.T, got, want map[string]int) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("breakdown (-want +got):\n%s", d)
	}
}

func TestRead_MissingFileIsEmpty(t *testing.T) {
	s, err := telemetry.Read(filepath.Join(t.TempDir(), "nope"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Events != 0 || s.BadLines != 0 || s.Totals != (telemetry.Totals{}) {
		t.Fatalf("summary = %+v", s)
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "null") {
		t.Fatalf("empty summary has null maps:\n%s", b.String())
	}
}

func TestRead_StateDirIsAFileIsTyped(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("x"), 0o644)
	if _, err := telemetry.Read(f); err == nil {
		t.Fatal("no error reading under a file")
	}
}

// Lines that are not events are counted and skipped; the rest still fold.
func TestRead_BadLines(t *testing.T) {
	dir := t.TempDir()
	long := `{"counter":"capture_fired","point":"` + strings.Repeat("x", 200_000) + `"}`
	content := strings.Join([]string{
		`{"counter":"capture_fired","point":"a","sessionId":"s","at":"2026-01-01T00:00:00.000Z"}`,
		`not json`,
		`{"counter":"capture_fired","point":"tor`, // a torn line
		`[1,2]`,
		`null`,
		`{"point":"no counter"}`,
		`{"counter":"redactions","pattern":"p"}`, // no count
		`{"counter":"redactions","pattern":"p","count":-1}`, // negative count
		`{"counter":"frontier_size"}`,                       // no size
		`{"counter":"frontier_size","size":"7"}`,            // wrong type
		long,
		``,
		`   `,
		`{"counter":"from_the_future","sessionId":"s"}`,
		`{"counter":"priming","kind":"ignored","sessionId":"s"}`,
		`{"counter":"redactions","pattern":"p","count":2,"sessionId":"s","at":"2025-12-31T00:00:00.000Z"}`,
	}, "\n") + "\n" + `{"counter":"kg_unreachable"}` // no trailing newline
	os.WriteFile(filepath.Join(dir, telemetry.FileName), []byte(content), 0o644)
	s, err := telemetry.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.BadLines != 10 || s.Events != 5 {
		t.Fatalf("bad lines %d, events %d", s.BadLines, s.Events)
	}
	if d := cmp.Diff(telemetry.Totals{CaptureFired: 1, Redactions: 2, KGUnreachable: 1}, s.Totals); d != "" {
		t.Fatalf("totals (-want +got):\n%s", d)
	}
	want(t, s.Other, map[string]int{"from_the_future": 1, "priming.ignored": 1})
	if s.FirstAt != "2025-12-31T00:00:00.000Z" || s.LastAt != "2026-01-01T00:00:00.000Z" {
		t.Fatalf("span %s .. %s", s.FirstAt, s.LastAt)
	}
	if s.BySession["(none)"].KGUnreachable != 1 {
		t.Fatalf("by session: %+v", s.BySession)
	}
}

// Long values are cut so that a line stays far below the atomic-append
// size, and the cut value is still valid UTF-8 inside valid JSON.
func TestRecorder_LongFieldsAreCut(t *testing.T) {
	r, warns := newRecorder(t, strings.Repeat("s", 10_000))
	hostile := strings.Repeat("é\"\\\n\x01\u2028", 3000) + "\xff"
	r.CaptureFailed(hostile, hostile, hostile)
	r.DegradedOpen(hostile, hostile)
	r.Captured("short", "\xffx")
	got := lines(t, r)
	if len(got) != 3 {
		t.Fatalf("%d lines", len(got))
	}
	for _, l := range got[:2] {
		if len(l)+1 > telemetry.MaxLine || len(l) > 2048 {
			t.Fatalf("line of %d bytes", len(l))
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		for k, v := range ev {
			if s, ok := v.(string); ok && k != "counter" && k != "at" {
				if !strings.HasSuffix(s, "…") || !utf8.ValidString(s) || !(strings.HasPrefix(hostile, strings.TrimSuffix(s, "…")) || strings.HasPrefix(r.SessionID, strings.TrimSuffix(s, "…"))) {
					t.Fatalf("%s = %q", k, s)
				}
			}
		}
	}
	var ev map[string]string
	json.Unmarshal([]byte(got[2]), &ev)
	if ev["point"] != "short" || ev["sessionId"] != "\uFFFDx" {
		t.Fatalf("short event: %s", got[2])
	}
	if len(*warns) != 0 {
		t.Fatalf("warnings: %v", *warns)
	}
}

// A value exactly at the limit is kept whole.
func TestRecorder_FieldAtLimitIsWhole(t *testing.T) {
	r, _ := newRecorder(t, "s")
	exact := strings.Repeat("a", telemetry.MaxField)
	r.Captured(exact, "s")
	r.Captured(exact+"b", "s")
	var a, b map[string]string
	got := lines(t, r)
	json.Unmarshal([]byte(got[0]), &a)
	json.Unmarshal([]byte(got[1]), &b)
	if a["point"] != exact {
		t.Fatalf("exact value cut: %d bytes", len(a["point"]))
	}
	if b["point"] != exact[:telemetry.MaxField-len("…")]+"…" {
		t.Fatalf("long value: %q", b["point"])
	}
}

// A failed write neither panics nor reaches the caller: the event is
// dropped and Warn hears of it.
func TestRecorder_WriteFailureIsDropped(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(file, []byte("precious\n"), 0o644)
	for _, dir := range []string{file, filepath.Join(file, "deeper"), ""} {
		r := telemetry.Open(dir, "s")
		var warns []string
		r.Warn = func(msg string) { warns = append(warns, msg) }
		r.Captured("p", "s")
		r.CaptureFailed("p", "s", "r")
		r.Redacted("x", 1, "s")
		r.Claimed("i")
		r.PrimingRequested("cli:prime")
		r.PrimingUsefulness("u")
		r.FrontierSize(1)
		r.KGUnreachable()
		r.DegradedOpen("w", "v")
		if len(warns) != 9 {
			t.Fatalf("dir %q: %d warnings: %v", dir, len(warns), warns)
		}
		r.Warn = nil
		r.Captured("p", "s") // no Warn: silently dropped
	}
	if b, _ := os.ReadFile(file); string(b) != "precious\n" {
		t.Fatalf("file changed: %q", b)
	}
}

// A nil recorder is a valid observer that records nothing.
func TestRecorder_NilIsNoOp(t *testing.T) {
	var r *telemetry.Recorder
	var ro record.Observer = r
	var bo board.Observer = r
	ro.Captured("p", "s")
	ro.CaptureFailed("p", "s", "r")
	ro.Redacted("x", 1, "s")
	bo.Claimed("i")
	r.PrimingRequested("s")
	r.PrimingUsefulness("s")
	r.FrontierSize(1)
	r.KGUnreachable()
	r.DegradedOpen("w", "v")
}

// Goroutines of one process share the file without tearing lines either.
func TestRecorder_ConcurrentGoroutines(t *testing.T) {
	r, warns := newRecorder(t, "g")
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				r.Captured(strings.Repeat("p", 400), "g")
			}
		}()
	}
	wg.Wait()
	got := lines(t, r)
	if len(got) != 1600 {
		t.Fatalf("%d lines", len(got))
	}
	for _, l := range got {
		if !json.Valid([]byte(l)) {
			t.Fatalf("torn line %q", l)
		}
	}
	if len(*warns) != 0 {
		t.Fatalf("warnings: %v", (*warns)[:1])
	}
}

// The report names every counter, work_claims and board_degraded_opens
// included, with the breakdowns and frontier statistics.
func TestReport_Golden(t *testing.T) {
	r, _ := newRecorder(t, "cli-01K0000000000000000000000A")
	r.Captured("post-tool-use", "host-a")
	r.Captured("post-tool-use", "host-a")
	r.Captured("session-end", "host-b")
	r.Captured("", "")
	r.CaptureFailed("post-tool-use", "host-a", "claim is required")
	r.CaptureFailed("cli", "", "")
	r.Redacted("github-pat", 2, "host-a")
	r.Redacted("aws-access-key", 1, "host-b")
	r.Redacted("github-pat", 1, "host-b")
	r.PrimingRequested("cli:prime")
	r.PrimingRequested("cli:prime")
	r.PrimingRequested("hook:session-start")
	r.PrimingUsefulness("cited")
	r.KGUnreachable()
	r.FrontierSize(3)
	r.FrontierSize(12)
	r.FrontierSize(7)
	r.Claimed("01K1AAAAAAAAAAAAAAAAAAAAAA")
	r.Claimed("01K1AAAAAAAAAAAAAAAAAAAAAA")
	r.Claimed("01K1BBBBBBBBBBBBBBBBBBBBBB")
	r.DegradedOpen("refs/ideate/board/items/01K1CCCCCCCCCCCCCCCCCCCCCC", "4")
	r.DegradedOpen("fake\nline", "")
	f, _ := os.OpenFile(r.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("garbage\n{\"counter\":\"from_the_future\"}\n")
	f.Close()

	s, err := telemetry.Read(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	s.File = "<STATE>/telemetry.ndjson"
	var text, js bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt", text.String())
	for _, c := range telemetry.Counters {
		if !strings.Contains(text.String(), c) {
			t.Fatalf("the report does not name %s", c)
		}
	}
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", js.String())
	var back telemetry.Summary
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*s, back, cmpopts.IgnoreUnexported(telemetry.Frontier{})); d != "" {
		t.Fatalf("JSON round trip (-want +got):\n%s", d)
	}
}

func TestReport_Empty(t *testing.T) {
	s, _ := telemetry.Read(t.TempDir())
	s.File = "<STATE>/telemetry.ndjson"
	var b bytes.Buffer
	s.WriteText(&b)
	golden(t, "empty.txt", b.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from the golden file:\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}

// The event file stays open between events; deleting it (it is safe to
// delete) makes the next event open a new one instead of writing into the
// unlinked file.
func TestRecorder_KeepsTheFileOpenAndReopensADeletedOne(t *testing.T) {
	dir := t.TempDir()
	r := telemetry.Open(dir, "s1")
	defer r.Close()
	r.KGUnreachable()
	r.KGUnreachable()
	if err := os.Remove(r.Path()); err != nil {
		t.Fatal(err)
	}
	r.KGUnreachable()
	data, err := os.ReadFile(r.Path())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 1 {
		t.Fatalf("%d lines in the new file, want 1:\n%s", n, data)
	}
}
