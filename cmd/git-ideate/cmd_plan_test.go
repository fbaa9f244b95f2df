package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan/plantest"
)

// planRepo is a git repository holding the example plan set.
func planRepo(t *testing.T) string {
	t.Helper()
	dir := gitstoretest.NewRepo(t)
	copyExample(t, dir)
	return dir
}

// copyExample copies the example plan set into dst.
func copyExample(t testing.TB, dst string) {
	t.Helper()
	if err := plantest.CopyExample(dst); err != nil {
		t.Fatal(err)
	}
}

func dropConnections(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "docs/agents/sprint1/stories.md")
	b, _ := os.ReadFile(p)
	s := strings.Replace(string(b), "- **Connections:** Depends on S1-01 (`Truncate`). The import guard from\n  S1-01 also checks `slug.go`.\n", "", 1)
	if s == string(b) {
		t.Fatal("fixture changed: no S1-02 connections bullet")
	}
	os.WriteFile(p, []byte(s), 0o644)
}

func TestPlanCheck_PassAndFail(t *testing.T) {
	dir := planRepo(t)
	r := cli(t, dir, "", "plan", "check")
	if r.code != 0 || !strings.HasPrefix(r.out, "PASS sprint 1 (docs/agents/sprint1, tree ") || !strings.Contains(r.out, "2 stories, 3 tasks, 11 tests") {
		t.Fatalf("example: %+v", r)
	}
	// From a subdirectory, with the sprint named.
	sub := filepath.Join(dir, "docs")
	if r := cli(t, sub, "", "plan", "check", "--sprint", "1"); r.code != 0 {
		t.Fatalf("from docs/: %+v", r)
	}
	dropConnections(t, dir)
	r = cli(t, dir, "", "plan", "check")
	if r.code == 0 || !strings.HasPrefix(r.out, "FAIL sprint 1") {
		t.Fatalf("defect passed: %+v", r)
	}
	if !regexp.MustCompile(`(?m)^docs/agents/sprint1/stories\.md:74 story\.missing_connections story S1-02 has no connections$`).MatchString(r.out) {
		t.Fatalf("finding not printed as file:line rule message:\n%s", r.out)
	}
	if !strings.Contains(r.err, "GATE_FAIL: the plan of sprint 1 fails 1 check(s)") {
		t.Fatalf("stderr: %q", r.err)
	}
	r = cli(t, dir, "", "plan", "check", "--json")
	var res planCheckResult
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code == 0 {
		t.Fatalf("--json: %v %+v", err, r)
	}
	if res.Verdict != "FAIL" || res.Errors != 1 || len(res.Findings) != 1 || res.Findings[0].Rule != "story.missing_connections" || res.Findings[0].Line != 74 || len(res.Tree) != 40 {
		t.Fatalf("--json result %+v", res)
	}
}

func TestPlanCheck_BuiltBinary(t *testing.T) {
	dir := planRepo(t)
	r := bin(t, dir, "", "plan", "check")
	if r.code != 0 || !strings.HasPrefix(r.out, "PASS") {
		t.Fatalf("example through the binary: %+v", r)
	}
	dropConnections(t, dir)
	r = bin(t, dir, "", "plan", "check")
	if r.code == 0 || !strings.Contains(r.out, "stories.md:74 story.missing_connections") {
		t.Fatalf("defect through the binary: %+v", r)
	}
	// --dir outside the repository, pointing at the sprint dir itself.
	gen := t.TempDir()
	if err := plantest.Generate(gen, plantest.Shape{Stories: 3, TasksPerStory: 2, TestsPerTask: 1, StoriesPerWave: 2}); err != nil {
		t.Fatal(err)
	}
	r = bin(t, dir, "", "plan", "check", "--dir", filepath.Join(gen, "docs/agents/sprint1"))
	if r.code != 0 || !strings.HasPrefix(r.out, "PASS sprint 1 (sprint1, tree") {
		t.Fatalf("--dir outside: %+v", r)
	}
}

