package plan_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/plan/plantest"
)

const sprintDir = "docs/agents/sprint1"

// copyExample copies the example plan set into a fresh directory.
func copyExample(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := "testdata/example"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func load(t *testing.T, root string) *plan.Sprint {
	t.Helper()
	s, err := plan.LoadDir(context.Background(), root, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keys(fs []plan.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.File+":"+itoa(f.Line)+" "+f.Rule)
	}
	sort.Strings(out)
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// edit rewrites one file of the sprint, replacing old (which must occur)
// with new.
func edit(t *testing.T, root, rel, old, new string) {
	t.Helper()
	p := filepath.Join(root, sprintDir, rel)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropRunners removes the example's ## Test runners section, for tests
// that write their own.
func dropRunners(t *testing.T, root string) {
	t.Helper()
	edit(t, root, "standards.md", "## Test runners\n\n### go\n\n- Extensions: `.go`\n- Test files: `**/*_test.go`\n- Run: `go test -json -count=1 -run '{go_regex}' {packages}`\n- Format: `go-test-json`\n- Symbols: required\n\n", "")
}

// at names a finding on the first line of rel containing substr.
func at(t *testing.T, root, rel, substr, rule string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, sprintDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		if strings.Contains(l, substr) {
			return sprintDir + "/" + rel + ":" + itoa(i+1) + " " + rule
		}
	}
	t.Fatalf("%s has no line containing %q", rel, substr)
	return ""
}

// atLine names a finding on the first line of rel equal to text (trimmed).
func atLine(t *testing.T, root, rel, text, rule string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, sprintDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) == text {
			return sprintDir + "/" + rel + ":" + itoa(i+1) + " " + rule
		}
	}
	t.Fatalf("%s has no line %q", rel, text)
	return ""
}

func TestCheck_Example_NoFindings(t *testing.T) {
	s := load(t, "testdata/example")
	if fs := plan.Check(s); len(fs) != 0 {
		t.Fatalf("example has findings:\n%s", strings.Join(keys(fs), "\n"))
	}
	if s.Number != 1 || len(s.Stories.Stories) != 2 || len(s.StoryDirs) != 2 || len(s.Plan.Waves) != 2 {
		t.Fatalf("parsed shape: sprint %d, %d stories, %d dirs, %d waves", s.Number, len(s.Stories.Stories), len(s.StoryDirs), len(s.Plan.Waves))
	}
	tests, por := 0, 0
	for _, d := range s.StoryDirs {
		for _, sec := range d.TestPlan.Sections {
			for _, tc := range sec.Tests {
				tests++
				if tc.PassOnRed {
					por++
				}
			}
		}
	}
	if tests != 11 || por != 1 {
		t.Fatalf("tests %d (pass-on-red %d), want 11 (1)", tests, por)
	}
}

const s102Tasks = "s1-02-slugify/tasks.md"
const s101Tasks = "s1-01-rune-helpers/tasks.md"

