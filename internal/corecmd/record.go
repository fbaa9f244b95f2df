package corecmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/record"
)

// appendResult is the JSON shape of a successful append (the MCP payload).
type appendResult struct {
	OK         bool                `json:"ok"`
	ID         string              `json:"id"`
	Kind       string              `json:"kind"`
	Redactions []redactionJSON     `json:"redactions"`
	Unresolved []record.Unresolved `json:"unresolved_ids"`
	Commit     string              `json:"commit"`
}

type redactionJSON struct {
	Pattern string `json:"pattern"`
	Count   int    `json:"count"`
}

// ReadContent is a text flag's value, or stdin when it is "-". Stdin
// longer than max bytes (the field's own bound) is refused whole: nothing
// is cut and nothing is written.
func ReadContent(env *Env, v, what string, max int) (string, error) {
	if v != "-" {
		return v, nil
	}
	b, err := io.ReadAll(io.LimitReader(env.In, int64(max)+1))
	if err != nil {
		return "", apperr.Wrap(apperr.Schema, err, "cannot read the %s from stdin", what)
	}
	if len(b) > max {
		return "", apperr.New(apperr.Schema, "the %s on stdin is more than %d bytes, the most it may be; nothing was written", what, max)
	}
	return string(b), nil
}

// appendInputs is what record append and record decision read before
// they write: the body (the flag's value, or stdin for -), the
// --references edges, and the record store.
func appendInputs(env *Env, body, what, references string) (string, []record.Reference, *record.Store, error) {
	text, err := ReadContent(env, body, what, record.MaxContent)
	if err != nil {
		return "", nil, nil, err
	}
	refs, err := record.ParseReferences(references)
	if err != nil {
		return "", nil, nil, err
	}
	st, err := env.Record()
	return text, refs, st, err
}

func reportAppend(env *Env, res *record.AppendResult, asJSON bool) error {
	for _, r := range res.Redactions {
		fmt.Fprintf(env.Err, "warning: redacted %d match(es) of %s before writing\n", r.Count, r.Rule)
	}
	for _, u := range res.Unresolved {
		fmt.Fprintf(env.Err, "warning: %s is cited but names no record or board item (%s)\n", u.ID, u.Resolution)
	}
	if !asJSON {
		fmt.Fprintln(env.Out, res.Record.ID)
		return nil
	}
	out := appendResult{OK: true, ID: res.Record.ID, Kind: res.Record.Kind, Redactions: []redactionJSON{},
		Unresolved: res.Unresolved, Commit: res.Commit.String()}
	if out.Unresolved == nil {
		out.Unresolved = []record.Unresolved{}
	}
	for _, r := range res.Redactions {
		out.Redactions = append(out.Redactions, redactionJSON{r.Rule, r.Count})
	}
	return WriteJSON(env.Out, out, false)
}

// RecordAppendCmd appends one record.
type RecordAppendCmd struct {
	Kind       string `required:"" help:"Record kind (open vocabulary: finding, decision, …)."`
	Claim      string `required:"" help:"One-sentence claim."`
	Anchor     string `help:"Verification anchor: how to check the claim."`
	Scope      string `help:"Scope (paths, components)."`
	Content    string `help:"Body text, or - to read it from stdin."`
	Task       string `help:"Task id this record belongs to."`
	Session    string `help:"Session id (default: a fresh cli-<ULID>)."`
	Supersedes string `placeholder:"ULID" help:"Id of the record this one replaces."`
	References string `placeholder:"JSON" help:"Typed edges as JSON: [{\"rel\":\"refutes\",\"id\":\"01…\"}]."`
	JSON       bool   `name:"json" help:"Print the result as JSON."`
}

// CLISession is the session a CLI write names: the one given, else a
// fresh cli-<ULID> (every CLI call is a session of its own).
func CLISession(env *Env, given string) string {
	if given != "" {
		return given
	}
	return "cli-" + record.NewIDSource().New(Now())
}

// Run appends the record.
func (c *RecordAppendCmd) Run(ctx context.Context, env *Env) error {
	content, refs, st, err := appendInputs(env, c.Content, "content", c.References)
	if err != nil {
		return err
	}
	point := "cli:append"
	if strings.TrimSpace(c.Kind) == "decision" {
		point = "cli:decision"
	}
	res, err := st.Append(ctx, record.AppendInput{
		Kind: c.Kind, Claim: c.Claim, VerificationAnchor: c.Anchor, Scope: c.Scope, Content: content,
		Source:     record.Source{CapturePoint: point, SessionID: CLISession(env, c.Session), TaskID: c.Task},
		References: refs, Supersedes: c.Supersedes,
	})
	if err != nil {
		return err
	}
	return reportAppend(env, res, c.JSON)
}

