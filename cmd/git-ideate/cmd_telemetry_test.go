package main

import (
	"bytes"
	"encoding/json"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/telemetry"
)

func runTelemetry(t *testing.T, dir string, c corecmd.TelemetryCmd) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Dir: dir, Out: &out, Err: &errb}
	defer env.Close()
	err := c.Run(t.Context(), env)
	return out.String(), errb.String(), err
}

// Events from the real record and board stores, wired to Env.Telemetry,
// show up in the report, every counter named.
func TestTelemetry_ReportFromStores(t *testing.T) {
	dir := gt.NewRepo(t)
	var errb bytes.Buffer
	env := &Env{Dir: dir, Out: &errb, Err: &errb}
	defer env.Close()
	rec := env.Telemetry()
	if rec == nil || !regexp.MustCompile(`^cli-[0-7][0-9A-HJKMNP-TV-Z]{25}$`).MatchString(rec.SessionID) {
		t.Fatalf("recorder %+v", rec)
	}
	rs, err := env.Record()
	if err != nil {
		t.Fatal(err)
	}
	rs.Observer = rec
	if _, err := rs.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "key AKIA" + strings.Repeat("Q7", 8) + " leaked",
		Source: record.Source{CapturePoint: "cli", SessionID: "s1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Append(t.Context(), record.AppendInput{Kind: "", Claim: "x", Source: record.Source{CapturePoint: "cli"}}); err == nil {
		t.Fatal("an append without a kind succeeded")
	}
	b, err := env.Board()
	if err != nil {
		t.Fatal(err)
	}
	b.Observer = rec
	o, err := b.Create(t.Context(), board.CreateInput{Title: "t", Spec: "s", SpecFormat: "markdown", CreatedBy: board.Actor{Human: "h"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(t.Context(), o.Item.ID, board.Actor{Human: "h"}, nil); err != nil {
		t.Fatal(err)
	}
	rec.PrimingRequested("cli:prime")
	rec.DegradedOpen("refs/ideate/board", "4")
	if errb.Len() != 0 {
		t.Fatalf("stderr: %s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "ideate", telemetry.FileName)); err != nil {
		t.Fatalf("the events are not in .git/ideate: %v", err)
	}

	out, stderr, err := runTelemetry(t, dir, corecmd.TelemetryCmd{})
	if err != nil || stderr != "" {
		t.Fatalf("%v %s", err, stderr)
	}
	for _, want := range []string{
		"  capture_fired                1\n", "  capture_write_failed         1\n", "  priming.requested            1\n",
		"  priming.usefulness           0\n", "  kg_unreachable               0\n", "  frontier_size (samples)      0\n",
		"  redactions                   1\n", "  work_claims                  1\n", "  board_degraded_opens         1\n",
		"aws-access-key-id", o.Item.ID, "kind is required", rec.SessionID,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("report lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runTelemetry(t, filepath.Join(dir), corecmd.TelemetryCmd{JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var s telemetry.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := telemetry.Totals{CaptureFired: 1, CaptureWriteFailed: 1, PrimingRequested: 1, Redactions: 1, WorkClaims: 1, BoardDegradedOpens: 1}
	if s.Totals != want || s.Events != 6 || s.ClaimsByItem[o.Item.ID] != 1 {
		t.Fatalf("summary %+v", s)
	}
}

// A fresh clone has no events: an empty report, and nothing created.
func TestTelemetry_Empty(t *testing.T) {
	dir := gt.NewRepo(t)
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o755)
	out, stderr, err := runTelemetry(t, sub, corecmd.TelemetryCmd{})
	if err != nil || stderr != "" {
		t.Fatalf("%v %s", err, stderr)
	}
	if !strings.Contains(out, "events: 0\n") || !strings.Contains(out, "  work_claims                  0\n") ||
		!strings.Contains(out, filepath.Join(dir, ".git", "ideate", telemetry.FileName)) {
		t.Fatalf("report:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "ideate", telemetry.FileName)); !os.IsNotExist(err) {
		t.Fatalf("the report created the event file: %v", err)
	}
}

func TestTelemetry_Dir(t *testing.T) {
	dir := gt.NewRepo(t)
	state := filepath.Join(dir, "elsewhere")
	r := telemetry.Open(state, "s")
	r.KGUnreachable()
	r.FrontierSize(4)
	f, _ := os.OpenFile(r.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("torn {\n")
	f.Close()

	out, stderr, err := runTelemetry(t, dir, corecmd.TelemetryCmd{Dir: "elsewhere"}) // relative to Env.Dir
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "  kg_unreachable               1\n") || !strings.Contains(out, "min 4, max 4, mean 4.00, last 4") {
		t.Fatalf("report:\n%s", out)
	}
	if !strings.Contains(stderr, "skipped 1 unparseable line(s)") {
		t.Fatalf("stderr %q", stderr)
	}

	// --dir works outside a repository, too.
	gt.Isolate(t)
	outside := t.TempDir()
	if _, _, err := runTelemetry(t, outside, corecmd.TelemetryCmd{Dir: state}); err != nil {
		t.Fatal(err)
	}

	// Bad arguments are typed errors (exit 1 in the CLI).
	for _, d := range []string{filepath.Join(dir, "missing"), r.Path()} {
		if _, _, err := runTelemetry(t, dir, corecmd.TelemetryCmd{Dir: d}); apperr.CodeOf(err) != apperr.Schema || !strings.Contains(err.Error(), "--dir") {
			t.Fatalf("--dir %s: %v", d, err)
		}
	}
}

func TestTelemetry_NotARepository(t *testing.T) {
	gt.Isolate(t)
	outside := t.TempDir()
	if _, _, err := runTelemetry(t, outside, corecmd.TelemetryCmd{}); apperr.CodeOf(err) != apperr.NotARepo {
		t.Fatalf("got %v", err)
	}
	env := &Env{Dir: outside, Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	if r := env.Telemetry(); r != nil {
		t.Fatalf("recorder outside a repository: %+v", r)
	}
}

// A recorder whose state directory cannot be created warns once and never
// fails the command it observes.
func TestTelemetry_WriteFailureWarnsOnce(t *testing.T) {
	dir := gt.NewRepo(t)
	os.WriteFile(filepath.Join(dir, ".git", "ideate"), []byte("in the way"), 0o644)
	var errb bytes.Buffer
	env := &Env{Dir: dir, Out: &bytes.Buffer{}, Err: &errb}
	defer env.Close()
	r := env.Telemetry()
	r.Captured("cli", "")
	r.Claimed("x")
	if n := strings.Count(errb.String(), "warning: telemetry: dropped"); n != 1 {
		t.Fatalf("%d warnings:\n%s", n, errb.String())
	}
}

// The command's flags parse with kong the way the CLI will declare it.
func TestTelemetry_Flags(t *testing.T) {
	var cli struct {
		Telemetry corecmd.TelemetryCmd `cmd:""`
	}
	parser, err := kong.New(&cli, kong.Name("git ideate"), kong.Exit(func(int) { t.Fatal("exit") }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"telemetry", "--json", "--dir", "some/where"}); err != nil {
		t.Fatal(err)
	}
	if !cli.Telemetry.JSON || cli.Telemetry.Dir != "some/where" {
		t.Fatalf("%+v", cli.Telemetry)
	}
	if _, err := parser.Parse([]string{"telemetry", "--bogus"}); err == nil {
		t.Fatal("an unknown flag parsed")
	}
}
