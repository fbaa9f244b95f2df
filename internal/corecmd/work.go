package corecmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/teamsync"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// WorkCmd groups the board subcommands.
type WorkCmd struct {
	Create     WorkCreateCmd     `cmd:"" help:"Create an open work item."`
	Get        WorkGetCmd        `cmd:"" help:"Show one item (after the lazy expiry check)."`
	List       WorkListCmd       `cmd:"" help:"List items, newest first (sweeps expired claims first)."`
	Ready      WorkReadyCmd      `cmd:"" help:"List claimable items, oldest first; --claim takes the first. With a remote that decides claims, the list is this clone's copy as of its last sync: a note on stderr says so (--json: stale, remote, as_of)."`
	UpdateMeta WorkUpdateMetaCmd `cmd:"" name:"update-meta" help:"Change an item's metadata if it is still at --expected-version."`
	Claim      WorkClaimCmd      `cmd:"" help:"Claim an open, claimable item: a lease and a fencing token."`
	Renew      WorkRenewCmd      `cmd:"" help:"Extend the lease held with --token."`
	Release    WorkReleaseCmd    `cmd:"" help:"Hand the claim held with --token back; the item is open again."`
	Complete   WorkCompleteCmd   `cmd:"" help:"Complete the item claimed with --token (writes a work-completion record)."`
	Cancel     WorkCancelCmd     `cmd:"" help:"Cancel an open or in-progress item."`
	Reopen     WorkReopenCmd     `cmd:"" help:"Move a done item back to open."`
	Events     WorkEventsCmd     `cmd:"" help:"Every event of an item, oldest first."`
	Sweep      WorkSweepCmd      `cmd:"" help:"Return expired claims to open (always exits 0)."`
}

// RemoteFlag makes a board verb remote-authoritative.
type RemoteFlag struct {
	Remote string `placeholder:"REMOTE" help:"Succeed only once this remote has accepted the transition (default: git config ideate.remote; unset: local only)."`
}

func printItem(env *Env, v any, pretty bool) error { return WriteJSON(env.Out, v, pretty) }

// PrettyFlag is --json on the verbs whose answer is already one line of
// JSON: every verb takes --json, and here it asks for the indented form.
type PrettyFlag struct {
	JSON bool `name:"json" help:"Pretty JSON (without it: the same JSON on one line)."`
}

func warnUnresolved(env *Env, us []record.Unresolved) {
	for _, u := range us {
		fmt.Fprintf(env.Err, "warning: %s is cited but names no record or board item (%s)\n", u.ID, u.Resolution)
	}
}

func parseBoardRefs(s string) ([]board.Reference, error) {
	refs, err := record.ParseReferences(s)
	if err != nil {
		return nil, err
	}
	out := make([]board.Reference, 0, len(refs))
	for _, r := range refs {
		out = append(out, board.Reference{Rel: r.Rel, ID: r.ID})
	}
	return out, nil
}

// WorkCreateCmd creates an item.
type WorkCreateCmd struct {
	PrettyFlag
	Title      string   `required:"" help:"Title."`
	Spec       string   `required:"" help:"Spec body (opaque to the board), or - for stdin."`
	SpecFormat string   `required:"" name:"spec-format" help:"A hint of the spec's format (plan/outline, a URI scheme…)."`
	Human      string   `required:"" help:"Who creates it."`
	Agent      string   `help:"Through which agent."`
	DependsOn  []string `name:"depends-on" sep:"," placeholder:"ID,ID" help:"Items that must be done before this one can be claimed."`
	Parent     string   `placeholder:"ID" help:"Parent item (containment)."`
	Supersedes string   `placeholder:"ID" help:"The item this one replaces."`
	References string   `placeholder:"JSON" help:"Typed edges as JSON: [{\"rel\":\"…\",\"id\":\"…\"}]."`
	Tenant     string   `help:"Tenant (default local)."`
}

