package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/revision"
)

// planHarness serves a repository holding the example plan set.
func planHarness(t *testing.T) *harness {
	dir := gt.NewRepo(t)
	if err := plantest.CopyExample(dir); err != nil {
		t.Fatal(err)
	}
	return start(t, dir, func() (*mcpserver.Backend, error) {
		g, err := gitstore.Open(dir)
		if err != nil {
			return nil, err
		}
		rec := record.Open(g)
		return &mcpserver.Backend{Record: rec, Board: board.Open(g, rec), Session: "mcp-test", Git: g, Exec: execlog.Open(g),
			Plan: func(ctx context.Context, n int) (*plan.Sprint, error) {
				return plan.LoadDir(ctx, dir, plan.Options{Sprint: n})
			}}, nil
	})
}

func TestServer_PlanTools(t *testing.T) {
	h := planHarness(t)
	c := h.ok("plan_check", map[string]any{})
	if c["verdict"] != "PASS" || c["sprint"] != float64(1) || len(c["findings"].([]any)) != 0 || c["tree"] == "" || c["stored"] == nil {
		t.Fatalf("plan_check: %v", c)
	}
	// The same plan checked again: the stored verdict stands, nothing new.
	if again := h.ok("plan_check", map[string]any{}); again["stored"] != c["stored"] {
		t.Fatalf("second check stored anew: %v then %v", c["stored"], again["stored"])
	}
	sh := h.ok("plan_show", map[string]any{})
	units := sh["units"].([]any)
	if sh["tree"] != c["tree"] || len(units) != 3 || sh["truncated"] != false {
		t.Fatalf("plan_show: %v", sh)
	}
	last := units[2].(map[string]any)
	if last["ref"] != "S1-02/T1" || last["wave"] != float64(2) || len(last["after"].([]any)) != 2 || len(last["tests"].([]any)) != 3 || last["title"] == "" {
		t.Fatalf("plan_show unit: %v", last)
	}
	log := h.ok("exec_log", map[string]any{"phase": "plan"})
	es := log["entries"].([]any)
	if len(es) != 1 || es[0].(map[string]any)["result"] != "PASS" || es[0].(map[string]any)["id"] != c["stored"] || log["truncated"] != false {
		t.Fatalf("exec_log after the check: %v", log)
	}
	if none := h.ok("exec_log", map[string]any{"result": "FAIL"}); len(none["entries"].([]any)) != 0 {
		t.Fatalf("exec_log FAIL filter: %v", none)
	}
	h.fails("plan_import", map[string]any{}, "schema-validation") // actor_human is required
	im := h.ok("plan_import", map[string]any{"actor_human": "sup"})
	if im["created"] != float64(5) || len(im["items"].([]any)) != 5 {
		t.Fatalf("plan_import: %v", im)
	}
	if again := h.ok("plan_import", map[string]any{"actor_human": "sup"}); again["unchanged"] != float64(5) {
		t.Fatalf("re-import: %v", again)
	}
	var claimable []string
	for _, it := range h.ok("work_list", map[string]any{})["items"].([]any) {
		row := it.(map[string]any)
		if row["claimable"] == true {
			claimable = append(claimable, strings.SplitN(row["title"].(string), " ", 2)[0])
		}
	}
	sort.Strings(claimable) // the import's order of creation is not the point
	if strings.Join(claimable, ",") != "S1-01/T1,S1-01/T2" {
		t.Fatalf("claimable after import: %v", claimable)
	}
	// A plan that fails its check: plan_check says FAIL, plan_import is refused.
	p := filepath.Join(h.dir, "docs/agents/sprint1/stories.md")
	raw, _ := os.ReadFile(p)
	bad := strings.Replace(string(raw), "**Connections", "**Links", 1)
	if bad == string(raw) {
		t.Fatal("fixture changed")
	}
	os.WriteFile(p, []byte(bad), 0o644)
	if c := h.ok("plan_check", map[string]any{"sprint": 1}); c["verdict"] != "FAIL" || c["errors"].(float64) < 1 || c["stored"] == nil {
		t.Fatalf("plan_check of a failing plan: %v", c)
	}
	h.fails("plan_import", map[string]any{"actor_human": "sup"}, "GATE_FAIL")
	h.fails("plan_check", map[string]any{"sprint": 7}, "NOT_FOUND")
	// limit is clamped as the other reads' is, and a cursor pages on.
	first := h.ok("exec_log", map[string]any{"limit": 0})
	if len(first["entries"].([]any)) != 1 || first["next_cursor"] == nil {
		t.Fatalf("exec_log limit 0 (clamped to 1): %v", first)
	}
	second := h.ok("exec_log", map[string]any{"limit": 0, "cursor": first["next_cursor"]})
	e1, e2 := first["entries"].([]any)[0].(map[string]any), second["entries"].([]any)
	if len(e2) != 1 || e2[0].(map[string]any)["id"] == e1["id"] || second["next_cursor"] != nil {
		t.Fatalf("exec_log second page: %v after %v", second, first)
	}
	h.fails("exec_log", map[string]any{"cursor": first["next_cursor"], "phase": "red"}, "CURSOR_MISMATCH")
	if big := h.ok("exec_log", map[string]any{"limit": 100000}); len(big["entries"].([]any)) != 2 {
		t.Fatalf("exec_log limit 100000 (clamped to 500): %v", big)
	}
}

