package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/ideate/git-ideate/internal/corecmd"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/ideate/git-ideate/internal/apperr"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/steering"
)

// steeringEnv is a fresh Env over dir whose output and errors go to buf.
func steeringEnv(dir, stdin string, buf *bytes.Buffer) *Env {
	return &Env{Dir: dir, In: strings.NewReader(stdin), Out: buf, Err: buf}
}

// runSteering runs one steering command against a fresh Env, as the CLI
// does for one invocation.
func runSteering(t *testing.T, dir, stdin string, cmd interface {
	Run(context.Context, *Env) error
}) (string, error) {
	t.Helper()
	var buf bytes.Buffer
	env := steeringEnv(dir, stdin, &buf)
	defer env.Close()
	err := cmd.Run(t.Context(), env)
	return buf.String(), err
}

func TestSteering_Gated(t *testing.T) {
	dir := gt.NewRepo(t)
	before := gt.Git(t, dir, "for-each-ref", "refs/ideate/") + gt.Git(t, dir, "count-objects", "-v")
	cmds := []interface {
		Run(context.Context, *Env) error
	}{
		&corecmd.SteeringPutCmd{ID: "GP-1", Kind: "policy", Statement: "valid"},
		&corecmd.SteeringPutCmd{ID: "../bad", Status: "bogus", Statement: "-", References: "not json"},
		&corecmd.SteeringReadCmd{},
		&corecmd.SteeringReadCmd{Status: "bogus", Cursor: "garbage", JSON: true},
	}
	for i, c := range cmds {
		out, err := runSteering(t, dir, "stdin that must not be read", c)
		if !apperr.Is(err, steering.Gated) {
			t.Fatalf("command %d: error %v, want GATED", i, err)
		}
		if out != "" {
			t.Fatalf("command %d printed %q", i, out)
		}
	}
	gt.Git(t, dir, "config", "ideate.steering", "false")
	if _, err := runSteering(t, dir, "", &corecmd.SteeringReadCmd{}); !apperr.Is(err, steering.Gated) {
		t.Fatalf("ideate.steering=false: %v", err)
	}
	if after := gt.Git(t, dir, "for-each-ref", "refs/ideate/") + gt.Git(t, dir, "count-objects", "-v"); after != before {
		t.Fatal("a gated command changed the repository")
	}
}