// Run creates the item and prints it as one line of JSON.
func (c *WorkCreateCmd) Run(ctx context.Context, env *Env) error {
	spec, err := ReadContent(env, c.Spec, "spec", board.MaxSpec)
	if err != nil {
		return err
	}
	refs, err := parseBoardRefs(c.References)
	if err != nil {
		return err
	}
	b, err := env.Board()
	if err != nil {
		return err
	}
	out, err := b.Create(ctx, board.CreateInput{Title: c.Title, Spec: spec, SpecFormat: c.SpecFormat,
		CreatedBy: board.Actor{Human: c.Human, Agent: c.Agent}, DependsOn: c.DependsOn, ParentID: c.Parent,
		Supersedes: c.Supersedes, References: refs, TenantID: c.Tenant})
	if err != nil {
		return err
	}
	warnUnresolved(env, out.Unresolved)
	return printItem(env, out.Item, c.JSON)
}

// WorkGetCmd shows one item.
type WorkGetCmd struct {
	ID   string `name:"id" required:"" help:"Item id."`
	JSON bool   `name:"json" help:"Pretty JSON (null when missing)."`
}

// Run prints the item.
func (c *WorkGetCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.Board()
	if err != nil {
		return err
	}
	v, err := b.Get(ctx, c.ID)
	if err != nil {
		return err
	}
	if v == nil {
		if c.JSON {
			fmt.Fprintln(env.Out, "null")
		} else {
			fmt.Fprintln(env.Out, "(not found)")
		}
		return nil
	}
	return printItem(env, v, c.JSON)
}

// WorkListCmd lists items.
type WorkListCmd struct {
	Tenant      string `help:"Only this tenant."`
	Status      string `help:"open, in_progress, done or cancelled."`
	Parent      string `placeholder:"ID" help:"Only the children of this item."`
	Roots       bool   `help:"Only items without a parent."`
	JSON        bool   `name:"json" help:"Bounded JSON page: {items, next_cursor}."`
	IncludeSpec bool   `name:"include-spec" help:"Include specs (requires --json)."`
	Archived    bool   `help:"Also the finished items a sync folded into the archive (--status done or cancelled includes them anyway)."`
	Limit       *int   `help:"Page size, 1..500 (default 100 with --json). A JSON page also ends before its items pass 40,000 characters; next_cursor resumes."`
	Cursor      string `help:"Resume after a previous page (opaque, bound to its filter)."`
}

func (c *WorkListCmd) filter() (board.ListFilter, error) {
	f := board.ListFilter{TenantID: c.Tenant, Status: c.Status}
	if c.Roots && c.Parent != "" {
		return f, apperr.New(apperr.Schema, "--roots and --parent cannot be combined")
	}
	if c.Roots {
		root := ""
		f.Parent = &root
	} else if c.Parent != "" {
		p := c.Parent
		f.Parent = &p
	}
	return f, nil
}

// Run prints the page (or, without --json, --limit or --cursor, every item).
func (c *WorkListCmd) Run(ctx context.Context, env *Env) error {
	if c.IncludeSpec && !c.JSON {
		return apperr.New(apperr.Schema, "--include-spec requires --json")
	}
	if err := CheckLimit(c.Limit); err != nil {
		return err
	}
	f, err := c.filter()
	if err != nil {
		return err
	}
	b, err := env.Board()
	if err != nil {
		return err
	}
	req := board.ListRequest{Filter: f, IncludeSpec: c.IncludeSpec, Limit: c.Limit, Cursor: c.Cursor, Archived: c.Archived}
	if c.JSON {
		req.Measure = paging.PrettyLen
		page, err := b.List(ctx, req)
		if err != nil {
			return err
		}
		return WriteJSON(env.Out, page, true)
	}
	return ListHuman(env.Out, c.Limit, c.Cursor, func(w io.Writer, limit *int, cursor string) (int, *string, error) {
		req.Limit, req.Cursor = limit, cursor
		page, err := b.List(ctx, req)
		if err != nil {
			return 0, nil, err
		}
		for _, r := range page.Items {
			flag := ""
			if r.Claimable {
				flag = " claimable"
			}
			fmt.Fprintf(w, "%s [%s]%s %s\n", r.ID, r.Status, flag, r.Title)
			if r.Status == board.StatusOpen && !r.Claimable {
				if why, err := blockedWhy(ctx, b, r); err != nil {
					return 0, nil, err
				} else if why != "" {
					fmt.Fprintf(w, "    %s\n", why)
				}
			}
		}
		return len(page.Items), page.NextCursor, nil
	})
}

