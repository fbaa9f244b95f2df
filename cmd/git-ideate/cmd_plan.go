package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/corecmd"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
)

// PlanCmd groups the commands over the playbook's planning artifacts.
type PlanCmd struct {
	New    PlanNewCmd    `cmd:"" help:"Write a new sprint's planning artifacts from templates (intake, standards with its test runners and gate matrix, stories, sprint plan, one example story's tasks, plan and validate); plan check says \"not yet filled\" until each is edited."`
	Check  PlanCheckCmd  `cmd:"" help:"Validate the sprint's planning artifacts: PASS, or FAIL with each finding as file:line rule message (exit non-zero)."`
	Show   PlanShowCmd   `cmd:"" help:"Print the parsed sprint: stories, waves, tasks and tests."`
	Import PlanImportCmd `cmd:"" help:"Make the board hold the sprint: a parent item per story, an item per task with its waves and dependencies as depends_on. Idempotent; refused unless the plan passes its check."`
}

// planFlags select the sprint.
type planFlags struct {
	Sprint int    `help:"Sprint number (default: the highest-numbered sprint<N> directory)." placeholder:"N"`
	Dir    string `help:"Planning root holding sprint<N>/ (or a sprint directory itself); default docs/agents at the top of the working tree." placeholder:"DIR"`
	JSON   bool   `name:"json" help:"Print JSON."`
}

// PlanNewCmd writes a sprint's artifacts from the templates.
type PlanNewCmd struct {
	Sprint int    `help:"Sprint number (default: one more than the highest sprint<N> under the planning root, else 1)." placeholder:"N"`
	Dir    string `help:"Planning root to write sprint<N>/ under; default docs/agents at the top of the working tree." placeholder:"DIR"`
	JSON   bool   `name:"json" help:"Print JSON."`
}

// Run writes the templates and lists what it wrote.
func (c *PlanNewCmd) Run(ctx context.Context, env *Env) error {
	fsRoot, root := planRoot(env, planFlags{Dir: c.Dir})
	n := c.Sprint
	if n == 0 {
		n = 1
		if entries, err := os.ReadDir(filepath.Join(fsRoot, filepath.FromSlash(root))); err == nil {
			for _, e := range entries {
				if k, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "sprint")); err == nil && e.IsDir() && strings.HasPrefix(e.Name(), "sprint") && k >= n {
					n = k + 1
				}
			}
		}
	}
	files, err := plan.NewSprint(fsRoot, root, n)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, struct {
			MessageType string   `json:"message_type"`
			Sprint      int      `json:"sprint"`
			Files       []string `json:"files"`
		}{"plan_new", n, files}, true)
	}
	w := corecmd.NewBufWriter(env.Out)
	fmt.Fprintf(w, "wrote sprint %d's planning artifacts from the templates:\n", n)
	for _, f := range files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	fmt.Fprintf(w, "next: edit each file (its example story shows every section), delete its %s line, then run git ideate plan check --sprint %d\n", plan.TemplateMarker+" …", n)
	return w.Flush()
}

// PlanCheckCmd is the planning→execution gate's check.
type PlanCheckCmd struct{ planFlags }

// PlanShowCmd prints the parsed sprint.
type PlanShowCmd struct{ planFlags }

// CodePlanFail is the code of a plan that fails its check.
const CodePlanFail apperr.Code = "GATE_FAIL"

// planCheckResult is what plan check prints with --json.
type planCheckResult struct {
	MessageType string         `json:"message_type"`
	Verdict     string         `json:"verdict"` // PASS | FAIL
	Sprint      int            `json:"sprint"`
	Dir         string         `json:"dir"`
	Tree        string         `json:"tree"`
	Summary     plan.Summary   `json:"summary"`
	Errors      int            `json:"errors"`
	Warnings    int            `json:"warnings"`
	Findings    []plan.Finding `json:"findings"`
	Files       []plan.File    `json:"files"`
	// Stored is the exec-log entry holding the verdict ("" when the plan
	// lies outside a repository, so nothing could be stored).
	Stored string `json:"stored,omitempty"`
	Note   string `json:"note,omitempty"`
}

// loadPlan resolves --dir against the working tree and loads the sprint.
// Paths in findings are relative to the top of the working tree when the
// planning root lies inside it, else to the planning root.
func loadPlan(ctx context.Context, env *Env, f planFlags) (*plan.Sprint, error) {
	fsRoot, root := planRoot(env, f)
	return plan.Load(ctx, os.DirFS(fsRoot), plan.Options{Root: root, Sprint: f.Sprint})
}