// RecordDecisionCmd appends a decision.
type RecordDecisionCmd struct {
	Claim      string `required:"" help:"The decision, in one sentence."`
	Rationale  string `help:"Why, or - to read it from stdin."`
	Anchor     string `help:"Verification anchor."`
	Scope      string `help:"Scope."`
	Task       string `help:"Task id."`
	Session    string `help:"Session id (default: a fresh cli-<ULID>)."`
	Supersedes string `placeholder:"ULID" help:"Id of the decision this one overturns."`
	References string `placeholder:"JSON" help:"Typed edges as JSON."`
	JSON       bool   `name:"json" help:"Print the result as JSON."`
}

// Run appends the decision.
func (c *RecordDecisionCmd) Run(ctx context.Context, env *Env) error {
	rationale, refs, st, err := appendInputs(env, c.Rationale, "rationale", c.References)
	if err != nil {
		return err
	}
	res, err := st.Decision(ctx, record.DecisionInput{
		Claim: c.Claim, Rationale: rationale, VerificationAnchor: c.Anchor, Scope: c.Scope,
		Source:     record.Source{CapturePoint: "cli:decision", SessionID: CLISession(env, c.Session), TaskID: c.Task},
		References: refs, Supersedes: c.Supersedes,
	})
	if err != nil {
		return err
	}
	return reportAppend(env, res, c.JSON)
}

// RecordReadCmd reads records.
type RecordReadCmd struct {
	Scope          string `help:"Case-insensitive substring of scope, kind, capture point, session or task."`
	ID             string `name:"id" help:"Exactly this record."`
	Limit          *int   `help:"Page size, 1..500 (default 100 with --json). A JSON page also ends before its items pass 40,000 characters; next_cursor resumes."`
	Cursor         string `help:"Resume after a previous page (opaque, bound to its filter)."`
	IncludeContent bool   `help:"Include bodies in JSON rows (requires --json)."`
	JSON           bool   `name:"json" help:"Bounded JSON page: {records, next_cursor}."`
}

// Run prints records.
func (c *RecordReadCmd) Run(ctx context.Context, env *Env) error {
	if c.IncludeContent && !c.JSON {
		return apperr.New(apperr.Schema, "--include-content requires --json")
	}
	if err := CheckLimit(c.Limit); err != nil {
		return err
	}
	st, err := env.Record()
	if err != nil {
		return err
	}
	f := record.Filter{Scope: c.Scope, ID: c.ID}
	if c.JSON {
		page, err := st.ReadPage(record.PageRequest{Filter: f, Limit: c.Limit, Cursor: c.Cursor,
			IncludeContent: c.IncludeContent, Measure: paging.PrettyLen})
		if err != nil {
			return err
		}
		return WriteJSON(env.Out, page, true)
	}
	if c.Limit != nil || c.Cursor != "" {
		page, err := st.ReadPage(record.PageRequest{Filter: f, Limit: c.Limit, Cursor: c.Cursor, IncludeContent: true})
		if err != nil {
			return err
		}
		if len(page.Rows) == 0 {
			fmt.Fprintln(env.Out, "(no records)")
		}
		for i, row := range page.Rows {
			if i > 0 {
				fmt.Fprintln(env.Out)
			}
			printRow(env.Out, row)
		}
		if page.NextCursor != nil {
			fmt.Fprintf(env.Out, "\n(more records — resume with --cursor %s)\n", *page.NextCursor)
		}
		return nil
	}
	return printAll(env, st, f)
}