// blockedWhy says why an open item r is not claimable and, when a
// dependency can never be done (cancelled or missing), the way out.
func blockedWhy(ctx context.Context, b *board.Store, r board.Row) (string, error) {
	var waits, dead, keep []string
	for _, d := range r.DependsOn {
		dep, err := b.Get(ctx, d)
		if err != nil {
			return "", err
		}
		switch {
		case dep == nil:
			dead = append(dead, d+" (missing)")
		case dep.Status == board.StatusCancelled:
			dead = append(dead, d+" (cancelled)")
		case dep.Status == board.StatusDone:
			keep = append(keep, d)
		default:
			waits = append(waits, d+" ("+dep.Status+")")
			keep = append(keep, d)
		}
	}
	if len(dead) > 0 {
		return fmt.Sprintf("blocked for good: depends on %s, which can never be done; drop it with: git ideate work update-meta --id %s --expected-version %d --depends-on %q",
			strings.Join(dead, ", "), r.ID, r.Version, strings.Join(keep, ",")), nil
	}
	if len(waits) > 0 {
		return "blocked: waits for " + strings.Join(waits, ", "), nil
	}
	return "blocked: an open or in-progress child must finish first", nil
}

// WorkReadyCmd lists (or claims) ready work.
type WorkReadyCmd struct {
	RemoteFlag
	Tenant  string `help:"Only this tenant."`
	Claim   bool   `help:"Claim the oldest ready item atomically (trying the next one if another claimer wins)."`
	Human   string `help:"Who claims (with --claim)."`
	Agent   string `help:"Through which agent (with --claim)."`
	LeaseMs *int64 `name:"lease-ms" help:"Lease length in ms (with --claim; default 4h)."`
	JSON    bool   `name:"json" help:"JSON output."`
}

// Run lists or claims.
func (c *WorkReadyCmd) Run(ctx context.Context, env *Env) error {
	if !c.Claim && (c.LeaseMs != nil || c.Human != "" || c.Agent != "") {
		return apperr.New(apperr.Schema, "--lease-ms, --human and --agent apply only with --claim")
	}
	b, err := env.AuthBoard(c.Remote)
	if err != nil {
		return err
	}
	if c.Claim {
		if strings.TrimSpace(c.Human) == "" {
			return apperr.New(apperr.Schema, "--claim needs --human")
		}
		it, err := b.ClaimNext(ctx, c.Tenant, board.Actor{Human: c.Human, Agent: c.Agent}, c.LeaseMs)
		if err != nil {
			return err
		}
		if it == nil {
			return apperr.New(board.NotClaimable, "no item is ready to claim")
		}
		return printItem(env, it, c.JSON)
	}
	rows, err := b.Ready(ctx, c.Tenant)
	if err != nil {
		return err
	}
	view := readyView(env, b)
	if c.JSON {
		out := map[string]any{"items": rows}
		if view != nil {
			out["stale"], out["remote"], out["as_of"] = true, view.remote, view.asOf
		}
		return WriteJSON(env.Out, out, true)
	}
	for _, r := range rows {
		fmt.Fprintf(env.Out, "%s %s\n", r.ID, r.Title)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Out, "(nothing ready)")
	}
	if view != nil {
		when := "has not been fetched yet"
		if view.asOf != nil {
			when = "was last fetched at " + *view.asOf
		}
		fmt.Fprintf(env.Err, "note: this is this clone's copy of the board; remote %s decides claims and %s. Items claimed, released or completed there since are not shown: git ideate sync brings them.\n", view.remote, when)
	}
	return nil
}

// staleView says where a ready list may lag: the remote that decides
// claims and when this clone last fetched from it (nil: never).
type staleView struct {
	remote string
	asOf   *string
}

// readyView is non-nil when b has a remote authority: the list is read
// from this clone's copy, which is as old as the last sync. We say so
// rather than fetch first: a fetch costs a round trip on every listing,
// and only a sync (fetch, merge, push) would make the local copy current;
// a claim through the authority is decided on the remote's state anyway.
func readyView(env *Env, b *board.Store) *staleView {
	a, ok := b.Authority.(*teamsync.Authority)
	if !ok {
		return nil
	}
	v := &staleView{remote: a.Remote}
	if t := a.Git.LastFetch(a.Remote); !t.IsZero() {
		ts := textfmt.Timestamp(t)
		v.asOf = &ts
	}
	return v
}

