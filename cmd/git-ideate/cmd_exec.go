package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/corecmd"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/execlog"
)

// ExecCmd groups the commands over the execution log.
type ExecCmd struct {
	Log    ExecLogCmd    `cmd:"" help:"Print the execution log (refs/ideate/exec) as the playbook's execution.log lines, oldest first."`
	Export ExecExportCmd `cmd:"" help:"Write a sprint's execution log to docs/agents/sprint<N>/execution.log, regenerated whole from refs/ideate/exec."`
}

// ExecLogCmd prints the log.
type ExecLogCmd struct {
	Task  string `help:"Only this task's entries (S1-01/T2)." placeholder:"TASK"`
	Phase string `help:"Only this phase's entries (red, scaffold, green, final, …)." placeholder:"PHASE"`
	Limit int    `help:"Only the newest N entries (still printed oldest first)." placeholder:"N"`
	JSON  bool   `name:"json" help:"Print JSON (every field of every entry)."`
}

// ExecExportCmd writes the ledger file.
type ExecExportCmd struct {
	Sprint int    `help:"Sprint number (default: the highest-numbered sprint<N> directory)." placeholder:"N"`
	Dir    string `help:"Planning root holding sprint<N>/ (or a sprint directory itself); default docs/agents at the top of the working tree." placeholder:"DIR"`
	Out    string `help:"File to write (default: execution.log in the sprint's directory)." placeholder:"PATH"`
	JSON   bool   `name:"json" help:"Print JSON."`
}

// execLogOut is what exec log prints with --json.
type execLogOut struct {
	MessageType string          `json:"message_type"`
	Entries     []execlog.Entry `json:"entries"`
}

// runExecLog returns the entries f selects, oldest first.
func runExecLog(ctx context.Context, env *Env, f execlog.Filter) ([]execlog.Entry, error) {
	if f.Limit < 0 {
		return nil, apperr.New(apperr.Schema, "--limit must be 0 (all) or more")
	}
	l, err := env.Exec()
	if err != nil {
		return nil, err
	}
	es, err := l.List(ctx, f)
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	return es, nil
}

func (c *ExecLogCmd) Run(ctx context.Context, env *Env) error {
	es, err := runExecLog(ctx, env, execlog.Filter{Task: c.Task, Phase: c.Phase, Limit: c.Limit})
	if err != nil {
		return err
	}
	if c.JSON {
		if es == nil {
			es = []execlog.Entry{}
		}
		return corecmd.WriteJSON(env.Out, execLogOut{"exec_log", es}, true)
	}
	w := corecmd.NewBufWriter(env.Out)
	defer w.Flush()
	for _, e := range es {
		fmt.Fprintln(w, execlog.Line(e))
	}
	return nil
}

// execExportOut is what exec export prints with --json.
type execExportOut struct {
	MessageType string `json:"message_type"`
	Sprint      int    `json:"sprint"`
	Path        string `json:"path"`
	Lines       int    `json:"lines"`
}

// inSprint reports whether e belongs to sprint n: its sprint says so, or,
// when it names none, its story does (S<n>-NN).
func inSprint(e execlog.Entry, n int) bool {
	if e.Sprint != 0 {
		return e.Sprint == n
	}
	return strings.HasPrefix(e.Story, "S"+strconv.Itoa(n)+"-")
}

// runExecExport writes the sprint's ledger, atomically, and says where.
func runExecExport(ctx context.Context, env *Env, c *ExecExportCmd) (execExportOut, error) {
	sprint, out := c.Sprint, c.Out
	if sprint < 0 {
		return execExportOut{}, apperr.New(apperr.Schema, "--sprint must be a sprint number")
	}
	if sprint == 0 || out == "" {
		s, err := loadPlan(ctx, env, planFlags{Sprint: sprint, Dir: c.Dir})
		if err != nil {
			return execExportOut{}, err
		}
		sprint = s.Number
		if out == "" {
			fsRoot, _ := planRoot(env, planFlags{Dir: c.Dir})
			out = filepath.Join(fsRoot, filepath.FromSlash(s.Dir), "execution.log")
		}
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(env.Dir, out)
	}
	es, err := runExecLog(ctx, env, execlog.Filter{})
	if err != nil {
		return execExportOut{}, err
	}
	var b strings.Builder
	n := 0
	for _, e := range es {
		if inSprint(e, sprint) {
			b.WriteString(execlog.Line(e) + "\n")
			n++
		}
	}
	// An export killed before its rename left its temporary file in the
	// sprint directory: this one removes it. Exports of this clone take
	// turns, so under the lock any such file is a dead export's.
	g, err := env.Git()
	if err != nil {
		return execExportOut{}, err
	}
	release, err := g.LockState(ctx, "exec-export.lock")
	if err != nil {
		return execExportOut{}, err
	}
	defer release()
	atomicfile.SweepStale(out, 0)
	if err := writeFileAtomic(out, []byte(b.String()), 0o644); err != nil {
		return execExportOut{}, err
	}
	return execExportOut{"exec_export", sprint, out, n}, nil
}

func (c *ExecExportCmd) Run(ctx context.Context, env *Env) error {
	r, err := runExecExport(ctx, env, c)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, r, true)
	}
	fmt.Fprintf(env.Out, "wrote %d lines of sprint %d to %s\n", r.Lines, r.Sprint, r.Path)
	return nil
}
