package plan_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/plan"
)

// unmark deletes every template marker line under dir, as a person does
// once they have edited a file.
func unmark(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var keep []string
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasPrefix(l, plan.TemplateMarker) {
				keep = append(keep, l)
			}
		}
		return os.WriteFile(p, []byte(strings.Join(keep, "")), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNewSprint_TemplatesAreNotYetFilledThenPass(t *testing.T) {
	root := t.TempDir()
	files, err := plan.NewSprint(root, "docs/agents", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"docs/agents/sprint3/intake.md", "docs/agents/sprint3/plan.md",
		"docs/agents/sprint3/s3-01-add/plan.md", "docs/agents/sprint3/s3-01-add/tasks.md", "docs/agents/sprint3/s3-01-add/validate.md",
		"docs/agents/sprint3/standards.md", "docs/agents/sprint3/stories.md",
	}
	sort.Strings(files)
	if diff := cmp.Diff(want, files); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	s := load(t, root)
	fs := plan.Check(s)
	var templ []string
	for _, f := range fs {
		if f.Rule != plan.RuleTemplate {
			t.Errorf("a template has a finding beyond not-yet-filled: %s:%d %s %s", f.File, f.Line, f.Rule, f.Message)
			continue
		}
		if !strings.Contains(f.Message, "not yet filled") {
			t.Errorf("message %q does not say not yet filled", f.Message)
		}
		templ = append(templ, f.File)
	}
	if diff := cmp.Diff(want, templ); diff != "" {
		t.Fatalf("not-yet-filled files (-want +got):\n%s", diff)
	}
	unmark(t, filepath.Join(root, "docs/agents/sprint3"))
	if fs := plan.Check(load(t, root)); len(fs) != 0 {
		t.Fatalf("the filled templates have findings: %v", keys(fs))
	}
	if _, err := plan.NewSprint(root, "docs/agents", 3); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("a second plan new of sprint 3: %v, want CONFLICT", err)
	}
}

func TestCheck_GatesThatCouldJudgeNothing(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, rule, names string
	}{
		{"no test runners", "## Test runners", "## Notes", plan.RuleNoRunner, "## Test runners"},
		{"no runner for the tests' language", "- Extensions: `.go`\n- Test files: `**/*_test.go`", "- Extensions: `.py`", plan.RuleNoRunner, "### go"},
		{"no gate matrix", "## Gate matrix", "## Commands", plan.RuleNoGateMatrix, "Gate matrix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if _, err := plan.NewSprint(root, "docs/agents", 1); err != nil {
				t.Fatal(err)
			}
			unmark(t, filepath.Join(root, "docs/agents/sprint1"))
			edit(t, root, "standards.md", tc.old, tc.new)
			fs := plan.Check(load(t, root))
			if len(fs) != 1 || fs[0].Rule != tc.rule || !strings.Contains(fs[0].Message, tc.names) || fs[0].File != sprintDir+"/standards.md" {
				t.Fatalf("findings %+v, want one %s at standards.md naming %q", fs, tc.rule, tc.names)
			}
		})
	}
}

func TestCheck_DuplicatedDependsOnLine(t *testing.T) {
	root := copyExample(t)
	edit(t, root, "s1-01-rune-helpers/tasks.md", "Symbols: `strutil.Truncate`\nDepends on: none\n", "Symbols: `strutil.Truncate`\nDepends on: none\nDepends on: T1\n")
	got := keys(plan.Check(load(t, root)))
	want := []string{at(t, root, "s1-01-rune-helpers/tasks.md", "Depends on: T1", plan.RuleTaskDupLine)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
}

func TestCheck_UncitedRuleSaysWhatASourceIs(t *testing.T) {
	root := copyExample(t)
	edit(t, root, "standards.md", "- Statement coverage of `./...` stays at or above 90% — CONTRIBUTING.md R7.", "- Statement coverage stays high.")
	fs := plan.Check(load(t, root))
	if len(fs) != 1 || fs[0].Rule != plan.RuleUncitedRule {
		t.Fatalf("findings %v", keys(fs))
	}
	for _, w := range []string{"CONTRIBUTING.md", "rule id", "docs/", "URL"} {
		if !strings.Contains(fs[0].Message, w) {
			t.Errorf("message %q does not name %q as a source", fs[0].Message, w)
		}
	}
}

// The example sprint the docs show (docs/examples/sprint1) passes the
// check with no finding.
func TestCheck_DocsExampleSprintPasses(t *testing.T) {
	s, err := plan.LoadDir(t.Context(), filepath.Join("..", "..", "docs"), plan.Options{Root: "examples", Sprint: 1})
	if err != nil {
		t.Fatal(err)
	}
	if fs := plan.Check(s); len(fs) != 0 {
		t.Fatalf("docs/examples/sprint1 has findings: %v", keys(fs))
	}
	if sum := s.Summary(); sum.Stories != 2 || sum.Tasks != 2 || sum.Tests != 2 || sum.Waves != 2 {
		t.Fatalf("summary %+v", sum)
	}
}