// WorkUpdateMetaCmd changes metadata.
type WorkUpdateMetaCmd struct {
	PrettyFlag
	ID              string    `name:"id" required:""`
	ExpectedVersion int64     `name:"expected-version" required:"" help:"The version you read; a stale one is VERSION_CONFLICT."`
	Title           *string   `help:"New title."`
	Spec            *string   `help:"New spec (- for stdin)."`
	SpecFormat      *string   `name:"spec-format" help:"New spec format."`
	DependsOn       *[]string `name:"depends-on" sep:"," placeholder:"ID,ID" help:"Replace the dependencies (empty string clears)."`
	Parent          string    `placeholder:"ID" help:"Move under this parent."`
	Root            bool      `help:"Make the item a root (no parent)."`
	Supersedes      *string   `placeholder:"ID" help:"Replace the edges with one supersedes edge (plus --references)."`
	References      *string   `placeholder:"JSON" help:"Replace the typed edges (\"[]\" clears)."`
	Human           string    `help:"Who changes it (default: your git user.name)."`
	Agent           string    `help:"Through which agent."`
}

// Run applies the update.
func (c *WorkUpdateMetaCmd) Run(ctx context.Context, env *Env) error {
	in := board.UpdateInput{ExpectedVersion: c.ExpectedVersion, Title: c.Title, SpecFormat: c.SpecFormat,
		Supersedes: c.Supersedes, Actor: board.Actor{Human: c.Human, Agent: c.Agent}}
	if c.Spec != nil {
		spec, err := ReadContent(env, *c.Spec, "spec", board.MaxSpec)
		if err != nil {
			return err
		}
		in.Spec = &spec
	}
	if c.DependsOn != nil {
		deps := []string{}
		for _, d := range *c.DependsOn {
			if strings.TrimSpace(d) != "" {
				deps = append(deps, d)
			}
		}
		in.DependsOn = &deps
	}
	if c.Root && c.Parent != "" {
		return apperr.New(apperr.Schema, "--root and --parent cannot be combined")
	}
	if c.Root {
		root := ""
		in.ParentID = &root
	} else if c.Parent != "" {
		p := c.Parent
		in.ParentID = &p
	}
	if c.References != nil {
		refs, err := parseBoardRefs(*c.References)
		if err != nil {
			return err
		}
		in.References = &refs
	}
	b, err := env.Board()
	if err != nil {
		return err
	}
	out, err := b.UpdateMeta(ctx, c.ID, in)
	if err != nil {
		return err
	}
	warnUnresolved(env, out.Unresolved)
	return printItem(env, out.Item, c.JSON)
}

// WorkClaimCmd claims an item.
type WorkClaimCmd struct {
	PrettyFlag
	RemoteFlag
	ID      string `name:"id" required:""`
	Human   string `required:"" help:"Who claims."`
	Agent   string `help:"Through which agent."`
	LeaseMs *int64 `name:"lease-ms" help:"Lease length in ms (default 4h, at most 30 days)."`
}

// Run claims.
func (c *WorkClaimCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.AuthBoard(c.Remote)
	if err != nil {
		return err
	}
	it, err := b.Claim(ctx, c.ID, board.Actor{Human: c.Human, Agent: c.Agent}, c.LeaseMs)
	if err != nil {
		return err
	}
	return printItem(env, it, c.JSON)
}

// WorkRenewCmd renews a lease.
type WorkRenewCmd struct {
	PrettyFlag
	RemoteFlag
	ID      string `name:"id" required:""`
	Token   int64  `required:"" help:"The fencing token the claim returned."`
	LeaseMs *int64 `name:"lease-ms" help:"New lease length from now, in ms."`
}

// Run renews.
func (c *WorkRenewCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.AuthBoard(c.Remote)
	if err != nil {
		return err
	}
	it, err := b.Renew(ctx, c.ID, c.Token, c.LeaseMs)
	if err != nil {
		return err
	}
	return printItem(env, it, c.JSON)
}

