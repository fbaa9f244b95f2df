package retro_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/retro"
)

func failVerdict(id, at, task, phase, class string, paths []string, tests ...string) execlog.Entry {
	e := execlog.Entry{ID: id, At: at, Task: task, Phase: phase, Event: execlog.EventVerdict, Result: execlog.FAIL,
		Reasons: []execlog.Reason{{Class: class, Detail: "d", Paths: paths}}}
	for _, t := range tests {
		e.Tests = append(e.Tests, execlog.TestResult{ID: t, Outcome: "FAIL_ASSERT"})
	}
	return e
}

func at(min int) string { return fmt.Sprintf("2026-11-30T10:%02d:00.000Z", min) }

// A synthetic trail: the same assertion failing in two tasks, the same
// out-of-scope path (on different lines) twice, an escalation twice;
// one-offs stay out of the recurring list; the order of the input does
// not change the report.
func TestGroup_RecurringFirstOneOffsApart(t *testing.T) {
	es := []execlog.Entry{
		failVerdict("E01", at(1), "S1-01/T1", "green", "test_failed", nil, "p/a_test.go::TestParse"),
		failVerdict("E02", at(2), "S1-02/T1", "green", "test_failed", nil, "p/a_test.go::TestParse", "p/a_test.go::TestOther"),
		failVerdict("E03", at(3), "S1-01/T2", "green", "out_of_scope", []string{"cmd/main.go:12"}),
		failVerdict("E04", at(4), "S1-02/T2", "green", "out_of_scope", []string{"cmd/main.go:40"}),
		failVerdict("E05", at(5), "S1-03/T1", "red", "not_red", []string{"q/q_test.go"}),
		{ID: "E06", At: at(6), Task: "S1-01/T1", Phase: "green", Event: execlog.EventVerdict, Result: execlog.PASS},
		{ID: "E07", At: at(7), Task: "S1-01/T1", Phase: "escalate", Event: "isolated"},
		{ID: "E08", At: at(8), Task: "S1-04/T1", Phase: "escalate", Event: "isolated"},
		{ID: "E09", At: at(9), Task: "S1-04/T1", Phase: "green", Event: execlog.EventVerdict, Result: execlog.UNVERIFIABLE,
			Reasons: []execlog.Reason{{Class: "unknown_format"}}},
		{ID: "E10", At: at(10), Task: "S1-01/T1", Phase: "scaffold", Event: "create", Paths: []string{"p/p.go"}},
	}
	rep := retro.Group(retro.FromExec(es))
	got := func(ps []retro.Pattern) string {
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "%d %s/%s/%s/%s %v %v\n", p.Count, p.Kind, p.Phase, p.Class, p.Subject, p.Tasks, p.Evidence)
		}
		return b.String()
	}
	wantRecurring := "2 escalation/escalate/isolated/ [S1-01/T1 S1-04/T1] [exec:E07 exec:E08]\n" +
		"2 fail/green/out_of_scope/cmd/main.go [S1-01/T2 S1-02/T2] [exec:E03 exec:E04]\n" +
		"2 fail/green/test_failed/p/a_test.go::TestParse [S1-01/T1 S1-02/T1] [exec:E01 exec:E02]\n"
	if g := got(rep.Recurring); g != wantRecurring {
		t.Errorf("recurring:\n%s\nwant:\n%s", g, wantRecurring)
	}
	wantOnce := "1 fail/green/test_failed/p/a_test.go::TestOther [S1-02/T1] [exec:E02]\n" +
		"1 fail/red/not_red/q/q_test.go [S1-03/T1] [exec:E05]\n" +
		"1 unverifiable/green/unknown_format/ [S1-04/T1] [exec:E09]\n"
	if g := got(rep.OneOffs); g != wantOnce {
		t.Errorf("one-offs:\n%s\nwant:\n%s", g, wantOnce)
	}
	if rep.Counts[retro.KindFail] != 6 || rep.Counts[retro.KindEscalation] != 2 || rep.Events != 9 {
		t.Errorf("counts %v, events %d", rep.Counts, rep.Events)
	}
	want, _ := json.Marshal(rep)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		sh := append([]execlog.Entry(nil), es...)
		r.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		if g, _ := json.Marshal(retro.Group(retro.FromExec(sh))); !bytes.Equal(g, want) {
			t.Fatalf("shuffled input gave another report:\n%s\n%s", g, want)
		}
	}
}