func TestCheck_SeededDefects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, root string)
		want   func(t *testing.T, root string) []string
	}{
		{"story without connections", func(t *testing.T, root string) {
			edit(t, root, "stories.md", "- **Connections:** Depends on S1-01 (`Truncate`). The import guard from\n  S1-01 also checks `slug.go`.\n", "")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "stories.md", "### S1-02", "story.missing_connections")}
		}},
		{"story without failure scenarios", func(t *testing.T, root string) {
			edit(t, root, "stories.md", "- **Failure scenarios:** A multi-byte rune is split", "- A multi-byte rune is split")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "stories.md", "### S1-01", "story.missing_failure_scenarios")}
		}},
		{"story with empty success scenarios", func(t *testing.T, root string) {
			edit(t, root, "stories.md", "- **Success scenarios:** `Slugify(\"Hello, World!\", 0) == \"hello-world\"`.\n  `Slugify(\"  --Go 1.22 released--  \", 0) == \"go-1-22-released\"`.\n  `Slugify(\"naïve café\", 0) == \"na-ve-caf\"`.\n  `Slugify(\"a very long title\", 7) == \"a-very\"`.\n", "- **Success scenarios:**\n")
		}, func(t *testing.T, root string) []string {
			return []string{atLine(t, root, "stories.md", "- **Success scenarios:**", "story.missing_success_scenarios")}
		}},
		{"intake without connections", func(t *testing.T, root string) {
			edit(t, root, "intake.md", "## Connections", "## Links")
		}, func(t *testing.T, root string) []string {
			return []string{sprintDir + "/intake.md:1 intake.missing_connections"}
		}},
		{"wave cycle", func(t *testing.T, root string) {
			edit(t, root, s101Tasks, "Symbols: `strutil.Truncate`\nDepends on: none", "Symbols: `strutil.Truncate`\nDepends on: S1-02/T1")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s101Tasks, "Depends on: S1-02/T1", "plan.dependency_cycle")}
		}},
		{"unknown dependency", func(t *testing.T, root string) {
			edit(t, root, s102Tasks, "Depends on: S1-01/T2", "Depends on: S1-01/T9")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s102Tasks, "Depends on: S1-01/T9", "plan.unknown_dependency")}
		}},
		{"dependency against the wave order", func(t *testing.T, root string) {
			edit(t, root, "plan.md", "| 2 | S1-02 | S1-01 merged green |", "| 2 | S1-02 | immediately |")
			edit(t, root, s102Tasks, "Depends on: S1-01/T2", "Depends on: none")
			edit(t, root, s101Tasks, "Symbols: `strutil.Reverse`\nDepends on: none", "Symbols: `strutil.Reverse`\nDepends on: S1-02")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s101Tasks, "Depends on: S1-02", "wave.order")}
		}},
		{"story in two waves", func(t *testing.T, root string) {
			edit(t, root, "plan.md", "| 2 | S1-02 | S1-01 merged green |\n", "| 2 | S1-02 | S1-01 merged green |\n| 3 | S1-01 | S1-02 merged green |\n")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "plan.md", "| 3 | S1-01 |", "wave.story_in_two_waves")}
		}},
		{"story in no wave", func(t *testing.T, root string) {
			edit(t, root, "plan.md", "| 2 | S1-02 | S1-01 merged green |\n", "")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "stories.md", "### S1-02", "wave.story_missing")}
		}},
		{"task without tests", func(t *testing.T, root string) {
			p := filepath.Join(root, sprintDir, "s1-01-rune-helpers/plan.md")
			b, _ := os.ReadFile(p)
			s := string(b)
			i, j := strings.Index(s, "## T2 — Truncate"), strings.Index(s, "Test count: 8")
			s = s[:i] + "Test count: 4" + s[j+len("Test count: 8"):]
			os.WriteFile(p, []byte(s), 0o644)
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s101Tasks, "## T2 — Truncate", "task.no_tests")}
		}},
		{"task without scope", func(t *testing.T, root string) {
			edit(t, root, s101Tasks, "Files: `strutil/truncate.go`, `strutil/truncate_test.go`\n", "")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s101Tasks, "## T2 — Truncate", "task.missing_scope")}
		}},
		{"task without symbols", func(t *testing.T, root string) {
			edit(t, root, s102Tasks, "Symbols: `strutil.Slugify`\n", "")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s102Tasks, "## T1 — Slugify", "task.missing_symbols")}
		}},
		{"duplicate test id", func(t *testing.T, root string) {
			edit(t, root, "s1-02-slugify/plan.md", "`strutil/slug_test.go::TestSlugify_Basic`", "`strutil/reverse_test.go::TestReverse_ASCII`")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "s1-02-slugify/plan.md", "TestReverse_ASCII", "test.duplicate_id")}
		}},
		{"malformed test id", func(t *testing.T, root string) {
			edit(t, root, "s1-02-slugify/plan.md", "`strutil/slug_test.go::TestSlugify_NonASCIISeparates`", "`strutil/slug_test.go:TestSlugify_NonASCIISeparates`")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "s1-02-slugify/plan.md", "NonASCIISeparates", "test.malformed_id")}
		}},
		{"test outside any task", func(t *testing.T, root string) {
			edit(t, root, "s1-02-slugify/plan.md", "## T1 — Slugify\n", "- [ ] `strutil/slug_test.go::TestSlugify_Stray` — early.\n\n## T1 — Slugify\n")
			edit(t, root, "s1-02-slugify/plan.md", "Test count: 3.", "Test count: 4.")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "s1-02-slugify/plan.md", "TestSlugify_Stray", "test.outside_task")}
		}},
		{"ticked box in plan.md", func(t *testing.T, root string) {
			edit(t, root, "s1-02-slugify/plan.md", "- [ ] `strutil/slug_test.go::TestSlugify_Basic`", "- [x] `strutil/slug_test.go::TestSlugify_Basic`")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "s1-02-slugify/plan.md", "TestSlugify_Basic", "test.ticked_in_plan")}
		}},
		{"malformed validate.md row", func(t *testing.T, root string) {
			edit(t, root, "s1-02-slugify/validate.md", `'utf8\.RuneCountInString\|\[\]rune\('`, `'utf8\.RuneCountInString|\[\]rune\('`)
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "s1-02-slugify/validate.md", "| No own rune cutting |", "validate.bad_row")}
		}},
		{"validate.md without a task section", func(t *testing.T, root string) {
			p := filepath.Join(root, sprintDir, "s1-01-rune-helpers/validate.md")
			b, _ := os.ReadFile(p)
			s := string(b)
			i, j := strings.Index(s, "## T2 — Truncate"), strings.Index(s, "## Final sign-off")
			os.WriteFile(p, []byte(s[:i]+s[j:]), 0o644)
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s101Tasks, "## T2 — Truncate", "validate.missing_task")}
		}},
		{"missing Stage-2 file", func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, sprintDir, "s1-02-slugify/plan.md"))
		}, func(t *testing.T, root string) []string {
			return []string{sprintDir + "/s1-02-slugify/plan.md:0 stage2.missing_file"}
		}},
		{"story without a directory", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, sprintDir, "s1-02-slugify"))
		}, func(t *testing.T, root string) []string {
			// S1-01/T2 is still known; S1-02 has no tasks, so the wave and
			// dependency rules have nothing more to say.
			return []string{at(t, root, "stories.md", "### S1-02", "story.missing_dir")}
		}},
		{"file owned by two stories in one wave", func(t *testing.T, root string) {
			edit(t, root, "plan.md", "| 1 | S1-01 | immediately |\n| 2 | S1-02 | S1-01 merged green |\n", "| 1 | S1-01, S1-02 | immediately |\n")
			edit(t, root, "stories.md", "**Owned files:** `strutil/slug.go`, `strutil/slug_test.go`.", "**Owned files:** `strutil/slug.go`, `strutil/slug_test.go`, `strutil/truncate.go`.")
			edit(t, root, s102Tasks, "Files: `strutil/slug.go`, `strutil/slug_test.go`", "Files: `strutil/slug.go`, `strutil/slug_test.go`, `strutil/truncate.go`")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s102Tasks, "Files: `strutil/slug.go`", "wave.file_conflict")}
		}},
		{"task file outside the story's owned files", func(t *testing.T, root string) {
			edit(t, root, s102Tasks, "Files: `strutil/slug.go`, `strutil/slug_test.go`", "Files: `strutil/slug.go`, `strutil/slug_test.go`, `strutil/extra.go`")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s102Tasks, "Files: `strutil/slug.go`", "task.file_not_owned")}
		}},
		{"no gate matrix", func(t *testing.T, root string) {
			edit(t, root, "standards.md", "## Gate matrix", "## Checks")
		}, func(t *testing.T, root string) []string {
			return []string{sprintDir + "/standards.md:1 standards.missing_gate_matrix"}
		}},
		{"TBW left in a Stage-2 file", func(t *testing.T, root string) {
			edit(t, root, s102Tasks, "Implement `Slugify`", "TBW — Implement `Slugify`")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s102Tasks, "TBW", "plan.tbw")}
		}},
		{"front matter type mismatch", func(t *testing.T, root string) {
			edit(t, root, s102Tasks, "type: tasks", "type: validate")
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, s102Tasks, "type: validate", "frontmatter.type_mismatch")}
		}},
		{"plan-ready box without a test id", func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, sprintDir, "s1-02-slugify/plan-ready.md"), []byte("---\ntype: plan-ready\nstory: S1-02\nfrom_red_at: 2026-11-30T10:12:00Z\n---\n\n## T1 — Slugify\n- [ ] `strutil/slug_test.go::TestSlugify_Basic` — FAIL: want hello-world\n- [x] (no test bullets) gate-only\n"), 0o644)
		}, func(t *testing.T, root string) []string {
			return []string{at(t, root, "s1-02-slugify/plan-ready.md", "(no test bullets)", "ready.malformed_box")}
		}},
		{"front matter absent passes", func(t *testing.T, root string) {
			forEachFile(t, root, func(b []byte) []byte {
				s := string(b)
				if strings.HasPrefix(s, "---\n") {
					end := strings.Index(s[4:], "---\n")
					s = s[4+end+4:]
				}
				return []byte(s)
			})
		}, func(t *testing.T, root string) []string { return nil }},
		{"CRLF line endings pass", func(t *testing.T, root string) {
			forEachFile(t, root, func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "\n", "\r\n")) })
		}, func(t *testing.T, root string) []string { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := copyExample(t)
			tc.mutate(t, root)
			got := keys(plan.Check(load(t, root)))
			want := tc.want(t, root)
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("findings (-want +got):\n%s", diff)
			}
		})
	}
	if len(cases) < 15 {
		t.Fatalf("only %d seeded defects", len(cases))
	}
}