// WorkReleaseCmd releases a claim.
type WorkReleaseCmd struct {
	PrettyFlag
	RemoteFlag
	ID    string `name:"id" required:""`
	Token int64  `required:""`
	Note  string `help:"Why."`
}

// Run releases.
func (c *WorkReleaseCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.AuthBoard(c.Remote)
	if err != nil {
		return err
	}
	out, err := b.Release(ctx, c.ID, c.Token, c.Note)
	if err != nil {
		return err
	}
	warnUnresolved(env, out.Unresolved)
	return printItem(env, out.Item, c.JSON)
}

// WorkCompleteCmd completes an item.
type WorkCompleteCmd struct {
	PrettyFlag
	RemoteFlag
	ID    string `name:"id" required:""`
	Token int64  `required:""`
	Note  string `help:"What was done (becomes the work-completion record)."`
}

// Run completes.
func (c *WorkCompleteCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.AuthBoard(c.Remote)
	if err != nil {
		return err
	}
	out, err := b.Complete(ctx, c.ID, c.Token, c.Note)
	if err != nil {
		return err
	}
	warnUnresolved(env, out.Unresolved)
	return printItem(env, out.Item, c.JSON)
}

// WorkCancelCmd cancels.
type WorkCancelCmd struct {
	PrettyFlag
	RemoteFlag
	ID    string `name:"id" required:""`
	Human string `required:""`
	Agent string
}

// Run cancels.
func (c *WorkCancelCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.AuthBoard(c.Remote)
	if err != nil {
		return err
	}
	it, err := b.Cancel(ctx, c.ID, board.Actor{Human: c.Human, Agent: c.Agent})
	if err != nil {
		return err
	}
	return printItem(env, it, c.JSON)
}

// WorkReopenCmd reopens.
type WorkReopenCmd struct {
	PrettyFlag
	RemoteFlag
	ID    string `name:"id" required:""`
	Human string `required:""`
	Agent string
}

// Run reopens.
func (c *WorkReopenCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.AuthBoard(c.Remote)
	if err != nil {
		return err
	}
	it, err := b.Reopen(ctx, c.ID, board.Actor{Human: c.Human, Agent: c.Agent})
	if err != nil {
		return err
	}
	return printItem(env, it, c.JSON)
}

// WorkEventsCmd prints the audit trail.
type WorkEventsCmd struct {
	ID   string `name:"id" required:""`
	JSON bool   `name:"json" help:"Pretty JSON array."`
}

// Run prints events.
func (c *WorkEventsCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.Board()
	if err != nil {
		return err
	}
	evs, err := b.Events(ctx, c.ID)
	if err != nil {
		return err
	}
	if c.JSON {
		return WriteJSON(env.Out, evs, true)
	}
	printEvents(env.Out, evs)
	return nil
}

func printEvents(w io.Writer, evs []board.Event) {
	if len(evs) == 0 {
		fmt.Fprintln(w, "(no events)")
	}
	for _, e := range evs {
		fmt.Fprintf(w, "%s %s actor=%s", e.At, e.Transition, e.Actor.Human)
		if e.ClaimToken != nil {
			fmt.Fprintf(w, " token=%d", *e.ClaimToken)
		}
		if e.Note != "" {
			fmt.Fprintf(w, " note=%q", e.Note)
		}
		fmt.Fprintln(w)
	}
}

// WorkSweepCmd sweeps expired claims.
type WorkSweepCmd struct {
	Tenant string `help:"Only this tenant."`
	JSON   bool   `name:"json" help:"Print {\"reclaimed\": N} on stdout."`
}

func (*WorkSweepCmd) AlwaysZero() {}

// Run sweeps; it never fails its caller.
func (c *WorkSweepCmd) Run(ctx context.Context, env *Env) error {
	b, err := env.Board()
	if err != nil {
		return err
	}
	n, err := b.Sweep(ctx, c.Tenant)
	if c.JSON && err == nil {
		return WriteJSON(env.Out, map[string]int{"reclaimed": n}, true)
	}
	if n > 0 {
		fmt.Fprintf(env.Err, "reclaimed %d expired claim(s)\n", n)
	}
	return err
}