func TestPlanCheck_NoPlan(t *testing.T) {
	dir := gitstoretest.NewRepo(t)
	r := cli(t, dir, "", "plan", "check")
	if r.code != 1 || !strings.Contains(r.err, "NOT_FOUND: the planning directory docs/agents does not exist") {
		t.Fatalf("%+v", r)
	}
	r = cli(t, planRepo(t), "", "plan", "check", "--sprint", "7")
	if r.code != 1 || !strings.Contains(r.err, "NOT_FOUND: docs/agents/sprint7 does not exist") {
		t.Fatalf("%+v", r)
	}
}

func TestPlanShow(t *testing.T) {
	dir := planRepo(t)
	r := cli(t, dir, "", "plan", "show")
	for _, want := range []string{
		"sprint 1 (docs/agents/sprint1, tree ",
		"wave 2: S1-02  [starts: S1-01 merged green]",
		"  T1 Slugify  files: strutil/slug.go strutil/slug_test.go  symbols: strutil.Slugify  tests: 3  depends on: S1-01/T2",
	} {
		if r.code != 0 || !strings.Contains(r.out, want) {
			t.Fatalf("show lacks %q:\n%+v", want, r)
		}
	}
	r = cli(t, dir, "", "plan", "show", "--json")
	var res struct {
		MessageType string `json:"message_type"`
		Summary     struct {
			Tests     int `json:"tests"`
			PassOnRed int `json:"pass_on_red"`
		}
		Plan struct {
			StoryDirs []struct {
				Validate struct {
					Sections []struct {
						Rows []struct{ Command string }
					}
				}
			} `json:"story_dirs"`
		}
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil {
		t.Fatal(err)
	}
	if res.MessageType != "plan_show" || res.Summary.Tests != 11 || res.Summary.PassOnRed != 1 {
		t.Fatalf("%+v", res)
	}
	if c := res.Plan.StoryDirs[0].Validate.Sections[1].Rows[0].Command; !strings.Contains(c, "TestReverse_ASCII|TestReverse_MultiByteRunes") {
		t.Fatalf("validate command %q", c)
	}
}

func TestPlanImport_BuiltBinary(t *testing.T) {
	dir := planRepo(t)
	r := bin(t, dir, "", "plan", "import", "--human", "sup", "--json")
	if r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	var res struct {
		MessageType string `json:"message_type"`
		Created     int    `json:"created"`
		Items       []struct {
			Ref, Kind, ID, Action string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.MessageType != "plan_import" || res.Created != 5 || len(res.Items) != 5 {
		t.Fatalf("%v %+v\n%s", err, res, r.out)
	}
	ready := bin(t, dir, "", "work", "ready")
	if ready.code != 0 || !strings.Contains(ready.out, "S1-01/T1 — ") || !strings.Contains(ready.out, "S1-01/T2 — ") || strings.Contains(ready.out, "S1-02/T1") {
		t.Fatalf("work ready after import: %+v", ready)
	}
	if again := bin(t, dir, "", "plan", "import", "--human", "sup"); again.code != 0 || !strings.Contains(again.out, "0 created, 0 updated, 0 cancelled, 5 unchanged") {
		t.Fatalf("re-import: %+v", again)
	}
	// A plan that fails its check is refused: exit 3 (a gate's FAIL), nothing written.
	dropConnections(t, dir)
	before := gitstoretest.Git(t, dir, "for-each-ref", "refs/ideate/")
	if bad := bin(t, dir, "", "plan", "import", "--human", "sup"); bad.code != 3 || !strings.Contains(bad.err, "GATE_FAIL") {
		t.Fatalf("failing plan: %+v", bad)
	}
	if after := gitstoretest.Git(t, dir, "for-each-ref", "refs/ideate/"); after != before {
		t.Fatal("a refused import wrote")
	}
}
