package telemetry_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/telemetry"
)

// TestMain lets the test binary act as a writer process, so the race below
// is between real OS processes appending to one file.
func TestMain(m *testing.M) { proctest.Main(m, writerMain) }

// writerMain writes TELEMETRY_TEST_N
// events cycling through every counter, with values long enough that a
// torn write would show.
func writerMain(role string) int {
	if role != "writer" {
		fmt.Fprintln(os.Stderr, "unknown role", role)
		return 2
	}
	dir, session := os.Getenv("TELEMETRY_TEST_DIR"), os.Getenv("TELEMETRY_TEST_SESSION")
	n, _ := strconv.Atoi(os.Getenv("TELEMETRY_TEST_N"))
	r := telemetry.Open(dir, session)
	failed := false
	r.Warn = func(msg string) { fmt.Fprintln(os.Stderr, msg); failed = true }
	pad := strings.Repeat(session, 1+len(session)%3*60) // 10..1500 bytes, cut at 512
	for i := 0; i < n; i++ {
		switch i % 9 {
		case 0:
			r.Captured(pad, session)
		case 1:
			r.CaptureFailed("cli", session, pad)
		case 2:
			r.Redacted("p-"+session, 2, session)
		case 3:
			r.Claimed(fmt.Sprintf("%s-%d", session, i))
		case 4:
			r.PrimingRequested("cli:prime")
		case 5:
			r.PrimingUsefulness(pad)
		case 6:
			r.FrontierSize(i)
		case 7:
			r.KGUnreachable()
		case 8:
			r.DegradedOpen(pad, "4")
		}
	}
	if failed {
		return 1
	}
	return 0
}

// 8 processes × 500 events into one file: exactly 4000 lines, each a
// valid JSON event, each process's events all there.
func TestProcesses_NoTornLines(t *testing.T) {
	const procs, each = 8, 500
	dir := filepath.Join(t.TempDir(), "ideate") // created by the racers
	bar := proctest.NewBarrier(t)
	var ps []*proctest.Proc
	for p := 0; p < procs; p++ {
		ps = append(ps, proctest.Start(t, proctest.Spec{Role: "writer", Barrier: bar, Env: []string{"TELEMETRY_TEST_DIR=" + dir,
			fmt.Sprintf("TELEMETRY_TEST_SESSION=proc%d", p), fmt.Sprintf("TELEMETRY_TEST_N=%d", each)}}))
	}
	bar.Release(t)
	for _, p := range ps {
		p.Wait(t)
	}

	b, err := os.ReadFile(filepath.Join(dir, telemetry.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "\n") {
		t.Fatal("file does not end with a newline")
	}
	all := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(all) != procs*each {
		t.Fatalf("%d lines, want %d", len(all), procs*each)
	}
	perSession := map[string]int{}
	for i, l := range all {
		var ev struct {
			Counter   string `json:"counter"`
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Counter == "" {
			t.Fatalf("line %d is not an event (%v): %q", i+1, err, l)
		}
		perSession[ev.SessionID]++
	}
	for p := 0; p < procs; p++ {
		if n := perSession[fmt.Sprintf("proc%d", p)]; n != each {
			t.Fatalf("proc%d: %d events, want %d", p, n, each)
		}
	}

	s, err := telemetry.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Events != procs*each || s.BadLines != 0 {
		t.Fatalf("events %d, bad lines %d", s.Events, s.BadLines)
	}
	tot := s.Totals
	sum := tot.CaptureFired + tot.CaptureWriteFailed + tot.Redactions/2 + tot.WorkClaims + tot.PrimingRequested +
		tot.PrimingUsefulness + tot.FrontierSize + tot.KGUnreachable + tot.BoardDegradedOpens
	if sum != procs*each || len(s.ClaimsByItem) != tot.WorkClaims {
		t.Fatalf("totals %+v", tot)
	}
}
