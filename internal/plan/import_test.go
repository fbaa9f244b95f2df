package plan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
)

func TestMain(m *testing.M) { proctest.Main(m, importMain) }

// importMain imports the sprint under PLAN_TEST_DIR into its repository
// and prints "OK" or the error's code.
func importMain(role string) int {
	dir := os.Getenv("PLAN_TEST_DIR")
	g, err := gitstore.Open(dir)
	if err != nil {
		fmt.Println("OPEN", err)
		return 1
	}
	defer g.Close()
	s, err := plan.LoadDir(context.Background(), dir, plan.Options{})
	if err != nil {
		fmt.Println("LOAD", err)
		return 1
	}
	_, err = plan.Import(context.Background(), g, board.Open(g, record.Open(g)), s, plan.ImportInput{Actor: board.Actor{Human: role}})
	if err != nil {
		fmt.Println(apperr.CodeOf(err), err)
		return 1
	}
	fmt.Println("OK")
	return 0
}

// importRepo is a repository holding the example plan set.
func importRepo(t *testing.T) (dir string, g *gitstore.Store, b *board.Store) {
	t.Helper()
	gt.Isolate(t)
	dir = copyExample(t)
	gt.Git(t, dir, "init", "-q")
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "plan")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return dir, g, board.Open(g, record.Open(g))
}