// printAll streams the whole selection, unpaged and full-bodied.
func printAll(env *Env, st *record.Store, f record.Filter) error {
	sn, err := st.Snapshot()
	if err != nil {
		return err
	}
	back, err := sn.Backlinks()
	if err != nil {
		return err
	}
	w := NewBufWriter(env.Out)
	defer w.Flush()
	n := 0
	if f.ID != "" {
		recs, _, err := sn.Select(f, "", 1)
		if err != nil {
			return err
		}
		for _, r := range recs {
			printRow(w, record.NewRow(r, back[r.ID], true))
			n++
		}
	} else {
		err = sn.Walk("", func(r *record.Record) (bool, error) {
			if !f.Match(r) {
				return true, nil
			}
			if n > 0 {
				fmt.Fprintln(w)
			}
			printRow(w, record.NewRow(r, back[r.ID], true))
			n++
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "(no records)")
	}
	return nil
}

func printRow(w io.Writer, r record.Row) {
	fmt.Fprintf(w, "%s [%s] %s\n", r.ID, r.Kind, r.Source.Timestamp)
	fmt.Fprintf(w, "  claim: %s\n", r.Claim)
	if r.VerificationAnchor != "" {
		fmt.Fprintf(w, "  anchor: %s\n", r.VerificationAnchor)
	}
	if r.Scope != "" {
		fmt.Fprintf(w, "  scope: %s\n", r.Scope)
	}
	src := r.Source.CapturePoint + " / " + r.Source.SessionID
	if r.Source.TaskID != "" {
		src += " / " + r.Source.TaskID
	}
	fmt.Fprintf(w, "  source: %s\n", src)
	for _, ref := range r.References {
		fmt.Fprintf(w, "  → %s: %s\n", ref.Rel, ref.ID)
	}
	for _, ref := range r.ReferencedBy {
		if ref.Rel == "supersedes" {
			fmt.Fprintf(w, "  ⚠ superseded by: %s\n", ref.ID)
		} else {
			fmt.Fprintf(w, "  ← %s by: %s\n", ref.Rel, ref.ID)
		}
	}
	if r.Content != nil && strings.TrimSpace(*r.Content) != "" {
		fmt.Fprintln(w)
		for _, line := range strings.Split(strings.TrimRight(*r.Content, "\n"), "\n") {
			if line == "" {
				fmt.Fprintln(w)
			} else {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
	}
}

// RecordPrimeCmd prints the digest.
type RecordPrimeCmd struct {
	Scope  string `help:"Only records matching this scope."`
	Budget string `help:"How many records (default 10, at most 50)."`
	JSON   bool   `name:"json" help:"Print {\"digest\": TEXT} instead of the text."`
}

func (*RecordPrimeCmd) AlwaysZero() {}

// Run prints the digest; problems go to stderr and never fail the caller.
func (c *RecordPrimeCmd) Run(ctx context.Context, env *Env) error {
	n := record.PrimeDefault
	if c.Budget != "" {
		var v int
		if _, err := fmt.Sscan(c.Budget, &v); err != nil || v <= 0 || fmt.Sprint(v) != strings.TrimSpace(c.Budget) {
			fmt.Fprintf(env.Err, "note: --budget %q is not a positive integer; using %d\n", c.Budget, record.PrimeDefault)
		} else if v > record.PrimeMax {
			fmt.Fprintf(env.Err, "note: --budget %d is above the maximum; using %d\n", v, record.PrimeMax)
			n = record.PrimeMax
		} else {
			n = v
		}
	}
	st, err := env.Record()
	if err != nil {
		return err
	}
	out, err := st.Prime(c.Scope, n)
	if err != nil {
		return err
	}
	if t := env.Telemetry(); t != nil {
		t.PrimingRequested("cli:prime")
	}
	if c.JSON {
		return WriteJSON(env.Out, map[string]string{"digest": out}, true)
	}
	_, err = io.WriteString(env.Out, out)
	return err
}

// RecordExportCmd exports the record tree.
type RecordExportCmd struct {
	Dir  string `arg:"" help:"Destination directory (created if missing)."`
	JSON bool   `name:"json" help:"Print the counts as JSON."`
}

// Run writes the files, with progress on a terminal.
func (c *RecordExportCmd) Run(ctx context.Context, env *Env) error {
	if strings.TrimSpace(c.Dir) == "" {
		return apperr.New(apperr.Schema, "the destination directory must not be empty (use . for the current directory)")
	}
	st, err := env.Record()
	if err != nil {
		return err
	}
	tty := IsTerminal(env.Err)
	stats, err := st.Export(c.Dir, func(done int) {
		if tty && done%500 == 0 {
			fmt.Fprintf(env.Err, "\rexporting… %d records", done)
		}
	})
	if tty {
		fmt.Fprint(env.Err, "\r\033[K")
	}
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "export to %s stopped: %v", c.Dir, err)
	}
	if c.JSON {
		return WriteJSON(env.Out, map[string]any{"dir": c.Dir, "total": stats.Total, "written": stats.Written, "unchanged": stats.Unchanged}, false)
	}
	fmt.Fprintf(env.Out, "exported %d records to %s (%d written, %d unchanged)\n", stats.Total, c.Dir, stats.Written, stats.Unchanged)
	return nil
}