// taskPlan is the sprint plan the execution commands judge by: without
// --dir it is read from the main working tree (where the ticks are kept),
// also when called from inside a task's worktree, each time load is
// called. A sprint named that does not exist is refused before anything runs, so
// a mistyped --sprint stores nothing.
func taskPlan(env *Env, g *gitstore.Store, pf planFlags) (fsRoot string, load func(context.Context) (*plan.Sprint, error), err error) {
	fsRoot, root := planRoot(env, pf)
	if top, ok := g.Repo().MainWorkTree(); ok && pf.Dir == "" {
		fsRoot = top
	}
	if pf.Sprint != 0 {
		if _, err := plan.Load(context.Background(), os.DirFS(fsRoot), plan.Options{Root: root, Sprint: pf.Sprint}); apperr.CodeOf(err) == apperr.NotFound {
			return "", nil, err
		}
	}
	return fsRoot, func(ctx context.Context) (*plan.Sprint, error) {
		return plan.Load(ctx, os.DirFS(fsRoot), plan.Options{Root: root, Sprint: pf.Sprint})
	}, nil
}

// planRoot is where loadPlan reads: the directory it opens and the
// planning root inside it (the sprint's Dir is relative to the former).
func planRoot(env *Env, f planFlags) (fsRoot, root string) {
	top := env.Dir
	if g, err := env.Git(); err == nil && g.Repo().WorkTree != "" {
		top = g.Repo().WorkTree
	}
	fsRoot, root = top, plan.DefaultRoot
	if f.Dir != "" {
		abs := f.Dir
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(env.Dir, abs)
		}
		abs, _ = filepath.Abs(abs)
		topAbs, _ := filepath.Abs(top)
		if rel, err := filepath.Rel(topAbs, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			fsRoot, root = topAbs, filepath.ToSlash(rel)
		} else {
			fsRoot, root = filepath.Dir(abs), filepath.Base(abs)
		}
	}
	return fsRoot, root
}

// runPlanCheck loads and checks the sprint.
func runPlanCheck(ctx context.Context, env *Env, f planFlags) (planCheckResult, *plan.Sprint, error) {
	s, err := loadPlan(ctx, env, f)
	if err != nil {
		return planCheckResult{}, nil, err
	}
	fs := plan.Check(s)
	r := planCheckResult{MessageType: "plan_check", Verdict: "PASS", Sprint: s.Number, Dir: s.Dir, Tree: s.TreeID, Summary: s.Summary(), Findings: fs, Files: s.Files}
	if r.Findings == nil {
		r.Findings = []plan.Finding{}
	}
	r.Errors, r.Warnings = plan.Counts(fs)
	if r.Errors > 0 {
		r.Verdict = "FAIL"
	}
	return r, s, nil
}

// storePlanVerdict stores the check's verdict on the execution log and
// as a record (gates.PlanCheck), where the dispatch guard reads it.
func storePlanVerdict(ctx context.Context, env *Env, s *plan.Sprint, r *planCheckResult) error {
	log, err := env.Exec()
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotARepo {
			r.Note = "not stored: the plan lies outside a git repository"
			return nil
		}
		return err
	}
	rec, err := env.Record()
	if err != nil {
		return err
	}
	g, err := env.Git()
	if err != nil {
		return err
	}
	res, err := gates.PlanCheck(ctx, log, rec, s, g.Identity().Name)
	if err != nil {
		return err
	}
	r.Stored = res.Stored.ID
	if !res.New {
		r.Note = "already stored: the plan is unchanged since that check"
	}
	return nil
}