func forEachFile(t *testing.T, root string, fn func([]byte) []byte) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(root, sprintDir), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, fn(b), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLoad_PipeInTableCell(t *testing.T) {
	root := copyExample(t)
	forEachFile(t, root, func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "\n", "\r\n")) })
	s := load(t, root)
	var rows []plan.Row
	for _, sec := range s.StoryDirs[0].Validate.Sections {
		rows = append(rows, sec.Rows...)
	}
	want := "go test -race -count=1 -run '^(TestReverse_ASCII|TestReverse_MultiByteRunes|TestReverse_Empty|TestPackage_ImportsStdlibOnly)$' ./strutil/ >/dev/null && echo ok"
	found := false
	for _, r := range rows {
		if r.Check == "Task tests" && strings.Contains(r.Command, "TestReverse_ASCII") {
			found = true
			if r.Command != want || r.Expected != "ok" || !r.Literal || !strings.HasPrefix(r.Cites, "stories.md S1-01 success") {
				t.Fatalf("row parsed as %+v", r)
			}
		}
	}
	if !found {
		t.Fatal("no Task tests row for T1")
	}
	// A pipe in the Expected cell, escaped, stays in the cell.
	edit(t, root, "s1-01-rune-helpers/validate.md", "| `ok` | stories.md S1-01 success", "| `o\\|k` | stories.md S1-01 success")
	s = load(t, root)
	r := s.StoryDirs[0].Validate.Sections[1].Rows[0]
	if r.Expected != "o|k" || !r.Literal {
		t.Fatalf("expected cell = %q (literal %v), want o|k", r.Expected, r.Literal)
	}
}