func TestServer_TestClassify(t *testing.T) {
	h := newHarness(t)
	out := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: got 1, want 2\n"}
{"Action":"fail","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Test":"TestB","Elapsed":0}
{"Action":"fail","Package":"p","Elapsed":0}
`
	r := h.ok("test_classify", map[string]any{"output": out, "format": "go-test-json", "declared": []string{"p::TestA", "p::TestB", "p::TestC"}})
	got := map[string]string{}
	for _, x := range r["tests"].([]any) {
		m := x.(map[string]any)
		got[m["id"].(string)] = m["outcome"].(string)
	}
	if got["p::TestA"] != "FAIL_ASSERT" || got["p::TestB"] != "PASS" || got["p::TestC"] != "NOT_RUN" {
		t.Fatalf("outcomes %v (%v)", got, r)
	}
	h.fails("test_classify", map[string]any{"output": "<<not xml", "format": "junit-xml", "dialect": "pytest"}, "UNVERIFIABLE")
	h.fails("test_classify", map[string]any{"output": "x", "format": "tap"}, "schema-validation")
}

// escalations lists what the revision loop logged, newest first, with
// its class and evidence; bad limits are SCHEMA.
func TestServer_Escalations(t *testing.T) {
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x := execlog.Open(g)
	for _, class := range []string{"isolated", "foundation-poisoning"} {
		if _, err := x.Append(context.Background(), execlog.Entry{Task: "S1-01/T1", Attempt: 3, Phase: revision.Phase, Event: class, Detail: "S1-01/T1: " + class,
			Reasons: []execlog.Reason{{Class: "decision", Detail: "continue"}, {Class: "dependents", Detail: "S1-02/T1 S1-03/T1"}}}); err != nil {
			t.Fatal(err)
		}
	}
	h := start(t, dir, func() (*mcpserver.Backend, error) {
		g, err := gitstore.Open(dir)
		if err != nil {
			return nil, err
		}
		rec := record.Open(g)
		return &mcpserver.Backend{Record: rec, Board: board.Open(g, rec), Session: "mcp-test", Git: g,
			Revision: func(int) (revision.Deps, error) { return revision.Deps{Exec: execlog.Open(g)}, nil }}, nil
	})
	out := h.ok("escalations", map[string]any{})
	es := out["escalations"].([]any)
	if len(es) != 2 || es[0].(map[string]any)["class"] != "foundation-poisoning" || len(es[1].(map[string]any)["dependents"].([]any)) != 2 {
		t.Fatalf("escalations: %v", out)
	}
	if one := h.ok("escalations", map[string]any{"limit": 1}); len(one["escalations"].([]any)) != 1 {
		t.Fatalf("limit 1: %v", one)
	}
	if one := h.ok("escalations", map[string]any{"limit": 0}); len(one["escalations"].([]any)) != 1 {
		t.Fatalf("limit 0 (clamped to 1): %v", one)
	}
}
