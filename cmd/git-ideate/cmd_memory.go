package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/memory"
)

// MemoryCmd groups the commands over docs/agents/memory.md.
type MemoryCmd struct {
	Add   MemoryAddCmd   `cmd:"" help:"Add one role-scoped lesson (one or two lines, with its evidence) to docs/agents/memory.md; refused when it would relax an invariant, repeats an entry or passes the role's bound."`
	List  MemoryListCmd  `cmd:"" help:"Print the memory entries, of one role (with those for all roles) or of every role."`
	Check MemoryCheckCmd `cmd:"" help:"Check docs/agents/memory.md: its shape, dates, evidence, duplicates, bounds and invariant-relaxing entries."`
}

// MemoryAddCmd is `git ideate memory add`.
type MemoryAddCmd struct {
	Role     string `required:"" help:"The role the lesson is for (green-worker, red-worker, …, or all)." placeholder:"ROLE"`
	Text     string `arg:"" help:"The lesson: one line, or two separated by a newline."`
	Evidence string `required:"" help:"Where it comes from: exec entry ids, record ids, commits." placeholder:"TEXT"`
	Date     string `help:"The date (YYYY-MM-DD; default today, UTC)." placeholder:"DATE"`
	Bound    int    `help:"Entries a role may hold (default 20)." placeholder:"N"`
	JSON     bool   `name:"json" help:"Print JSON."`
}

// MemoryListCmd is `git ideate memory list`.
type MemoryListCmd struct {
	Role string `help:"Only this role's entries and those for all roles." placeholder:"ROLE"`
	JSON bool   `name:"json" help:"Print JSON."`
}

// MemoryCheckCmd is `git ideate memory check`.
type MemoryCheckCmd struct {
	Bound int  `help:"Entries a role may hold (default 20)." placeholder:"N"`
	JSON  bool `name:"json" help:"Print JSON."`
}

// workTop is the top of the working tree the command runs in.
func workTop(env *Env) (string, error) {
	g, err := env.Git()
	if err != nil {
		return "", err
	}
	if g.Repo().WorkTree == "" {
		return "", apperr.New(apperr.NotARepo, "this repository has no working tree, so it has no %s", memory.File)
	}
	return g.Repo().WorkTree, nil
}

type memoryAddOut struct {
	MessageType string       `json:"message_type"`
	Entry       memory.Entry `json:"entry"`
}

// Run adds the entry.
func (c *MemoryAddCmd) Run(ctx context.Context, env *Env) error {
	top, err := workTop(env)
	if err != nil {
		return err
	}
	if c.Bound < 0 {
		return apperr.New(apperr.Schema, "--bound must be 1 or more (0: the default)")
	}
	e, err := memory.Add(ctx, top, memory.Entry{Role: c.Role, Text: c.Text, Evidence: c.Evidence, Date: c.Date},
		memory.Options{Bound: c.Bound, Now: corecmd.Now})
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, memoryAddOut{MessageType: "memory_add", Entry: e}, false)
	}
	fmt.Fprintf(env.Out, "added to %s at line %d (role %s)\n", memory.File, e.Line, e.Role)
	return nil
}

type memoryListOut struct {
	MessageType string         `json:"message_type"`
	File        string         `json:"file"`
	Exists      bool           `json:"exists"`
	Entries     []memory.Entry `json:"entries"`
}

// Run prints the entries.
func (c *MemoryListCmd) Run(ctx context.Context, env *Env) error {
	top, err := workTop(env)
	if err != nil {
		return err
	}
	d, ok, err := memory.Read(top, 0)
	if err != nil {
		return err
	}
	es := d.Entries
	if c.Role != "" {
		if !memory.ValidRole(c.Role) {
			return apperr.New(apperr.Schema, "--role %q is not a role name", c.Role)
		}
		es = d.For(c.Role)
	}
	if len(d.Findings) > 0 {
		env.Warn(fmt.Sprintf("%s has %d finding(s); run git ideate memory check", memory.File, len(d.Findings)))
	}
	if c.JSON {
		if es == nil {
			es = []memory.Entry{}
		}
		return corecmd.WriteJSON(env.Out, memoryListOut{MessageType: "memory_list", File: memory.File, Exists: ok, Entries: es}, false)
	}
	w := corecmd.NewBufWriter(env.Out)
	if !ok {
		fmt.Fprintf(w, "no %s\n", memory.File)
	}
	for _, e := range es {
		fmt.Fprintf(w, "%s\t%s\n", e.Role, e.Render())
	}
	return w.Flush()
}

type memoryCheckOut struct {
	MessageType string           `json:"message_type"`
	File        string           `json:"file"`
	Exists      bool             `json:"exists"`
	Entries     int              `json:"entries"`
	Findings    []memory.Finding `json:"findings"`
}

// Run checks the file; findings are SCHEMA (exit 1) after they are printed.
func (c *MemoryCheckCmd) Run(ctx context.Context, env *Env) error {
	top, err := workTop(env)
	if err != nil {
		return err
	}
	if c.Bound < 0 {
		return apperr.New(apperr.Schema, "--bound must be 1 or more (0: the default)")
	}
	d, ok, err := memory.Read(top, c.Bound)
	if err != nil {
		return err
	}
	if c.JSON {
		fs := d.Findings
		if fs == nil {
			fs = []memory.Finding{}
		}
		if err := corecmd.WriteJSON(env.Out, memoryCheckOut{MessageType: "memory_check", File: memory.File, Exists: ok, Entries: len(d.Entries), Findings: fs}, false); err != nil {
			return err
		}
	} else {
		for _, f := range d.Findings {
			fmt.Fprintln(env.Out, f)
		}
		if len(d.Findings) == 0 {
			if ok {
				fmt.Fprintf(env.Out, "%s: %d entries, no findings\n", memory.File, len(d.Entries))
			} else {
				fmt.Fprintf(env.Out, "no %s (no memory yet)\n", memory.File)
			}
		}
	}
	if len(d.Findings) > 0 {
		return apperr.New(apperr.Schema, "%s has %d finding(s)", memory.File, len(d.Findings))
	}
	return nil
}