func doImport(t *testing.T, dir string, g *gitstore.Store, b *board.Store) *plan.ImportResult {
	t.Helper()
	res, err := plan.Import(context.Background(), g, b, load(t, dir), plan.ImportInput{Actor: board.Actor{Human: "sup"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// boardGraph reads the board back as ref → (status, parent ref, sorted
// dependency refs), through the key lines of the items' specs.
type node struct {
	Status, Parent string
	After          []string
}

func boardGraph(t *testing.T, b *board.Store) map[string]node {
	t.Helper()
	ctx := context.Background()
	limit := 500
	page, err := b.List(ctx, board.ListRequest{Limit: &limit, IncludeSpec: true})
	if err != nil {
		t.Fatal(err)
	}
	refOf := map[string]string{}
	for _, r := range page.Items {
		for _, line := range strings.Split(*r.Spec, "\n") {
			if k, v, ok := strings.Cut(line, ": "); ok && (k == "ideate-task" || k == "ideate-story") {
				if refOf[r.ID] != "" {
					t.Fatalf("item %s has two keys", r.ID)
				}
				refOf[r.ID] = v
			}
		}
	}
	out := map[string]node{}
	for _, r := range page.Items {
		ref := refOf[r.ID]
		if _, dup := out[ref]; dup {
			t.Fatalf("two items for %s", ref)
		}
		n := node{Status: r.Status}
		if r.ParentID != nil {
			n.Parent = refOf[*r.ParentID]
		}
		for _, d := range r.DependsOn {
			n.After = append(n.After, refOf[d])
		}
		sort.Strings(n.After)
		out[ref] = n
	}
	return out
}

func refsState(t *testing.T, dir string) string {
	return gt.Git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/ideate/")
}

func TestImport_BoardEqualsThePlan(t *testing.T) {
	dir, g, b := importRepo(t)
	res := doImport(t, dir, g, b)
	if res.Created != 5 || res.Updated+res.Cancelled+res.Unchanged != 0 {
		t.Fatalf("first import: %+v", res)
	}
	got := boardGraph(t, b)
	// The plan's graph: S1-01/T1 and T2 in wave 1; S1-02/T1 in wave 2
	// waits for both (the wave before it, and S1-01 in Starts when).
	want := map[string]node{
		"S1-01":    {Status: "open"},
		"S1-02":    {Status: "open"},
		"S1-01/T1": {Status: "open", Parent: "S1-01"},
		"S1-01/T2": {Status: "open", Parent: "S1-01"},
		"S1-02/T1": {Status: "open", Parent: "S1-02", After: []string{"S1-01/T1", "S1-01/T2"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("board graph (-want +got):\n%s", d)
	}
	// And it is what plan.Schedule says.
	for _, u := range plan.Schedule(load(t, dir)) {
		if !slices.Equal(u.After, got[u.Ref].After) && len(u.After)+len(got[u.Ref].After) > 0 {
			t.Errorf("%s: schedule says after %v, board %v", u.Ref, u.After, got[u.Ref].After)
		}
	}
	// work ready offers exactly wave 1.
	rows, err := b.Ready(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ready []string
	for _, r := range rows {
		ready = append(ready, strings.SplitN(r.Title, " ", 2)[0])
	}
	sort.Strings(ready)
	if d := cmp.Diff([]string{"S1-01/T1", "S1-01/T2"}, ready); d != "" {
		t.Fatalf("ready (-want +got):\n%s", d)
	}
	// The spec points at the task's section and carries its scope and tests.
	page, _ := b.List(context.Background(), board.ListRequest{IncludeSpec: true})
	for _, r := range page.Items {
		if strings.HasPrefix(r.Title, "S1-01/T1 ") {
			for _, w := range []string{"section: docs/agents/sprint1/s1-01-rune-helpers/tasks.md:", "scope: strutil/reverse.go strutil/reverse_test.go strutil/imports_test.go",
				"strutil/imports_test.go::TestPackage_ImportsStdlibOnly (pass-on-red)", "symbols: strutil.Reverse"} {
				if !strings.Contains(*r.Spec, w) {
					t.Errorf("T1 spec lacks %q:\n%s", w, *r.Spec)
				}
			}
		}
	}
	gt.Fsck(t, dir)
}

func TestImport_ReimportIsANoOp(t *testing.T) {
	dir, g, b := importRepo(t)
	doImport(t, dir, g, b)
	before := refsState(t, dir)
	res := doImport(t, dir, g, b)
	if res.Unchanged != 5 || res.Created+res.Updated+res.Cancelled != 0 {
		t.Fatalf("re-import: %+v", res)
	}
	if after := refsState(t, dir); after != before {
		t.Fatalf("a re-import wrote:\n%s\n---\n%s", before, after)
	}
}

func TestImport_EditUpdatesOnlyWhatChanged(t *testing.T) {
	dir, g, b := importRepo(t)
	doImport(t, dir, g, b)
	before := refsState(t, dir)
	tasks := filepath.Join(dir, sprintDir, "s1-01-rune-helpers", "tasks.md")
	raw, err := os.ReadFile(tasks)
	if err != nil {
		t.Fatal(err)
	}
	// Retitle T2, and make it wait for T1.
	edited := strings.Replace(string(raw), "## T2 — Truncate", "## T2 — Truncate by runes", 1)
	edited = strings.Replace(edited, "Symbols: `strutil.Truncate`\nDepends on: none", "Symbols: `strutil.Truncate`\nDepends on: S1-01/T1", 1)
	if edited == string(raw) || !strings.Contains(edited, "Depends on: S1-01/T1") {
		t.Fatal("the edit did not apply; the example changed")
	}
	if err := os.WriteFile(tasks, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	res := doImport(t, dir, g, b)
	if res.Updated != 1 || res.Created+res.Cancelled != 0 || res.Unchanged != 4 {
		t.Fatalf("after the edit: %+v", res)
	}
	for _, it := range res.Items {
		if it.Action == "updated" && (it.Ref != "S1-01/T2" || !slices.Equal(it.Changed, []string{"title", "depends_on"})) {
			t.Fatalf("updated %+v", it)
		}
	}
	if n := boardGraph(t, b)["S1-01/T2"]; !slices.Equal(n.After, []string{"S1-01/T1"}) {
		t.Fatalf("T2 after the edit: %+v", n)
	}
	// Only T2's ref moved.
	moved := 0
	was := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		was[l] = true
	}
	for _, l := range strings.Split(refsState(t, dir), "\n") {
		if !was[l] {
			moved++
		}
	}
	if moved != 1 {
		t.Fatalf("%d refs moved, want 1", moved)
	}
}

// A generated sprint, imported, then regenerated with one task fewer per
// story: the dropped tasks are cancelled with a reason, the rest untouched.
func TestImport_RemovedTaskIsCancelledWithAReason(t *testing.T) {
	gt.Isolate(t)
	dir := t.TempDir()
	gt.Git(t, dir, "init", "-q")
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "root")
	if err := plantest.Generate(dir, plantest.Shape{Stories: 2, TasksPerStory: 3, TestsPerTask: 1}); err != nil {
		t.Fatal(err)
	}
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b := board.Open(g, record.Open(g))
	first := doImport(t, dir, g, b)
	if first.Created != 2+6 {
		t.Fatalf("first import %+v", first)
	}
	if err := os.RemoveAll(filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	if err := plantest.Generate(dir, plantest.Shape{Stories: 2, TasksPerStory: 2, TestsPerTask: 1}); err != nil {
		t.Fatal(err)
	}
	res := doImport(t, dir, g, b)
	if res.Cancelled != 2 || res.Created != 0 {
		t.Fatalf("after removing T3 of each story: %+v", res)
	}
	gr := boardGraph(t, b)
	for ref, n := range gr {
		if strings.HasSuffix(ref, "/T3") != (n.Status == board.StatusCancelled) {
			t.Errorf("%s is %s", ref, n.Status)
		}
	}
	page, _ := b.List(context.Background(), board.ListRequest{IncludeSpec: true, Filter: board.ListFilter{Status: board.StatusCancelled}})
	for _, r := range page.Items {
		if !strings.Contains(*r.Spec, "removed: no longer in sprint 1's plan") {
			t.Errorf("cancelled %s without a reason:\n%s", r.Title, *r.Spec)
		}
	}
	// A third import changes nothing: cancelled stays cancelled.
	if again := doImport(t, dir, g, b); again.Created+again.Updated+again.Cancelled != 0 {
		t.Fatalf("third import %+v", again)
	}
	gt.Fsck(t, dir)
}

func TestImport_RefusesAFailingPlan(t *testing.T) {
	dir, g, b := importRepo(t)
	stories := filepath.Join(dir, sprintDir, "stories.md")
	raw, _ := os.ReadFile(stories)
	// A story without connections fails the check.
	bad := strings.Replace(string(raw), "**Connections", "**Links", 1)
	if bad == string(raw) {
		t.Fatal("the example has no Connections label")
	}
	if err := os.WriteFile(stories, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	s := load(t, dir)
	if plan.Passed(plan.Check(s)) {
		t.Fatal("the seeded defect did not fail the check")
	}
	before := refsState(t, dir)
	_, err := plan.Import(context.Background(), g, b, s, plan.ImportInput{Actor: board.Actor{Human: "sup"}})
	if apperr.CodeOf(err) != apperr.GateFail {
		t.Fatalf("import of a failing plan: %v", err)
	}
	if refsState(t, dir) != before {
		t.Fatal("a refused import wrote")
	}
}

func TestImport_RacingImportsLeaveOneBoard(t *testing.T) {
	dir, _, _ := importRepo(t)
	bar := proctest.NewBarrier(t)
	var ps []*proctest.Proc
	for i := 0; i < 4; i++ {
		ps = append(ps, proctest.Start(t, proctest.Spec{Role: fmt.Sprintf("sup%d", i), Barrier: bar, Env: []string{"PLAN_TEST_DIR=" + dir}}))
	}
	bar.Release(t)
	for _, p := range ps {
		if out := p.Wait(t); len(out) != 1 || out[0] != "OK" {
			t.Fatalf("import process: %v %s", out, p.Stderr())
		}
	}
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := boardGraph(t, board.Open(g, record.Open(g))); len(got) != 5 {
		t.Fatalf("%d items after four racing imports, want 5: %v", len(got), got)
	}
	gt.Fsck(t, dir)
}

// TestItemID_IsAULIDOfSprintAndRef: the id a plan unit gets is a valid
// ULID, the same for the same sprint and ref, different otherwise.
func TestItemID_IsAULIDOfSprintAndRef(t *testing.T) {
	a := plan.ItemID(1, "S1-01/T1")
	if !record.ValidID(a) || !strings.HasPrefix(a, "000001") {
		t.Fatalf("ItemID(1, S1-01/T1) = %q: not a ULID carrying its sprint", a)
	}
	if plan.ItemID(1, "S1-01/T1") != a {
		t.Fatal("ItemID is not deterministic")
	}
	seen := map[string]bool{a: true}
	for _, x := range []struct {
		n   int
		ref string
	}{{2, "S1-01/T1"}, {1, "S1-01/T2"}, {1, "S1-01"}, {33, "S1-01/T1"}} {
		id := plan.ItemID(x.n, x.ref)
		if !record.ValidID(id) || seen[id] {
			t.Fatalf("ItemID(%d, %s) = %q: invalid or repeated", x.n, x.ref, id)
		}
		seen[id] = true
	}
}
