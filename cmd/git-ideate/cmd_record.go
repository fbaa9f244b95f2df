package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"io"
	"os"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/hooks"
)

// RecordCmd groups the record subcommands.
type RecordCmd struct {
	Append     corecmd.RecordAppendCmd   `cmd:"" help:"Append one record."`
	Decision   corecmd.RecordDecisionCmd `cmd:"" help:"Append a decision record (an ADR entry)."`
	Read       corecmd.RecordReadCmd     `cmd:"" help:"Read records, newest first."`
	Prime      corecmd.RecordPrimeCmd    `cmd:"" help:"Print the priming digest of recent records (always exits 0)."`
	SessionEnd RecordSessionEndCmd       `cmd:"" name:"session-end" help:"Append a session-outcome record from a SessionEnd hook payload on stdin (always exits 0)."`
	Export     corecmd.RecordExportCmd   `cmd:"" help:"Write every record to DIR as YYYY/MM/<ULID>.md."`
}

// RecordSessionEndCmd records a session outcome from a hook payload.
type RecordSessionEndCmd struct {
	JSON bool `name:"json" help:"Print {\"id\": ID} instead of the id."`
}

func (*RecordSessionEndCmd) AlwaysZero() {}

// Run reads the payload from stdin.
func (c *RecordSessionEndCmd) Run(ctx context.Context, env *Env) error {
	payload, err := io.ReadAll(io.LimitReader(env.In, hooks.MaxPayload+1))
	if err != nil {
		return apperr.Wrap(apperr.Schema, err, "cannot read the payload from stdin")
	}
	if len(payload) > hooks.MaxPayload {
		return apperr.New(apperr.Schema, "the payload on stdin is more than %d bytes; nothing was recorded", hooks.MaxPayload)
	}
	p, err := hooks.ParseSessionEnd(payload)
	if err != nil {
		return err
	}
	if p.Cwd != "" && env.Dir == "." {
		if fi, err := os.Stat(p.Cwd); err == nil && fi.IsDir() {
			env.Dir = p.Cwd
		}
	}
	st, err := env.Record()
	if err != nil {
		return err
	}
	res, err := st.AppendSessionOutcome(ctx, hooks.SessionOutcome(p))
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, map[string]string{"id": res.Record.ID}, true)
	}
	fmt.Fprintln(env.Out, res.Record.ID)
	return nil
}
