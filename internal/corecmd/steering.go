package corecmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/steering"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// SteeringCmd groups the steering subcommands.
type SteeringCmd struct {
	Put  SteeringPutCmd  `cmd:"" help:"Create or amend one steering item (gated by ideate.steering)."`
	Read SteeringReadCmd `cmd:"" help:"Select steering items, newest-updated first (gated by ideate.steering)."`
}

// SteeringPutCmd creates or amends an item.
type SteeringPutCmd struct {
	ID         string  `name:"id" required:"" help:"Item id, a stem like GP-23 ([A-Za-z0-9][A-Za-z0-9._-]*)."`
	Kind       string  `help:"Kind (open vocabulary: guiding-principle, policy, …); required for a new item (default: the prior one)."`
	Statement  string  `help:"The steering text, or - to read it from stdin; required for a new item (default: the prior one)."`
	Domain     *string `help:"Domain tag (default: the prior one, or empty for a new item; \"\" clears it)."`
	Status     string  `help:"active, deprecated or superseded (default: the prior one, or active)."`
	Supersedes string  `placeholder:"ID" help:"The item this one replaces (a supersedes edge)."`
	References string  `placeholder:"JSON" help:"Typed edges as JSON: [{\"rel\":\"clarifies\",\"id\":\"GP-1\"}]. With --supersedes or this flag the edge list is replaced; without both it is kept."`
	Actor      string  `help:"Who writes it (recorded as a commit trailer)."`
	PrettyFlag
}

// steeringPutResult is the one line put prints.
type steeringPutResult struct {
	OK      bool   `json:"ok"`
	ID      string `json:"id"`
	Status  string `json:"status"`
	Amended bool   `json:"amended"`
}

// Run writes the item and prints {"ok","id","status","amended"}.
func (c *SteeringPutCmd) Run(ctx context.Context, env *Env) error {
	s, err := env.Steering()
	if err != nil {
		return err
	}
	if !s.Enabled() {
		// The gate answers before any argument is looked at (stdin
		// included).
		_, err := s.Put(ctx, steering.PutInput{})
		return err
	}
	statement := ""
	if c.Statement != "" {
		var err error
		if statement, err = ReadContent(env, c.Statement, "statement", steering.MaxStatement); err != nil {
			return err
		}
	}
	in := steering.PutInput{ID: c.ID, Kind: c.Kind, Statement: statement, Domain: c.Domain, Status: c.Status,
		Supersedes: c.Supersedes, Actor: c.Actor, KeepPrior: true}
	if strings.TrimSpace(c.References) != "" {
		refs, err := record.ParseReferences(c.References)
		if err != nil {
			return err
		}
		in.References = make([]steering.Reference, 0, len(refs))
		for _, r := range refs {
			in.References = append(in.References, steering.Reference{Rel: r.Rel, ID: r.ID})
		}
	}
	res, err := s.Put(ctx, in)
	if err != nil {
		return err
	}
	return WriteJSON(env.Out, steeringPutResult{OK: true, ID: res.ID, Status: res.Status, Amended: res.Amended}, c.JSON)
}

// SteeringReadCmd selects items.
type SteeringReadCmd struct {
	ID             string `name:"id" help:"Only this id (exact)."`
	Domain         string `help:"Only domains containing this text (case-insensitive)."`
	Status         string `help:"Only this status: active, deprecated or superseded."`
	Kind           string `help:"Only this kind (exact)."`
	IncludeHistory bool   `name:"include-history" help:"Include each item's prior versions."`
	Limit          *int   `help:"Page size, 1..500 (default 100 with --json). A JSON page also ends before its items pass 40,000 characters; next_cursor resumes."`
	Cursor         string `help:"Resume after a previous page (opaque, bound to its filter)."`
	JSON           bool   `name:"json" help:"Bounded JSON page: {items, next_cursor}."`
}

// Run prints one bounded JSON page, or a human listing (every matching
// item unless --limit or --cursor is given).
func (c *SteeringReadCmd) Run(ctx context.Context, env *Env) error {
	s, err := env.Steering()
	if err != nil {
		return err
	}
	if !s.Enabled() {
		_, err := s.Read(steering.ReadRequest{})
		return err
	}
	if err := CheckLimit(c.Limit); err != nil {
		return err
	}
	req := steering.ReadRequest{ID: c.ID, Domain: c.Domain, Status: c.Status, Kind: c.Kind,
		IncludeHistory: c.IncludeHistory, Limit: c.Limit, Cursor: c.Cursor}
	if c.JSON {
		req.Measure = paging.PrettyLen
		page, err := s.Read(req)
		if err != nil {
			return err
		}
		return WriteJSON(env.Out, page, true)
	}
	return ListHuman(env.Out, c.Limit, c.Cursor, func(w io.Writer, limit *int, cursor string) (int, *string, error) {
		req.Limit, req.Cursor = limit, cursor
		page, err := s.Read(req)
		if err != nil {
			return 0, nil, err
		}
		for _, r := range page.Items {
			domain := ""
			if r.Domain != "" {
				domain = " (" + textfmt.OneLine(r.Domain) + ")"
			}
			fmt.Fprintf(w, "%s [%s] %s%s: %s\n", r.ID, r.Status, textfmt.OneLine(r.Kind), domain, textfmt.FirstLine(r.Statement))
			for _, ref := range r.References {
				fmt.Fprintf(w, "    %s %s\n", textfmt.OneLine(ref.Rel), ref.ID)
			}
			for _, ref := range r.ReferencedBy {
				fmt.Fprintf(w, "    %s %s\n", passiveRel(textfmt.OneLine(ref.Rel)), ref.ID)
			}
			for _, h := range r.History {
				fmt.Fprintf(w, "    was [%s] until %s: %s\n", h.Status, h.At, textfmt.FirstLine(h.Statement))
			}
		}
		return len(page.Items), page.NextCursor, nil
	})
}

// passiveRel reads an edge from its target's side: "supersedes" becomes
// "superseded by", "clarifies" "clarified by", "relates-to" "related-to
// by"; a rel whose first word is not a verb in -s becomes "<rel> from".
func passiveRel(rel string) string {
	head, rest, _ := strings.Cut(rel, "-")
	if rest != "" {
		rest = "-" + rest
	}
	switch {
	case strings.HasSuffix(head, "ies"):
		return strings.TrimSuffix(head, "ies") + "ied" + rest + " by"
	case strings.HasSuffix(head, "es") && strings.HasSuffix(strings.TrimSuffix(head, "s"), "e"):
		return strings.TrimSuffix(head, "s") + "d" + rest + " by"
	case strings.HasSuffix(head, "s") && !strings.HasSuffix(head, "ss") && len(head) > 2:
		return strings.TrimSuffix(head, "s") + "ed" + rest + " by"
	}
	return rel + " from"
}
