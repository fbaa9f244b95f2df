package gates_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/record"
)

// planFixture is a repository whose working tree holds the example plan.
func planFixture(t *testing.T) (dir string, log *execlog.Log, rec *record.Store, load func(context.Context) (*plan.Sprint, error)) {
	t.Helper()
	dir = gt.NewRepo(t)
	if err := plantest.CopyExample(dir); err != nil {
		t.Fatal(err)
	}
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	load = func(ctx context.Context) (*plan.Sprint, error) { return plan.LoadDir(ctx, dir, plan.Options{}) }
	return dir, execlog.Open(g), record.Open(g), load
}

func dispatch(role string) gates.Input {
	return gates.Input{Point: gates.BeforeTool, Tool: "Agent", Dispatch: role}
}

func TestPlanGate_DispatchWaitsForAStoredPass(t *testing.T) {
	ctx := context.Background()
	dir, log, rec, load := planFixture(t)
	reg := gates.NewRegistry()
	open := func(ctx context.Context, _ gates.Input) (*execlog.Log, *plan.Sprint, error) {
		s, err := load(ctx)
		return log, s, err
	}
	if err := reg.Register(gates.PlanGateName, gates.PlanGate(open)); err != nil {
		t.Fatal(err)
	}
	run := func(in gates.Input) gates.Verdict {
		t.Helper()
		v, err := reg.Run(ctx, gates.PlanGateName, in)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Before any check: an execution role is held back, anything else passes.
	if v := run(dispatch("git-ideate:red-worker")); v.Result != gates.FAIL || v.Reasons[0].Class != "plan_unchecked" {
		t.Fatalf("before a check: %s", v)
	}
	for _, in := range []gates.Input{dispatch("general-purpose"), dispatch("git-ideate:red-worker-extra"), {Point: gates.BeforeTool, Tool: "Bash"}, {Point: gates.AgentStop}} {
		if v := run(in); v.Result != gates.PASS {
			t.Fatalf("%+v: %s", in, v)
		}
	}
	s, _ := load(ctx)
	res, err := gates.PlanCheck(ctx, log, rec, s, "sup")
	if err != nil || res.Verdict.Result != gates.PASS || !res.New {
		t.Fatalf("check: %+v %v", res, err)
	}
	for _, role := range []string{"git-ideate:red-worker", "git-ideate:green-worker", "scaffolder"} {
		if v := run(dispatch(role)); v.Result != gates.PASS {
			t.Fatalf("%s after a PASS: %s", role, v)
		}
	}
	// Checking the unchanged plan again stores nothing new.
	again, err := gates.PlanCheck(ctx, log, rec, s, "sup")
	if err != nil || again.New || again.Stored.ID != res.Stored.ID {
		t.Fatalf("re-check: %+v %v", again, err)
	}
	// An edit voids the PASS.
	p := filepath.Join(dir, "docs/agents/sprint1/stories.md")
	raw, _ := os.ReadFile(p)
	os.WriteFile(p, append(raw, []byte("\nAn edit after the check.\n")...), 0o644)
	if v := run(dispatch("git-ideate:red-worker")); v.Result != gates.FAIL || v.Reasons[0].Class != "plan_unchecked" {
		t.Fatalf("after an edit: %s", v)
	}
	// A failing plan's check is stored as FAIL and holds dispatches back.
	os.WriteFile(p, []byte(strings.Replace(string(raw), "**Connections", "**Links", 1)), 0o644)
	s, _ = load(ctx)
	bad, err := gates.PlanCheck(ctx, log, nil, s, "sup")
	if err != nil || bad.Verdict.Result != gates.FAIL || len(bad.Verdict.Reasons) == 0 || !strings.Contains(bad.Verdict.Reasons[0].Paths[0], "stories.md:") {
		t.Fatalf("failing check: %+v %v", bad, err)
	}
	if v := run(dispatch("git-ideate:green-worker")); v.Result != gates.FAIL || v.Reasons[0].Class != "plan_failed" {
		t.Fatalf("after a FAIL: %s", v)
	}
	// Back to the checked plan: its PASS stands again.
	os.WriteFile(p, raw, 0o644)
	if v := run(dispatch("git-ideate:red-worker")); v.Result != gates.PASS {
		t.Fatalf("restored plan: %s", v)
	}
	// An unreadable plan: could not judge, never a pass.
	os.RemoveAll(filepath.Join(dir, "docs"))
	if v := run(dispatch("git-ideate:red-worker")); v.Result != gates.UNVERIFIABLE {
		t.Fatalf("no plan: %s", v)
	}
	// The verdicts are on the log; the PASS (stored with a record store)
	// is also a plan-check record.
	es, _ := log.List(ctx, execlog.Filter{Phase: gates.PhasePlan})
	if len(es) != 2 || es[0].Result != "FAIL" || es[1].Result != "PASS" || es[1].Tree == es[0].Tree {
		t.Fatalf("exec entries %+v", es)
	}
	if n := strings.Count(gt.Git(t, dir, "log", "--format=%s", "refs/ideate/record"), "plan-check"); n != 1 {
		t.Fatalf("%d plan-check records, want 1:\n%s", n, gt.Git(t, dir, "log", "--format=%s", "refs/ideate/record"))
	}
	gt.Fsck(t, dir)
}
