// Package plantest writes plan sets for tests and benchmarks: a sprint of
// any size that passes plan.Check with no finding.
package plantest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Shape is the size of a generated sprint.
type Shape struct {
	Sprint         int // sprint number (default 1)
	Stories        int
	TasksPerStory  int
	TestsPerTask   int
	StoriesPerWave int // default 5
}

// Generate writes docs/agents/sprint<N>/ under root: intake, standards,
// stories, the sprint plan and, per story, tasks.md, validate.md and
// plan.md. Story i of wave w>1 depends on a story of wave w-1; the tasks
// of a story form a chain.
func Generate(root string, sh Shape) error {
	if sh.Sprint == 0 {
		sh.Sprint = 1
	}
	if sh.StoriesPerWave == 0 {
		sh.StoriesPerWave = 5
	}
	n := sh.Sprint
	dir := filepath.Join(root, "docs", "agents", fmt.Sprintf("sprint%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	id := func(i int) string { return fmt.Sprintf("S%d-%02d", n, i+1) }
	slug := func(i int) string { return fmt.Sprintf("s%d-%02d-part-%d", n, i+1, i+1) }
	wave := func(i int) int { return i/sh.StoriesPerWave + 1 }
	files := map[string]string{}
	intent := func(b *strings.Builder, level, what string) {
		for _, p := range [][2]string{{"What's wanted", "the " + what + " helpers"}, {"Constraints", "standard library only"}, {"Failure scenarios", "a helper panics on empty input"}, {"Success scenarios", "every helper returns the documented value"}, {"Connections", "later stories call these helpers"}} {
			if level == "" {
				fmt.Fprintf(b, "- **%s:** %s.\n", p[0], p[1])
			} else {
				fmt.Fprintf(b, "%s %s\n\n%s.\n\n", level, p[0], p[1])
			}
		}
	}
	var in strings.Builder
	fmt.Fprintf(&in, "---\ntype: intake\nsprint: %d\n---\n\n# Intake\n\n", n)
	intent(&in, "##", "sprint")
	files["intake.md"] = in.String()
	matrix := "```sh\ngo vet ./...\ngo test -race -count=1 ./...\n```\n"
	files["standards.md"] = fmt.Sprintf("---\ntype: standards\nsprint: %d\n---\n\n# Standards\n\n## Detected stack\n\n- Go — go.mod.\n\n## Active rules\n\n- Vet clean — CONTRIBUTING.md R2.\n\n## Test runners\n\n### go\n\n- Extensions: `.go`\n- Run: `go test -json -count=1 -run '{go_regex}' {packages}`\n- Format: `go-test-json`\n\n## Gate matrix\n\n%s", n, matrix)

	var st strings.Builder
	fmt.Fprintf(&st, "---\ntype: stories\nsprint: %d\n---\n\n# Stories\n\n## Sprint goal\n\nShip the parts.\n\n## Sprint demo\n\n1. `go test ./...` passes.\n\n## Definition of Done\n\n- Every test passes.\n\n## Out of scope\n\n- Anything else.\n\n## User stories\n\n", n)
	var pl strings.Builder
	fmt.Fprintf(&pl, "---\ntype: sprint-plan\nsprint: %d\nstage: \"2\"\n---\n\n# Plan\n\n## Sprint goal\n\nShip the parts.\n\n## Waves\n\n| Wave | Stories | Starts when |\n| --- | --- | --- |\n", n)
	waves := (sh.Stories + sh.StoriesPerWave - 1) / sh.StoriesPerWave
	for w := 1; w <= waves; w++ {
		var ids []string
		for i := (w - 1) * sh.StoriesPerWave; i < sh.Stories && i < w*sh.StoriesPerWave; i++ {
			ids = append(ids, id(i))
		}
		starts := "immediately"
		if w > 1 {
			starts = fmt.Sprintf("wave %d merged green", w-1)
		}
		fmt.Fprintf(&pl, "| %d | %s | %s |\n", w, strings.Join(ids, ", "), starts)
	}
	pl.WriteString("\n## Parallelism and file ownership\n\n| Story | Wave | Owned files (exclusive) | Tasks | Tests |\n| --- | --- | --- | --- | --- |\n")
	for i := 0; i < sh.Stories; i++ {
		pkg := fmt.Sprintf("part%02d", i+1)
		fmt.Fprintf(&st, "### %s — Part %d\n\nAs a user, I want part %d.\n\n**Owned files:** `%s/**`.\n\n**Intent**\n\n", id(i), i+1, i+1, pkg)
		intent(&st, "", pkg)
		st.WriteString("\n")
		fmt.Fprintf(&pl, "| %s | %d | `%s/**` | %d | %d |\n", id(i), wave(i), pkg, sh.TasksPerStory, sh.TasksPerStory*sh.TestsPerTask)

		var tk, va, tp strings.Builder
		fmt.Fprintf(&tk, "---\ntype: tasks\nstory: %s\n---\n\n# %s tasks\n\n", id(i), id(i))
		fmt.Fprintf(&va, "---\ntype: validate\nstory: %s\n---\n\n# %s validate\n\n## Pre-flight\n\n| Check | Command | Expected (PASS) | FAIL cites |\n| --- | --- | --- | --- |\n| Module | `go list -m` | `example.com/m` | R1 |\n\n", id(i), id(i))
		fmt.Fprintf(&tp, "---\ntype: plan\nstory: %s\nscope: \"tests only\"\n---\n\n# %s test plan\n\n", id(i), id(i))
		for k := 1; k <= sh.TasksPerStory; k++ {
			dep := "none"
			switch {
			case k > 1:
				dep = fmt.Sprintf("%s/T%d", id(i), k-1)
			case wave(i) > 1:
				dep = id(i - sh.StoriesPerWave)
			}
			fmt.Fprintf(&tk, "## T%d — Piece %d\n\nBuild piece %d.\n\nFiles: `%s/piece%d.go`, `%s/piece%d_test.go`\nSymbols: `%s.Piece%d`\nDepends on: %s\n\n", k, k, k, pkg, k, pkg, k, pkg, k, dep)
			var names []string
			fmt.Fprintf(&tp, "## T%d — Piece %d\n\n", k, k)
			for j := 1; j <= sh.TestsPerTask; j++ {
				name := fmt.Sprintf("TestPiece%d_Case%d", k, j)
				names = append(names, name)
				fmt.Fprintf(&tp, "- [ ] `%s/piece%d_test.go::%s` — input: %d; action: call; assertion: equals.\n", pkg, k, name, j)
			}
			tp.WriteString("\n")
			fmt.Fprintf(&va, "## T%d — Piece %d\n\n| Check | Command | Expected (PASS) | FAIL cites |\n| --- | --- | --- | --- |\n| Task tests | `go test -run '^(%s)$' ./%s/ >/dev/null && echo ok` | `ok` | stories.md %s |\n\n", k, k, strings.Join(names, `\|`), pkg, id(i))
		}
		fmt.Fprintf(&tp, "Test count: %d.\n", sh.TasksPerStory*sh.TestsPerTask)
		va.WriteString("## Final sign-off\n\n| Check | Command | Expected (PASS) | FAIL cites |\n| --- | --- | --- | --- |\n| Vet | `go vet ./... && echo ok` | `ok` | R2 |\n")
		files[filepath.Join(slug(i), "tasks.md")] = tk.String()
		files[filepath.Join(slug(i), "validate.md")] = va.String()
		files[filepath.Join(slug(i), "plan.md")] = tp.String()
	}
	st.WriteString("## Story dependency graph\n\n```\nwave by wave\n```\n")
	files["stories.md"] = st.String()
	pl.WriteString("\n## Critical path\n\nWave by wave.\n\n## Cross-cutting gates\n\n" + matrix)
	files["plan.md"] = pl.String()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