// Load reads a real execution log and record: --since last-planning
// starts after the newest plan PASS, so a failure before it is not in
// the report; sync conflicts come from their records.
func TestLoad_SinceLastPlanning(t *testing.T) {
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	log := execlog.Open(g)
	clock := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	log.Now = func() time.Time { clock = clock.Add(time.Minute); return clock }
	app := func(e execlog.Entry) {
		t.Helper()
		if _, err := log.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	fail := func(task string) execlog.Entry {
		return execlog.Entry{Task: task, Phase: "green", Event: execlog.EventVerdict, Result: execlog.FAIL,
			Reasons: []execlog.Reason{{Class: "test_failed", Detail: "d"}}, Tests: []execlog.TestResult{{ID: "p/a_test.go::TestA", Outcome: "FAIL_ASSERT"}}}
	}
	app(fail("S1-01/T1")) // before the planning: left out
	app(execlog.Entry{Sprint: 2, Phase: "plan", Event: execlog.EventVerdict, Result: execlog.PASS, Detail: "sprint 2 plan"})
	app(fail("S2-01/T1"))
	app(fail("S2-02/T1"))
	// An escalation as revision.Escalate writes it: its fields as reasons.
	app(execlog.Entry{Sprint: 2, Wave: 1, Task: "S2-02/T1", Phase: "escalate", Event: "scope", Reasons: []execlog.Reason{
		{Class: "decision", Detail: "human"}, {Class: "cause", Detail: "attempts"}, {Class: "graph", Detail: "plan"},
		{Class: "verdict", Detail: "green FAIL"}, {Class: "reason_classes", Detail: "out_of_scope"}}})
	rec := record.Open(g)
	for i := 0; i < 2; i++ {
		if _, err := rec.Append(ctx, record.AppendInput{Kind: "sync-conflict", Claim: "Local claim of item 01JD0000000000000000000000 was not accepted by remote origin: taken",
			Scope: "board/01JD0000000000000000000000", VerificationAnchor: "board:01JD0000000000000000000000", Content: "c", Source: record.Source{CapturePoint: "sync"}}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := retro.Load(ctx, retro.Sources{Exec: log, Record: rec}, retro.LastPlanning)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.SinceNote, "since the last planning") || rep.Entries != 5 {
		t.Fatalf("since %q note %q entries %d", rep.Since, rep.SinceNote, rep.Entries)
	}
	if len(rep.Recurring) != 2 || rep.Recurring[0].Kind != retro.KindFail || rep.Recurring[0].Count != 2 ||
		strings.Join(rep.Recurring[0].Tasks, ",") != "S2-01/T1,S2-02/T1" ||
		rep.Recurring[1].Kind != retro.KindSyncConflict || rep.Recurring[1].Class != "claim" || rep.Recurring[1].Subject != "board/01JD0000000000000000000000" {
		t.Fatalf("recurring %+v", rep.Recurring)
	}
	// One pattern per escalation: its class and cause, not one per field.
	if len(rep.OneOffs) != 1 || rep.OneOffs[0].Kind != retro.KindEscalation || rep.OneOffs[0].Class != "scope" || rep.OneOffs[0].Subject != "cause attempts out_of_scope" {
		t.Fatalf("one-offs %+v", rep.OneOffs)
	}
	all, err := retro.Load(ctx, retro.Sources{Exec: log}, "")
	if err != nil || all.Recurring[0].Count != 3 {
		t.Fatalf("whole trail: %+v %v", all.Recurring, err)
	}
	if _, err := retro.Load(ctx, retro.Sources{Exec: log}, "last-sprint"); err == nil {
		t.Fatal("a bad --since was taken")
	}
}

// BenchmarkGroup10k groups 10,000 trail entries (a third failing the
// same few tests, the rest spread), reporting the median run.
//
//	go test ./internal/retro -run '^$' -bench Group10k -benchtime 20x
func BenchmarkGroup10k(b *testing.B) {
	es := synthetic(10000)
	b.ResetTimer()
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rep := retro.Group(retro.FromExec(es))
		ds = append(ds, time.Since(t0))
		if len(rep.Recurring) == 0 {
			b.Fatal("no pattern")
		}
	}
	b.ReportMetric(float64(median(ds).Microseconds())/1000, "median-ms")
}

// BenchmarkLoad10k reads 10,000 entries from a real execution log
// (written with git fast-import, then one Append through the library so
// the tip is ours) and groups them: the `git ideate retro` figure.
//
//	go test ./internal/retro -run '^$' -bench Load10k -benchtime 10x
func BenchmarkLoad10k(b *testing.B) {
	dir := gt.NewRepo(b)
	fillExec(b, dir, synthetic(10000))
	g, err := gitstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	log := execlog.Open(g)
	if _, err := log.Append(b.Context(), execlog.Entry{Phase: "green", Event: "start", Task: "S9-99/T1"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rep, err := retro.Load(b.Context(), retro.Sources{Exec: log}, "")
		ds = append(ds, time.Since(t0))
		if err != nil || rep.Entries != 10001 {
			b.Fatalf("%v, %d entries", err, rep.Entries)
		}
	}
	b.ReportMetric(float64(median(ds).Microseconds())/1000, "median-ms")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func synthetic(n int) []execlog.Entry {
	src := record.NewIDSource()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	es := make([]execlog.Entry, n)
	for i := range es {
		when := t0.Add(time.Duration(i) * time.Second)
		task := fmt.Sprintf("S1-%02d/T%d", i%40, i%3+1)
		switch i % 3 {
		case 0:
			es[i] = failVerdict("", "", task, "green", "test_failed", nil, fmt.Sprintf("p%d/a_test.go::TestCase%d", i%7, i%5))
		case 1:
			es[i] = failVerdict("", "", task, "green", "out_of_scope", []string{fmt.Sprintf("pkg%d/file%d.go:%d", i%50, i%13, i)})
		default:
			es[i] = execlog.Entry{Task: task, Phase: "green", Event: execlog.EventVerdict, Result: execlog.PASS}
		}
		es[i].ID = src.New(when)
		es[i].At = when.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return es
}

// fillExec writes es as the execution log's history with git
// fast-import: one commit per entry, the layout execlog writes (the
// format blob at the root, <ULID[:5]>/<ULID>.json).
func fillExec(b *testing.B, dir string, es []execlog.Entry) {
	// The format blob: what execlog itself writes, from a scratch log.
	scratch := gt.NewRepo(b)
	sg, err := gitstore.Open(scratch)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := execlog.Open(sg).Append(b.Context(), execlog.Entry{Phase: "x", Event: "y"}); err != nil {
		b.Fatal(err)
	}
	sg.Close()
	format := gt.Git(b, scratch, "cat-file", "blob", execlog.Ref+":"+execlog.FormatFile)
	var in bytes.Buffer
	data := func(s []byte) {
		fmt.Fprintf(&in, "data %d\n", len(s))
		in.Write(s)
		in.WriteByte('\n')
	}
	for i, e := range es {
		fmt.Fprintf(&in, "commit %s\ncommitter bench <b@example.com> %d +0000\n", execlog.Ref, 1700000000+i)
		data([]byte("exec entry"))
		if i == 0 {
			in.WriteString("M 100644 inline " + execlog.FormatFile + "\n")
			data([]byte(format + "\n"))
		}
		d, f := execlog.Path(e.ID)
		body, err := execlog.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		in.WriteString("M 100644 inline " + d + "/" + f + "\n")
		data(body)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
}