// Run prints the verdict and the findings; a FAIL is returned as a
// GATE_FAIL error after the output.
func (c *PlanCheckCmd) Run(ctx context.Context, env *Env) error {
	r, s, err := runPlanCheck(ctx, env, c.planFlags)
	if err != nil {
		return err
	}
	if err := storePlanVerdict(ctx, env, s, &r); err != nil {
		return err
	}
	if c.JSON {
		if err := corecmd.WriteJSON(env.Out, r, true); err != nil {
			return err
		}
	} else {
		w := corecmd.NewBufWriter(env.Out)
		writeCheckText(w, r)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if r.Verdict != "PASS" {
		return apperr.New(CodePlanFail, "the plan of sprint %d fails %d check(s)", r.Sprint, r.Errors)
	}
	return nil
}

func writeCheckText(w io.Writer, r planCheckResult) {
	fmt.Fprintf(w, "%s sprint %d (%s, tree %s): %d stories, %d tasks, %d tests", r.Verdict, r.Sprint, r.Dir, shortID(r.Tree), r.Summary.Stories, r.Summary.Tasks, r.Summary.Tests)
	if r.Errors > 0 || r.Warnings > 0 {
		fmt.Fprintf(w, "; %d error(s), %d warning(s)", r.Errors, r.Warnings)
	}
	fmt.Fprintln(w)
	for _, x := range r.Findings {
		sev := ""
		if x.Severity == plan.Warning {
			sev = "warning: "
		}
		fmt.Fprintf(w, "%s:%d %s %s%s\n", x.File, x.Line, x.Rule, sev, x.Message)
	}
	switch {
	case r.Stored != "" && r.Note != "":
		fmt.Fprintf(w, "verdict: exec %s (%s)\n", r.Stored, r.Note)
	case r.Stored != "":
		fmt.Fprintf(w, "verdict stored: exec %s\n", r.Stored)
	case r.Note != "":
		fmt.Fprintln(w, r.Note)
	}
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// planShowResult is what plan show prints with --json.
type planShowResult struct {
	MessageType string       `json:"message_type"`
	Summary     plan.Summary `json:"summary"`
	Plan        *plan.Sprint `json:"plan"`
}

// Run prints the parsed sprint.
func (c *PlanShowCmd) Run(ctx context.Context, env *Env) error {
	s, err := loadPlan(ctx, env, c.planFlags)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, planShowResult{MessageType: "plan_show", Summary: s.Summary(), Plan: s}, true)
	}
	w := corecmd.NewBufWriter(env.Out)
	writeShowText(w, s)
	return w.Flush()
}

func writeShowText(w io.Writer, s *plan.Sprint) {
	sum := s.Summary()
	stage := ""
	if s.Plan != nil && s.Plan.Stage != "" {
		stage = ", stage " + s.Plan.Stage
	}
	fmt.Fprintf(w, "sprint %d (%s, tree %s%s): %d stories, %d tasks, %d tests (%d pass-on-red), %d waves\n",
		s.Number, s.Dir, shortID(s.TreeID), stage, sum.Stories, sum.Tasks, sum.Tests, sum.PassOnRed, sum.Waves)
	if s.Plan != nil {
		for _, wv := range s.Plan.Waves {
			var parts []string
			for _, e := range wv.Entries {
				p := e.Story
				if len(e.Tasks) > 0 {
					var ts []string
					for _, n := range e.Tasks {
						ts = append(ts, fmt.Sprintf("T%d", n))
					}
					p += " (" + strings.Join(ts, ", ") + ")"
				}
				parts = append(parts, p)
			}
			fmt.Fprintf(w, "wave %d: %s", wv.Number, strings.Join(parts, ", "))
			if wv.StartsWhen != "" {
				fmt.Fprintf(w, "  [starts: %s]", wv.StartsWhen)
			}
			fmt.Fprintln(w)
		}
	}
	if s.Stories != nil {
		for _, st := range s.Stories.Stories {
			fmt.Fprintf(w, "%s %s", st.ID, st.Title)
			d := s.StoryDirOf(st.ID)
			if d == nil {
				fmt.Fprintln(w, "  (no Stage-2 directory)")
				continue
			}
			fmt.Fprintf(w, "  [%s]\n", filepath.Base(d.Dir))
			if d.Tasks == nil {
				continue
			}
			for _, t := range d.Tasks.Tasks {
				tests := 0
				if d.TestPlan != nil {
					for _, sec := range d.TestPlan.Sections {
						if sec.Task == t.Num {
							tests += len(sec.Tests)
						}
					}
				}
				deps := "none"
				if len(t.DependsOn) > 0 {
					deps = strings.Join(t.DependsOn, ", ")
				}
				fmt.Fprintf(w, "  %s %s  files: %s  symbols: %s  tests: %d  depends on: %s\n", t.ID, t.Title, strings.Join(t.Files, " "), strings.Join(t.Symbols, " "), tests, deps)
			}
		}
	}
	if st := s.Standards; st != nil {
		if st.Matrix != nil {
			fmt.Fprintf(w, "gate matrix: %d command(s) (%s:%d)\n", len(st.Matrix.Commands), st.Path, st.Matrix.Line)
		}
		for _, r := range st.Runners {
			fmt.Fprintf(w, "runner %s: %s %s\n", r.Language, r.Format, r.Dialect)
		}
	}
}