func TestLoad_SprintDiscoveryIsNumeric(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"sprint2", "sprint9", "sprint10"} {
		os.MkdirAll(filepath.Join(root, "docs/agents", n), 0o755)
		os.WriteFile(filepath.Join(root, "docs/agents", n, "stories.md"), []byte("# "+n+"\n"), 0o644)
	}
	s, err := plan.LoadDir(context.Background(), root, plan.Options{})
	if err != nil || s.Number != 10 || s.Dir != "docs/agents/sprint10" {
		t.Fatalf("latest sprint = %+v, %v; want sprint10", s, err)
	}
	s, err = plan.LoadDir(context.Background(), root, plan.Options{Sprint: 9})
	if err != nil || s.Number != 9 {
		t.Fatalf("--sprint 9 = %v, %v", s, err)
	}
	if _, err := plan.LoadDir(context.Background(), root, plan.Options{Sprint: 3}); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("missing sprint: %v, want NOT_FOUND", err)
	}
	if _, err := plan.LoadDir(context.Background(), root, plan.Options{Root: "nope"}); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("missing root: %v, want NOT_FOUND", err)
	}
	// Root naming the sprint dir itself.
	s, err = plan.LoadDir(context.Background(), root, plan.Options{Root: "docs/agents/sprint2"})
	if err != nil || s.Number != 2 || s.Dir != "docs/agents/sprint2" {
		t.Fatalf("root = sprint dir: %+v, %v", s, err)
	}
	// A sprint directory not named sprint<N> takes its number from front
	// matter.
	os.MkdirAll(filepath.Join(root, "plans/current"), 0o755)
	os.WriteFile(filepath.Join(root, "plans/current/stories.md"), []byte("---\ntype: stories\nsprint: 4\n---\n"), 0o644)
	s, err = plan.LoadDir(context.Background(), root, plan.Options{Root: "plans/current"})
	if err != nil || s.Number != 4 {
		t.Fatalf("unnamed sprint dir: %+v, %v", s, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := plan.LoadDir(ctx, root, plan.Options{}); err == nil {
		t.Fatal("a cancelled context loaded anyway")
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The tree id equals the id git gives the committed planning files, does
// not move when execution-phase files appear, and moves on any edit.
func TestLoad_TreeIDIsGitsTree(t *testing.T) {
	root := copyExample(t)
	git(t, root, "init", "-q")
	git(t, root, "add", "docs")
	git(t, root, "commit", "-q", "-m", "plan")
	s := load(t, root)
	if want := git(t, root, "rev-parse", "HEAD:docs/agents"); s.TreeID != want {
		t.Fatalf("tree id %s, git says %s", s.TreeID, want)
	}
	for _, f := range s.Files {
		if want := git(t, root, "rev-parse", "HEAD:"+f.Path); f.BlobID != want {
			t.Fatalf("%s blob %s, git says %s", f.Path, f.BlobID, want)
		}
	}
	os.WriteFile(filepath.Join(root, sprintDir, "execution.log"), []byte("2026-11-30T10:00:04Z wave-1 red S1-01 start task=T1 attempt=1\n"), 0o644)
	os.WriteFile(filepath.Join(root, sprintDir, "s1-01-rune-helpers/plan-ready.md"), []byte("---\ntype: plan-ready\nstory: S1-01\n---\n\n## T1 — x\n- [ ] `strutil/reverse_test.go::TestReverse_ASCII` — FAIL\n"), 0o644)
	os.WriteFile(filepath.Join(root, sprintDir, "s1-01-rune-helpers/output.md"), []byte("---\ntype: output\nstory: S1-01\n---\n"), 0o644)
	if s2 := load(t, root); s2.TreeID != s.TreeID {
		t.Fatalf("tree id moved on execution files: %s -> %s", s.TreeID, s2.TreeID)
	}
	edit(t, root, s102Tasks, "Implement `Slugify`", "Implement  `Slugify`")
	if s3 := load(t, root); s3.TreeID == s.TreeID {
		t.Fatal("tree id did not move on an edit of tasks.md")
	}
}

func TestStandards_Runners(t *testing.T) {
	root := copyExample(t)
	dropRunners(t, root)
	edit(t, root, "standards.md", "## Gate matrix", "## Stub markers\n\n- `SUB-AGENT-TODO`\n- `not yet implemented`\n\n## Test runners\n\n### go\n\n- Extensions: `.go`\n- Test files: `**/*_test.go`\n- Compile: `go vet {packages}`\n- Run: `go test -json -count=1 -run '{go_regex}' {packages}`\n- Format: `go-test-json`\n- Test id: `{import_path}::{TestName}`\n- Isolate on crash: yes\n- Symbols: required\n\n### python\n\n- Extensions: `.py`\n- Run: `python -m pytest --junitxml={report} {node_ids}`\n- Format: junit-xml\n- Dialect: pytest\n- Stub markers: `NotImplementedError`\n- Suppression patterns: `@pytest.mark.skip`, `pytest.skip(`\n\n### rust\n\n- Run: `cargo nextest run {filters}`\n- Format: junit-xml\n- Assertion markers: `assertion failed:`\n\n## Gate matrix")
	s := load(t, root)
	got := keys(plan.Check(s))
	var want []string
	// The rust runner's Format line (the python one has the same text).
	b, _ := os.ReadFile(filepath.Join(root, sprintDir, "standards.md"))
	lines := strings.Split(string(b), "\n")
	for i := range lines {
		if lines[i] == "- Format: junit-xml" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "- Assertion") {
			want = []string{sprintDir + "/standards.md:" + itoa(i+1) + " runner.missing_dialect"}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	st := s.Standards
	if len(st.Runners) != 3 {
		t.Fatalf("%d runners", len(st.Runners))
	}
	g := st.Runners[0]
	if g.Language != "go" || g.Run != "go test -json -count=1 -run '{go_regex}' {packages}" || g.Format != "go-test-json" || !g.IsolateOnCrash || g.Symbols != "required" || g.Compile != "go vet {packages}" || g.TestGlobs[0] != "**/*_test.go" {
		t.Fatalf("go runner %+v", g)
	}
	py := st.Runners[1]
	if py.Dialect != "pytest" || py.Format != "junit-xml" || len(py.Suppressions) != 2 || py.StubMarkers[0] != "NotImplementedError" {
		t.Fatalf("python runner %+v", py)
	}
	if len(st.StubMarkers) != 2 || st.StubMarkers[1].Text != "not yet implemented" {
		t.Fatalf("stub markers %+v", st.StubMarkers)
	}
	if len(st.Suppressions) != 4 || st.Suppressions[0].Text != "t.Skip(" {
		t.Fatalf("suppressions %+v", st.Suppressions)
	}
	if st.Matrix == nil || len(st.Matrix.Commands) != 5 || st.Matrix.Commands[1].Text != "go vet ./..." {
		t.Fatalf("matrix %+v", st.Matrix)
	}
}

func TestGenerate_ValidSprint(t *testing.T) {
	root := t.TempDir()
	if err := plantest.Generate(root, plantest.Shape{Stories: 20, TasksPerStory: 5, TestsPerTask: 3}); err != nil {
		t.Fatal(err)
	}
	s := load(t, root)
	if fs := plan.Check(s); len(fs) != 0 {
		t.Fatalf("generated sprint has findings:\n%s", strings.Join(keys(fs), "\n"))
	}
	if sum := s.Summary(); sum.Stories != 20 || sum.Tasks != 100 || sum.Tests != 300 || sum.Waves != 4 {
		t.Fatalf("summary %+v", sum)
	}
}

func BenchmarkCheck_20Stories100Tasks(b *testing.B) {
	root := b.TempDir()
	if err := plantest.Generate(root, plantest.Shape{Stories: 20, TasksPerStory: 5, TestsPerTask: 3}); err != nil {
		b.Fatal(err)
	}
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.ResetTimer()
	defer func() {
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		cpu := (r1.Utime.Nano() + r1.Stime.Nano()) - (r0.Utime.Nano() + r0.Stime.Nano())
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}()
	for i := 0; i < b.N; i++ {
		s, err := plan.LoadDir(context.Background(), root, plan.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if fs := plan.Check(s); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

func TestStandards_CostRules(t *testing.T) {
	root := copyExample(t)
	dropRunners(t, root)
	edit(t, root, "standards.md", "## Gate matrix", "## Test runners\n\n### go\n\n- Extensions: `.go`\n- Run: `go test -json {packages}`\n- Format: go-test-json\n- Costly: `go test -race`\n\n## Cost rules\n\nWhat the bounded-cost gate adds to its defaults.\n\n- costly: `make e2e`\n- allow: `make test`\n- max_attempts: 4\n\n```\ncostly: docker compose up\n```\n\n## Gate matrix")
	s := load(t, root)
	if f := keys(plan.Check(s)); len(f) != 0 {
		t.Fatalf("findings %v", f)
	}
	c := s.Standards.Cost
	if c == nil || c.MaxAttempts != 4 || len(c.Allow) != 1 || c.Allow[0].Text != "make test" || len(c.Problems) != 0 {
		t.Fatalf("cost rules %+v", c)
	}
	var costly []string
	for _, p := range c.Costly {
		costly = append(costly, p.Text)
	}
	if diff := cmp.Diff([]string{"make e2e", "docker compose up", "go test -race"}, costly); diff != "" {
		t.Fatalf("costly (-want +got):\n%s", diff)
	}
	edit(t, root, "standards.md", "- max_attempts: 4", "- max_attempts: many\n- sometimes: `make`")
	s = load(t, root)
	if f := keys(plan.Check(s)); len(f) != 2 || !strings.HasSuffix(f[0], "cost.bad_rule") {
		t.Fatalf("findings %v", f)
	}
	if c := s.Standards.Cost; c.MaxAttempts != 0 || len(c.Problems) != 2 {
		t.Fatalf("cost rules %+v", c)
	}
}