func TestSteering_PutRead(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.steering", "true")

	out, err := runSteering(t, dir, "Keep state in git.\n\nNo server.", &corecmd.SteeringPutCmd{ID: "GP-1", Kind: "guiding-principle", Statement: "-", Domain: steeringPtr("Storage")})
	if err != nil {
		t.Fatal(err)
	}
	if out != `{"ok":true,"id":"GP-1","status":"active","amended":false}`+"\n" {
		t.Fatalf("put printed %q", out)
	}
	if _, err := runSteering(t, dir, "", &corecmd.SteeringPutCmd{ID: "POL-1", Kind: "policy", Statement: "Use the lockfile CAS.",
		References: `[{"rel":"clarifies","id":"GP-1"}]`, Actor: "dan"}); err != nil {
		t.Fatal(err)
	}
	out, err = runSteering(t, dir, "", &corecmd.SteeringPutCmd{ID: "GP-1", Kind: "guiding-principle", Statement: "Keep state in refs.", Status: "deprecated"})
	if err != nil || out != `{"ok":true,"id":"GP-1","status":"deprecated","amended":true}`+"\n" {
		t.Fatalf("amend printed %q, %v", out, err)
	}
	for _, bad := range []*corecmd.SteeringPutCmd{
		{ID: "GP-2", Kind: "k", Statement: "s", References: `{"rel":"x"}`},
		{ID: "GP-2", Kind: "k", Statement: "s", Status: "gone"},
		{ID: "bad id", Kind: "k", Statement: "s"},
	} {
		if _, err := runSteering(t, dir, "", bad); !apperr.Is(err, apperr.Schema) {
			t.Fatalf("%+v: %v, want SCHEMA", bad, err)
		}
	}
	if _, err := runSteering(t, dir, "", &corecmd.SteeringPutCmd{ID: "GP-2", Kind: "k", Statement: "s", Supersedes: "GP-9"}); !apperr.Is(err, apperr.DanglingSupersedes) {
		t.Fatalf("dangling: %v", err)
	}

	// --json: the bounded page.
	out, err = runSteering(t, dir, "", &corecmd.SteeringReadCmd{JSON: true, IncludeHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []struct {
			ID            string               `json:"id"`
			Status        string               `json:"status"`
			Domain        string               `json:"domain"`
			Statement     string               `json:"statement"`
			ReferencedBy  []steering.Reference `json:"referenced_by"`
			HistoryLength int                  `json:"history_length"`
			History       []steering.Amendment `json:"history"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "{\n  \"items\": [\n    {\n      \"id\": \"GP-1\",") {
		t.Fatalf("not the pretty page:\n%s", out)
	}
	if len(page.Items) != 2 || page.NextCursor != nil {
		t.Fatalf("page = %+v", page)
	}
	gp := page.Items[0]
	if gp.ID != "GP-1" || gp.Status != "deprecated" || gp.Domain != "Storage" || gp.HistoryLength != 1 ||
		len(gp.History) != 1 || gp.History[0].Statement != "Keep state in git.\n\nNo server." ||
		len(gp.ReferencedBy) != 1 || gp.ReferencedBy[0] != (steering.Reference{Rel: "clarifies", ID: "POL-1"}) {
		t.Fatalf("GP-1 row = %+v", gp)
	}

	// Paged JSON with a cursor bound to its filter.
	out, err = runSteering(t, dir, "", &corecmd.SteeringReadCmd{JSON: true, Limit: steeringPtr(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || page.NextCursor == nil || len(page.Items) != 1 {
		t.Fatalf("limit 1 page: %v\n%s", err, out)
	}
	if _, err := runSteering(t, dir, "", &corecmd.SteeringReadCmd{JSON: true, Limit: steeringPtr(1), Cursor: *page.NextCursor, Kind: "policy"}); !apperr.Is(err, apperr.CursorMismatch) {
		t.Fatalf("cursor under another filter: %v", err)
	}
	out, err = runSteering(t, dir, "", &corecmd.SteeringReadCmd{JSON: true, Limit: steeringPtr(1), Cursor: *page.NextCursor})
	if err != nil || !strings.Contains(out, `"id": "POL-1"`) || !strings.Contains(out, `"next_cursor": null`) {
		t.Fatalf("second page: %v\n%s", err, out)
	}

	// The human listing.
	out, err = runSteering(t, dir, "", &corecmd.SteeringReadCmd{})
	if err != nil {
		t.Fatal(err)
	}
	want := "GP-1 [deprecated] guiding-principle (Storage): Keep state in refs.\n" +
		"    clarified by POL-1\n" +
		"POL-1 [active] policy: Use the lockfile CAS.\n" +
		"    clarifies GP-1\n"
	if out != want {
		t.Fatalf("listing:\n%s\nwant\n%s", out, want)
	}
	out, err = runSteering(t, dir, "", &corecmd.SteeringReadCmd{Limit: steeringPtr(1)})
	if err != nil || !strings.HasPrefix(out, "GP-1 [deprecated]") || !strings.Contains(out, "(more items — resume with --cursor ") {
		t.Fatalf("paged listing: %v\n%s", err, out)
	}
	out, err = runSteering(t, dir, "", &corecmd.SteeringReadCmd{Status: "superseded"})
	if err != nil || out != "(no items)\n" {
		t.Fatalf("empty listing: %v %q", err, out)
	}
	if _, err := runSteering(t, dir, "", &corecmd.SteeringReadCmd{Status: "gone"}); !apperr.Is(err, apperr.Schema) {
		t.Fatalf("bad status filter: %v", err)
	}
	if _, err := runSteering(t, dir, "", &corecmd.SteeringReadCmd{Limit: steeringPtr(-1)}); !apperr.Is(err, apperr.Schema) {
		t.Fatalf("negative limit: %v", err)
	}
	gt.Fsck(t, dir)
}

// The kong tags parse: the commands run through a parser built on a
// stand-in root, since corecmd.SteeringCmd is not wired into CLI here.
func TestSteering_KongGrammar(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.steering", "true")
	parse := func(stdin string, args ...string) (string, error) {
		t.Helper()
		var root struct {
			Steering corecmd.SteeringCmd `cmd:""`
		}
		var buf bytes.Buffer
		env := steeringEnv(dir, stdin, &buf)
		defer env.Close()
		p, err := kong.New(&root, kong.Name("git ideate"), kong.Bind(env), kong.BindTo(t.Context(), (*context.Context)(nil)), kong.Writers(&buf, &buf),
			kong.Exit(func(int) { t.Fatalf("kong exited: %s", buf.String()) }))
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := p.Parse(args)
		if err != nil {
			return "", err
		}
		err = ctx.Run(env)
		return buf.String(), err
	}
	out, err := parse("from stdin", "steering", "put", "--id", "GP-1", "--kind", "policy", "--statement", "-", "--domain", "auth", "--actor", "dan")
	if err != nil || !strings.Contains(out, `"amended":false`) {
		t.Fatalf("put: %v %q", err, out)
	}
	out, err = parse("", "steering", "put", "--id", "GP-2", "--kind", "policy", "--statement", "two", "--supersedes", "GP-1",
		"--references", `[{"rel":"relates-to","id":"GP-1"}]`, "--status", "active")
	if err != nil || !strings.Contains(out, `"id":"GP-2"`) {
		t.Fatalf("put GP-2: %v %q", err, out)
	}
	// --domain "" clears the domain; no --domain keeps it.
	if _, err := parse("", "steering", "put", "--id", "GP-1", "--kind", "policy", "--statement", "again"); err != nil {
		t.Fatal(err)
	}
	out, err = parse("", "steering", "read", "--id", "GP-1", "--json")
	if err != nil || !strings.Contains(out, `"domain": "auth"`) || !strings.Contains(out, `"history_length": 1`) {
		t.Fatalf("domain kept: %v\n%s", err, out)
	}
	if _, err := parse("", "steering", "put", "--id", "GP-1", "--kind", "policy", "--statement", "cleared", "--domain", ""); err != nil {
		t.Fatal(err)
	}
	out, err = parse("", "steering", "read", "--id", "GP-1", "--json", "--include-history", "--limit", "5")
	if err != nil || !strings.Contains(out, `"domain": ""`) || !strings.Contains(out, `"statement": "from stdin"`) {
		t.Fatalf("domain cleared: %v\n%s", err, out)
	}
	out, err = parse("", "steering", "read", "--kind", "policy", "--status", "active")
	if err != nil || out != "GP-1 [active] policy: cleared\n    superseded by GP-2\n    related-to by GP-2\n"+
		"GP-2 [active] policy: two\n    supersedes GP-1\n    relates-to GP-1\n" {
		t.Fatalf("listing: %v %q", err, out)
	}
}

func steeringPtr[T any](v T) *T { return &v }
