package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"strings"

	"github.com/ideate/git-ideate/internal/teamsync"
)

// SyncCmd shares the record, board, steering and notes through a remote.
type SyncCmd struct {
	Remote string `arg:"" optional:"" help:"The remote (default: git config ideate.remote, else the only remote)."`
	JSON   bool   `name:"json" help:"Print the summary as JSON."`
}

// Run syncs.
func (c *SyncCmd) Run(ctx context.Context, env *Env) error {
	name, err := env.Remote(c.Remote)
	if err != nil {
		return err
	}
	g, err := env.Git()
	if err != nil {
		return err
	}
	rec, err := env.Record()
	if err != nil {
		return err
	}
	b, err := env.Board()
	if err != nil {
		return err
	}
	y := &teamsync.Syncer{Git: g, Record: rec, Board: b, Remote: name}
	if !c.JSON && corecmd.IsTerminal(env.Err) {
		y.Progress = env.Err
	}
	sum, err := y.Sync(ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, sum, false)
	}
	fmt.Fprintf(env.Out, "synced with %s", sum.Remote)
	if sum.Rounds > 1 {
		fmt.Fprintf(env.Out, " in %d rounds", sum.Rounds)
	}
	fmt.Fprintln(env.Out)
	fmt.Fprintf(env.Out, "  record:   %s\n  steering: %s\n  notes:    %s\n  exec:     %s\n", sum.Record, sum.Steering, sum.Notes, sum.Exec)
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{sum.ItemsPulled, "pulled"}, {sum.ItemsPushed, "pushed"}, {sum.ItemsRebased, "rebased"},
		{sum.Archived, "archived (items and task refs)"}, {sum.Unarchived, "dropped here (archived elsewhere)"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		parts = []string{"up-to-date"}
	}
	fmt.Fprintf(env.Out, "  items:    %s\n", strings.Join(parts, ", "))
	for _, m := range []struct {
		what string
		n    teamsync.Moved
	}{{"tasks", sum.Tasks}, {"branches", sum.Branches}} {
		if m.n != (teamsync.Moved{}) {
			fmt.Fprintf(env.Out, "  %-9s %d pulled, %d pushed", m.what+":", m.n.Pulled, m.n.Pushed)
			if m.n.Merged > 0 {
				fmt.Fprintf(env.Out, ", %d merged", m.n.Merged)
			}
			fmt.Fprintln(env.Out)
		}
	}
	for _, l := range sum.Lost {
		fmt.Fprintf(env.Out, "  lost: %s of %s — %s: %s", l.Transition, l.Item, l.Code, l.Message)
		if l.Record != "" {
			fmt.Fprintf(env.Out, " (recorded as %s)", l.Record)
		}
		fmt.Fprintln(env.Out)
	}
	return nil
}
