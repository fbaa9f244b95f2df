package gates_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m, gateChild) }

// gateChild judges GATE_TASK with GATE_NAME in the repository GATE_DIR
// and prints the verdict's result.
func gateChild(role string) int {
	dir := os.Getenv("GATE_DIR")
	g, err := gitstore.Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer g.Close()
	reg, log, _, err := buildGates(g, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	v, err := gates.Judge(context.Background(), reg, log, gates.Name(os.Getenv("GATE_NAME")), gates.Input{Task: os.Getenv("GATE_TASK")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(v.Result, v.Commit)
	return 0
}

// fakeRunner is a runner that takes no compiler: a shell script printing
// go test -json events for TestReverse_ASCII, failing by assertion while
// strutil/reverse.go holds a shim. GATE_TRACE, when set, gets a line when
// a run starts and ends; GATE_SLEEP seconds pass in between.
const fakeRunner = `
## Test runners

### go

- Extensions: ` + "`.go`" + `
- Test files: ` + "`**/*_test.go`" + `
- Run: ` + "`sh run.sh {packages}`" + `
- Format: ` + "`go-test-json`" + `
`

const fakeScript = `#!/bin/sh
[ -n "$GATE_TRACE" ] && echo "start $$" >> "$GATE_TRACE"
[ -n "$GATE_PIDS" ] && echo $$ >> "$GATE_PIDS"
if [ -n "$GATE_SLEEP" ]; then
	sleep "$GATE_SLEEP" &
	[ -n "$GATE_PIDS" ] && echo $! >> "$GATE_PIDS"
	wait
fi
act=pass
grep -q shim strutil/reverse.go 2>/dev/null && act=fail
[ -n "$IDEATE_MUTANT" ] && act=fail
p=example.com/m/strutil
echo '{"Action":"run","Package":"'$p'","Test":"TestReverse_ASCII"}'
[ $act = fail ] && echo '{"Action":"output","Package":"'$p'","Test":"TestReverse_ASCII","Output":"    reverse_test.go:6: Reverse(abc) = abc, want cba\n"}'
echo '{"Action":"'$act'","Package":"'$p'","Test":"TestReverse_ASCII","Elapsed":0}'
echo '{"Action":"'$act'","Package":"'$p'","Elapsed":0}'
[ -n "$GATE_TRACE" ] && echo "end $$" >> "$GATE_TRACE"
exit 0
`

func newFakeFixture(t *testing.T) *fixture { return newFakeFixtureTB(t) }

func newFakeFixtureTB(t testing.TB) *fixture {
	return newFixture(t, fakeRunner, map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n", "run.sh": fakeScript,
		"strutil/upper.go": goBase["strutil/upper.go"]})
}

func verdicts(t *testing.T, f *fixture, task string) []execlog.Entry {
	t.Helper()
	es, err := execlog.Open(f.g).List(ctx, execlog.Filter{Task: task, Event: execlog.EventVerdict})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// A gate killed with SIGKILL while it judges leaves no verdict; the next
// one judges (the kernel dropped the lock) and stores its own.
func TestJudge_Kill9LeavesNoVerdict(t *testing.T) {
	f := newFakeFixture(t)
	wt := f.start(t, "S1-01/T1", declared)
	commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	trace := filepath.Join(t.TempDir(), "trace")
	p := proctest.Start(t, proctest.Spec{Role: "gate", Env: []string{"GATE_DIR=" + f.dir, "GATE_TASK=S1-01/T1", "GATE_NAME=red",
		"GATE_TRACE=" + trace, "GATE_SLEEP=3", gates.WritableEnv + "=" + filepath.Dir(trace)}})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if b, _ := os.ReadFile(trace); strings.Contains(string(b), "start") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gate's run never started: %s", p.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !p.Kill() {
		t.Fatalf("the gate ended before the kill: %s %s", p.Output(), p.Stderr())
	}
	if es := verdicts(t, f, "S1-01/T1"); len(es) != 0 {
		t.Fatalf("a killed gate stored %d verdict(s): %+v", len(es), es)
	}
	v := f.judge(t, "red", "S1-01/T1")
	want(t, v, gates.PASS, "")
	if es := verdicts(t, f, "S1-01/T1"); len(es) != 1 || es[0].Result != "PASS" || es[0].Commit != v.Commit {
		t.Fatalf("after the kill: %+v", es)
	}
}

// A gate killed with SIGKILL while its tests run takes them with it: the
// runner and what the runner started (here a sleep) are gone soon after.
func TestJudge_Kill9KillsTheTestProcesses(t *testing.T) {
	f := newFakeFixture(t)
	wt := f.start(t, "S1-01/T1", declared)
	commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	pids := filepath.Join(t.TempDir(), "pids")
	p := proctest.Start(t, proctest.Spec{Role: "gate", Env: []string{"GATE_DIR=" + f.dir, "GATE_TASK=S1-01/T1", "GATE_NAME=red",
		"GATE_PIDS=" + pids, "GATE_SLEEP=120", gates.WritableEnv + "=" + filepath.Dir(pids)}})
	var procs []int
	deadline := time.Now().Add(2 * time.Minute)
	for len(procs) < 2 {
		procs = procs[:0]
		b, _ := os.ReadFile(pids)
		for _, w := range strings.Fields(string(b)) {
			var n int
			fmt.Sscan(w, &n)
			procs = append(procs, n)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gate's run never started: %s", p.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !p.Kill() {
		t.Fatalf("the gate ended before the kill: %s %s", p.Output(), p.Stderr())
	}
	deadline = time.Now().Add(10 * time.Second)
	for _, pid := range procs {
		for !osproc.Gone(pid) && !zombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("test process %d outlived its killed gate", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// zombie reports whether pid is a dead process no one has reaped yet.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// Two gates on one task at once take turns: their runs do not overlap, and
// the log holds the verdict once (the second repeats the first).
func TestJudge_TwoGatesAtOnceTakeTurns(t *testing.T) {
	f := newFakeFixture(t)
	wt := f.start(t, "S1-01/T1", declared)
	head := commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	trace := filepath.Join(t.TempDir(), "trace")
	b := proctest.NewBarrier(t)
	var ps []*proctest.Proc
	for i := 0; i < 2; i++ {
		ps = append(ps, proctest.Start(t, proctest.Spec{Role: "gate", Barrier: b, Env: []string{"GATE_DIR=" + f.dir, "GATE_TASK=S1-01/T1",
			"GATE_NAME=red", "GATE_TRACE=" + trace, "GATE_SLEEP=1", gates.WritableEnv + "=" + filepath.Dir(trace)}}))
	}
	b.Release(t)
	for _, p := range ps {
		if out := p.Wait(t); len(out) != 1 || out[0] != "PASS "+head {
			t.Errorf("gate printed %q", out)
		}
	}
	tr, _ := os.ReadFile(trace)
	lines := strings.Fields(string(tr))
	// Each gate runs the task's tests once, and the first also at the
	// base: pairs of start and end of one pid, never interleaved.
	if len(lines)%4 != 0 || len(lines) < 12 {
		t.Fatalf("trace %q", tr)
	}
	for i := 0; i < len(lines); i += 4 {
		if lines[i] != "start" || lines[i+2] != "end" || lines[i+1] != lines[i+3] {
			t.Fatalf("runs overlap: %q", tr)
		}
	}
	// The second verdict says what the first said about the same commit:
	// the log keeps the first only (execLog.Append stores no repetition).
	es := verdicts(t, f, "S1-01/T1")
	if len(es) != 1 || es[0].Result != "PASS" || es[0].Commit != head {
		t.Fatalf("verdicts %+v", es)
	}
	runs, _ := f.m.Runs("S1-01/T1")
	bases := 0
	for _, r := range runs {
		if r.Label == "base" {
			bases++
		}
	}
	if bases != 1 {
		t.Errorf("%d base runs, want 1", bases)
	}
}

// After a stored GREEN PASS, Judge ticks the task's plan-ready boxes
// through reg.Tick; RED's PASS ticks nothing.
func TestJudge_GreenPassTicksPlanReady(t *testing.T) {
	f := newFakeFixture(t)
	ready := filepath.Join(f.dir, "docs", "agents", "sprint1", "s1-01-rune-helpers", "plan-ready.md")
	writeFiles(t, f.dir, map[string]string{"docs/agents/sprint1/s1-01-rune-helpers/plan-ready.md": "---\ntype: plan-ready\nstory: S1-01\n---\n\n# S1-01 plan-ready\n\n## T1 — Reverse\n- [ ] `" + declared + "` — FAIL: Reverse(\"abc\") = \"abc\"\n"})
	pd := gates.PlanDeps{Git: f.g, Tasks: f.m, Exec: execlog.Open(f.g), Root: f.dir,
		Plan: func(ctx context.Context) (*plan.Sprint, error) {
			return plan.Load(ctx, os.DirFS(f.dir), plan.Options{Root: plan.DefaultRoot})
		}}
	f.reg.Tick = func(ctx context.Context, task string) (string, error) {
		r, err := gates.Tick(ctx, pd, task)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("ticked %d", len(r.Ticked)), nil
	}
	wt := f.start(t, "S1-01/T1", declared)
	commit(t, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	if v := f.judge(t, "red", "S1-01/T1"); v.Result != gates.PASS || len(v.Notes) != 0 {
		t.Fatalf("red: %+v", v)
	}
	if b, _ := os.ReadFile(ready); !strings.Contains(string(b), "- [ ] `") {
		t.Fatalf("RED ticked a box:\n%s", b)
	}
	commit(t, wt, "green", map[string]string{"strutil/reverse.go": reverseImpl})
	v := f.judge(t, "green", "S1-01/T1")
	if v.Result != gates.PASS || len(v.Notes) != 1 || v.Notes[0] != "ticked 1" {
		t.Fatalf("green: %+v", v)
	}
	if b, _ := os.ReadFile(ready); !strings.Contains(string(b), "- [x] `"+declared) {
		t.Fatalf("the box is not ticked:\n%s", b)
	}
}
