package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/transcripts"
)

// TranscriptsCmd groups the commands over the clone's transcript store.
type TranscriptsCmd struct {
	Du    TranscriptsDuCmd    `cmd:"" help:"Print the size of the transcript store under .git/ideate/transcripts: the global log, session copies and each task's slice."`
	Prune TranscriptsPruneCmd `cmd:"" help:"Cut the transcript store by hand (nothing else ever does): copies older than --before and the event log lines before it, or one --task's slice."`
}

// TranscriptsDuCmd is `git ideate transcripts du`.
type TranscriptsDuCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

// TranscriptsPruneCmd is `git ideate transcripts prune`.
type TranscriptsPruneCmd struct {
	Before string `help:"Cut what was captured before this date (YYYY-MM-DD, UTC, or an RFC 3339 time) or this long ago (a duration such as 720h)." placeholder:"WHEN"`
	Task   string `help:"Remove this task's whole slice (S1-01/T2)." placeholder:"TASK"`
	DryRun bool   `name:"dry-run" help:"Say what would be removed, remove nothing."`
	JSON   bool   `name:"json" help:"Print JSON."`
}

func transcriptStore(env *Env) (*transcripts.Store, error) {
	g, err := env.Git()
	if err != nil {
		return nil, err
	}
	s := transcripts.Open(g.Repo().StateDir())
	s.Now = corecmd.Now
	return s, nil
}

type transcriptsDuOut struct {
	MessageType string `json:"message_type"`
	transcripts.Usage
}

// Run prints the size report.
func (c *TranscriptsDuCmd) Run(ctx context.Context, env *Env) error {
	s, err := transcriptStore(env)
	if err != nil {
		return err
	}
	u, err := s.Usage(ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		if u.Areas == nil {
			u.Areas = []transcripts.Area{}
		}
		return corecmd.WriteJSON(env.Out, transcriptsDuOut{MessageType: "transcripts_du", Usage: u}, false)
	}
	w := corecmd.NewBufWriter(env.Out)
	for _, a := range u.Areas {
		fmt.Fprintf(w, "%10s  %5d files  %s\n", humanBytes(a.Bytes), a.Files, a.Name)
	}
	fmt.Fprintf(w, "%10s  %5d files  total in %s\n", humanBytes(u.Bytes), u.Files, u.Root)
	return w.Flush()
}

// humanBytes is n in B, KiB, MiB or GiB with one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 3 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", f, [...]string{"B", "KiB", "MiB", "GiB"}[i])
}

// parseWhen reads --before: a date, an RFC 3339 time, or a duration ago.
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, apperr.New(apperr.Schema, "--before %q is not a date (YYYY-MM-DD), an RFC 3339 time or a positive duration (720h)", s)
}

type transcriptsPruneOut struct {
	MessageType string `json:"message_type"`
	transcripts.PruneResult
}

// Run prunes.
func (c *TranscriptsPruneCmd) Run(ctx context.Context, env *Env) error {
	var o transcripts.PruneOptions
	if c.Before != "" {
		t, err := parseWhen(c.Before, corecmd.Now())
		if err != nil {
			return err
		}
		o.Before = t
	}
	if c.Before == "" && c.Task == "" {
		return apperr.New(apperr.Schema, "say what to prune: --before WHEN, --task TASK, or both")
	}
	o.Task, o.DryRun = c.Task, c.DryRun
	s, err := transcriptStore(env)
	if err != nil {
		return err
	}
	res, err := s.Prune(ctx, o)
	if err != nil {
		return err
	}
	if c.JSON {
		if res.Files == nil {
			res.Files = []string{}
		}
		return corecmd.WriteJSON(env.Out, transcriptsPruneOut{MessageType: "transcripts_prune", PruneResult: res}, false)
	}
	w := corecmd.NewBufWriter(env.Out)
	verb := "removed"
	if c.DryRun {
		verb = "would remove"
	}
	for _, f := range res.Files {
		fmt.Fprintf(w, "%s %s\n", verb, f)
	}
	fmt.Fprintf(w, "%s %d files and %d event log lines, %s\n", verb, len(res.Files), res.LinesCut, humanBytes(res.BytesFreed))
	return w.Flush()
}
