package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"strings"

	"github.com/ideate/git-ideate/internal/scaffold"
)

// ScaffoldCmd is the mechanical part of the post-RED scaffold pass.
type ScaffoldCmd struct {
	Task    string `required:"" help:"Task whose worktree is scaffolded (S1-01/T1)."`
	Attempt int    `help:"Attempt the actions are logged under (default: the task's)." placeholder:"N"`
	planFlags
}

// scaffoldOut is what scaffold prints with --json.
type scaffoldOut struct {
	MessageType string `json:"message_type"`
	*scaffold.TaskResult
}

// Run scaffolds, logs each action and prints them with what was left to
// the post-planner. It commits nothing.
func (c *ScaffoldCmd) Run(ctx context.Context, env *Env) error {
	d, err := scaffoldDeps(env, c.planFlags)
	if err != nil {
		return err
	}
	r, err := scaffold.RunTask(ctx, d, c.Task, c.Attempt)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, scaffoldOut{MessageType: "scaffold", TaskResult: r}, true)
	}
	for _, a := range r.Actions {
		fmt.Fprintf(env.Out, "%s %s %s\n", a.Op, a.Path, a.Symbol)
	}
	for _, u := range r.Undecided {
		fmt.Fprintf(env.Out, "undecided %s: %s\n", u.Symbol, u.Reason)
	}
	if len(r.Actions) == 0 && len(r.Undecided) == 0 {
		fmt.Fprintln(env.Out, "nothing to scaffold")
	}
	for _, f := range r.Formatted {
		if f.Error != "" {
			fmt.Fprintf(env.Out, "note: %s could not format %s (%s); they are as the scaffold wrote them\n", f.Tool, strings.Join(f.Paths, " "), f.Error)
		} else {
			fmt.Fprintf(env.Out, "formatted with %s: %s\n", f.Tool, strings.Join(f.Paths, " "))
		}
	}
	if r.Weaker {
		fmt.Fprintln(env.Out, "note: this build has no tree-sitter; files outside Go were read by the weaker fallback reader")
	}
	return nil
}
