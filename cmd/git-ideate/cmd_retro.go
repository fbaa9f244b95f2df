package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"io"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/retro"
)

// RetroCmd is `git ideate retro`.
type RetroCmd struct {
	Since string `help:"Where the trail starts: last-planning (after the newest plan PASS; the default), a date (YYYY-MM-DD) or an RFC 3339 time; all for everything." default:"last-planning" placeholder:"WHEN"`
	All   bool   `help:"List every one-off pattern too (by default only their count)."`
	JSON  bool   `name:"json" help:"Print JSON."`
}

type retroOut struct {
	MessageType string `json:"message_type"`
	retro.Report
}

// runRetro loads and groups the trail.
func runRetro(ctx context.Context, env *Env, since string) (retro.Report, error) {
	log, err := env.Exec()
	if err != nil {
		return retro.Report{}, err
	}
	rec, err := env.Record()
	if err != nil {
		return retro.Report{}, err
	}
	if since == "all" {
		since = ""
	}
	return retro.Load(ctx, retro.Sources{Exec: log, Record: rec}, since)
}

// Run prints the report.
func (c *RetroCmd) Run(ctx context.Context, env *Env) error {
	rep, err := runRetro(ctx, env, c.Since)
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, retroOut{MessageType: "retro", Report: rep}, false)
	}
	w := corecmd.NewBufWriter(env.Out)
	writeRetro(w, rep, c.All)
	return w.Flush()
}

func writeRetro(w io.Writer, rep retro.Report, all bool) {
	fmt.Fprintf(w, "retrospective input, %s: %d trail entries, %d events", rep.SinceNote, rep.Entries, rep.Events)
	if len(rep.Counts) > 0 {
		var kinds []string
		for k := range rep.Counts {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		var parts []string
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%s %d", k, rep.Counts[k]))
		}
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	pattern := func(p retro.Pattern) {
		subject := p.Subject
		if subject == "" {
			subject = "-"
		}
		class := p.Class
		if class == "" {
			class = "-"
		}
		fmt.Fprintf(w, "%4d  %s %s %s %s\n", p.Count, p.Kind, p.Phase, class, subject)
		fmt.Fprintf(w, "      tasks: %s\n", orDash(strings.Join(p.Tasks, " ")))
		fmt.Fprintf(w, "      evidence: %s\n", strings.Join(p.Evidence, " "))
	}
	fmt.Fprintf(w, "\nrecurring (seen at least twice): %d\n", len(rep.Recurring))
	for _, p := range rep.Recurring {
		pattern(p)
	}
	fmt.Fprintf(w, "\none-offs: %d\n", len(rep.OneOffs))
	if all {
		for _, p := range rep.OneOffs {
			pattern(p)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
