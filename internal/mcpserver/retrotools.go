package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/memory"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/retro"
)

// The retrospective's tools: its input (`git ideate retro`) and the
// memory it keeps (`git ideate memory list`), through the same library
// calls as the CLI. Both only read.

func retroTools() []toolDef {
	return []toolDef{
		{name: "retro", run: retroRun, readOnly: true,
			desc:   "The retrospective's input: failed and unverifiable verdicts by reason class, escalations, revision feedback and sync conflicts since the last planning (or since a date), grouped into patterns by kind, phase, class and test or path, with counts, tasks and evidence (exec:<id>, record:<id>); recurring patterns (seen at least twice) first. Deterministic. truncated is true when the 40k-character budget cut the one-offs or patterns.",
			schema: obj(nil, arg{"since", str, "last-planning (default), a date YYYY-MM-DD, an RFC 3339 time, or all."})},
		{name: "memory_list", run: memoryList, readOnly: true,
			desc:   "The team's memory in docs/agents/memory.md: role-scoped lessons (role, text, evidence, date). With role, that role's entries and those for all roles, as init.md quotes them. findings counts what git ideate memory check would report.",
			schema: obj(nil, arg{"role", str, "Only this role (green-worker, red-worker, …) and the entries for all roles."})},
	}
}

type retroToolOut struct {
	OK bool `json:"ok"`
	retro.Report
	Truncated bool `json:"truncated"`
}

func retroRun(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Since *string }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	if b.Exec == nil {
		return nil, apperr.New(apperr.Internal, "this server has no execution log")
	}
	since := retro.LastPlanning
	if a.Since != nil {
		since = *a.Since
	}
	if since == "all" {
		since = ""
	}
	rep, err := retro.Load(ctx, retro.Sources{Exec: b.Exec, Record: b.Record}, since)
	if err != nil {
		return nil, err
	}
	out := retroToolOut{OK: true, Report: rep}
	// One budget over both lists, recurring first: a cut takes one-offs
	// before any recurring pattern.
	all := append(append([]retro.Pattern{}, rep.Recurring...), rep.OneOffs...)
	kept, cut, err := paging.Trim(all, paging.CompactLen)
	if err != nil {
		return nil, err
	}
	if cut {
		n := min(len(rep.Recurring), len(kept))
		out.Recurring = append([]retro.Pattern{}, kept[:n]...)
		out.OneOffs = append([]retro.Pattern{}, kept[n:]...)
		out.Truncated = true
	}
	return out, nil
}

type memoryListToolOut struct {
	OK       bool           `json:"ok"`
	File     string         `json:"file"`
	Exists   bool           `json:"exists"`
	Entries  []memory.Entry `json:"entries"`
	Findings int            `json:"findings"`
}

func memoryList(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Role string }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	if b.Git == nil || b.Git.Repo().WorkTree == "" {
		return nil, apperr.New(apperr.Internal, "this server has no working tree to read %s from", memory.File)
	}
	d, ok, err := memory.Read(b.Git.Repo().WorkTree, 0)
	if err != nil {
		return nil, err
	}
	es := d.Entries
	if a.Role != "" {
		if !memory.ValidRole(a.Role) {
			return nil, apperr.New(apperr.Schema, "role %q is not a role name", a.Role)
		}
		es = d.For(a.Role)
	}
	if es == nil {
		es = []memory.Entry{}
	}
	return memoryListToolOut{OK: true, File: memory.File, Exists: ok, Entries: es, Findings: len(d.Findings)}, nil
}
