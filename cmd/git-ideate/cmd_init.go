package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/config"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/hooks"
)

// codeInit: init cannot merge into a file that is there (not JSON, or not
// the shape Claude Code reads). Nothing was changed.
const codeInit apperr.Code = "INIT"

// InitCmd wires one repository for git ideate by hand, without the Claude
// Code plugin: the project's Claude Code hooks and MCP server, the fetch
// refspecs of the remote-tracking namespace, and a default .ideate.json.
// It never commits and never touches the index, branches or core.hooksPath.
type InitCmd struct {
	Remote []string `name:"remote" placeholder:"R" help:"Add the fetch refspecs to this remote only (repeatable; default: every remote)."`
	DryRun bool     `name:"dry-run" help:"Print what would change; change nothing."`
	JSON   bool     `name:"json" help:"Print a JSON summary."`
}

// The commands init writes: git-ideate found on PATH, run directly.
// Through git (`git ideate hook`) a hook would pay one more process start.
const (
	initHookCommand = "git-ideate hook"
	initMCPServer   = "ideate"
)

// initMCPCommand and initMCPArgs are the server entry init writes.
var (
	initMCPCommand = "git-ideate"
	initMCPArgs    = []string{"mcp"}
)

// File names, relative to the top of the working tree.
var (
	settingsFile = filepath.FromSlash(hooks.SettingsFile)
	mcpFile      = hooks.MCPFile
)

// initChange is one change init makes (or, with --dry-run, would make).
type initChange struct {
	Action string `json:"action"` // create, update or add
	Target string `json:"target"` // a file relative to the top of the working tree, or remote.<R>.fetch
	Detail string `json:"detail"`

	apply func() error
}

type initSummary struct {
	WorkTree string       `json:"work_tree"`
	DryRun   bool         `json:"dry_run"`
	Changed  bool         `json:"changed"`
	Changes  []initChange `json:"changes"`
	Notes    []string     `json:"notes"`
}

var pastTense = map[string]string{"create": "created", "update": "updated", "add": "added"}

// Run plans every change, checking every file it would merge into, and only
// then applies them, so a bad file changes nothing.
func (c *InitCmd) Run(ctx context.Context, env *Env) error {
	g, err := env.Git()
	if err != nil {
		return err
	}
	top := g.Repo().WorkTree
	if top == "" {
		return apperr.New(codeInit, "%s is a bare repository; git ideate init needs a working tree for .claude/settings.json, .mcp.json and .ideate.json", g.Repo().GitDir)
	}
	sum := initSummary{WorkTree: top, DryRun: c.DryRun, Changes: []initChange{}, Notes: []string{}}
	note := func(format string, args ...any) { sum.Notes = append(sum.Notes, fmt.Sprintf(format, args...)) }

	if ch, err := planSettings(top); err != nil {
		return err
	} else if ch != nil {
		sum.Changes = append(sum.Changes, *ch)
		if strings.Contains(ch.Detail, hooks.MCPPermission) {
			note("Claude Code ignores a project's permissions.allow while the workspace is untrusted: accept the trust prompt when you first open %s in claude, or add %q to permissions.allow in ~/.claude/settings.json", top, hooks.MCPPermission)
		}
	}
	if p := pluginInstalled(); p != "" {
		note("the git-ideate plugin is also installed (%s): with both, every hook runs twice and two ideate MCP servers start; use one (claude plugin uninstall git-ideate, or remove what init wrote)", p)
	}
	ch, msg, err := planMCP(top)
	if err != nil {
		return err
	}
	if ch != nil {
		sum.Changes = append(sum.Changes, *ch)
	}
	if msg != "" {
		note("%s", msg)
	}
	remoteChanges, remoteNotes, err := planRemotes(ctx, g, c.Remote)
	if err != nil {
		return err
	}
	sum.Changes = append(sum.Changes, remoteChanges...)
	sum.Notes = append(sum.Notes, remoteNotes...)
	if ch, err := planConfig(top); err != nil {
		return err
	} else if ch != nil {
		sum.Changes = append(sum.Changes, *ch)
	}

	if !c.DryRun {
		for i := range sum.Changes {
			if err := sum.Changes[i].apply(); err != nil {
				return err
			}
		}
	}
	sum.Changed = len(sum.Changes) > 0 && !c.DryRun

	if c.JSON {
		return corecmd.WriteJSON(env.Out, sum, true)
	}
	for _, n := range sum.Notes {
		fmt.Fprintf(env.Err, "note: %s\n", n)
	}
	for _, ch := range sum.Changes {
		if c.DryRun {
			fmt.Fprintf(env.Out, "would %s %s: %s\n", ch.Action, ch.Target, ch.Detail)
		} else {
			fmt.Fprintf(env.Out, "%s %s: %s\n", pastTense[ch.Action], ch.Target, ch.Detail)
		}
	}
	if len(sum.Changes) == 0 {
		fmt.Fprintf(env.Out, "nothing to change: %s is already set up for git ideate\n", top)
	}
	return nil
}

// planSettings merges the hook table into .claude/settings.json
// (hooks.MergeSettings).
func planSettings(top string) (*initChange, error) {
	path := filepath.Join(top, settingsFile)
	doc, existed, mode, err := readJSONObject(path)
	if err != nil {
		return nil, err
	}
	data, added, replaced, err := hooks.MergeSettings(doc, initHookCommand, hooks.OlderHookCommands)
	if err != nil {
		return nil, shapeError(path, apperr.Message(err))
	}
	if data == nil {
		data = doc
	}
	// The MCP server's tools are allowed by the project, so a session
	// without bypass permissions does not refuse every call.
	withPerm, allowed, err := hooks.MergePermissions(data, []string{hooks.MCPPermission})
	if err != nil {
		return nil, shapeError(path, apperr.Message(err))
	}
	if len(added) == 0 && len(replaced) == 0 && len(allowed) == 0 {
		return nil, nil
	}
	if withPerm != nil {
		data = withPerm
	}
	var what, parts []string
	if len(added) > 0 {
		what = append(what, fmt.Sprintf("hooks %s (%s)", strings.Join(added, ", "), initHookCommand))
	}
	if len(allowed) > 0 {
		what = append(what, fmt.Sprintf("permissions.allow %s", strings.Join(allowed, ", ")))
	}
	if len(what) > 0 {
		parts = append(parts, "added "+strings.Join(what, "; "))
	}
	if len(replaced) > 0 {
		parts = append(parts, fmt.Sprintf("hooks %s now run %s", strings.Join(replaced, ", "), initHookCommand))
	}
	ch := &initChange{Action: "update", Target: filepath.ToSlash(settingsFile), Detail: strings.Join(parts, "; ")}
	if !existed {
		ch.Action = "create"
		ch.Detail = strings.Join(what, "; ")
	}
	ch.apply = func() error { return writeFileAtomic(path, data, mode) }
	return ch, nil
}

// pluginInstalled names the user's Claude Code file that shows the
// git-ideate plugin installed or enabled, or "".
func pluginInstalled() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	for _, f := range []string{filepath.Join(home, ".claude", "plugins", "installed_plugins.json"), filepath.Join(home, ".claude", "settings.json")} {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), `"git-ideate@`) {
			return f
		}
	}
	return ""
}

// planMCP adds mcpServers.ideate to .mcp.json. An ideate server that is
// already there is left alone, with a note when it differs from ours.
func planMCP(top string) (*initChange, string, error) {
	path := filepath.Join(top, mcpFile)
	doc, existed, mode, err := readJSONObject(path)
	if err != nil {
		return nil, "", err
	}
	data, replaced, differs, err := hooks.MergeMCPServer(doc, initMCPServer, initMCPCommand, initMCPArgs, hooks.OlderMCPServers)
	switch {
	case err != nil:
		return nil, "", shapeError(path, apperr.Message(err))
	case data == nil && differs:
		return nil, fmt.Sprintf("%s already configures mcpServers.%s differently; left as is", mcpFile, initMCPServer), nil
	case data == nil:
		return nil, "", nil
	}
	ch := &initChange{Action: "update", Target: mcpFile, Detail: "added mcpServers.ideate (git-ideate mcp)"}
	if replaced {
		ch.Detail = "mcpServers.ideate now runs git-ideate mcp"
	}
	if !existed {
		ch.Action = "create"
		ch.Detail = "mcpServers.ideate (git-ideate mcp)"
	}
	ch.apply = func() error { return writeFileAtomic(path, data, mode) }
	return ch, "", nil
}

// planRemotes adds the fetch refspecs of the remote-tracking namespace
// (gitstore.FetchRefspecs) to each remote that lacks them.
func planRemotes(ctx context.Context, g *gitstore.Store, only []string) ([]initChange, []string, error) {
	remotes := g.Remotes()
	if len(only) > 0 {
		known := map[string]bool{}
		for _, r := range remotes {
			known[r] = true
		}
		for _, r := range only {
			if !known[r] {
				return nil, nil, apperr.New(gitstore.NoRemote, "no remote named %q (remotes: %s)", r, listOrNone(remotes))
			}
		}
		remotes = dedupe(only)
	}
	if len(remotes) == 0 {
		return nil, []string{"this repository has no remote; run git ideate init again after git remote add to fetch a remote's refs/ideate/*"}, nil
	}
	var changes []initChange
	for _, r := range remotes {
		have := map[string]bool{}
		for _, v := range g.Config().GetAllSub("remote", r, "fetch") {
			have[strings.TrimSpace(v)] = true
		}
		for _, spec := range gitstore.FetchRefspecs(r) {
			if have[spec] {
				continue
			}
			key, spec := "remote."+r+".fetch", spec
			changes = append(changes, initChange{Action: "add", Target: key, Detail: spec,
				apply: func() error { return g.AddLocalConfig(ctx, key, spec) }})
		}
	}
	return changes, nil, nil
}

// planConfig writes the default .ideate.json when there is none.
func planConfig(top string) (*initChange, error) {
	path := filepath.Join(top, config.FileName)
	if _, err := os.Lstat(path); err == nil {
		return nil, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.Wrap(codeInit, err, "cannot read %s: %v", path, err)
	}
	return &initChange{Action: "create", Target: config.FileName, Detail: "the default configuration",
		apply: func() error {
			_, err := config.WriteDefault(top)
			return err
		}}, nil
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// readJSONObject reads path, which must hold a JSON object: a missing or
// blank file is an empty one (nil). It also returns whether the file
// existed and the mode to keep.
func readJSONObject(path string) ([]byte, bool, fs.FileMode, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, 0o644, nil
	case err != nil:
		return nil, false, 0, apperr.Wrap(codeInit, err, "cannot read %s: %v; nothing was changed", path, err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, true, mode, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(b, se.Offset)
			return nil, false, 0, apperr.Wrap(codeInit, err, "%s is not valid JSON (line %d, column %d: %v); fix it and run git ideate init again (nothing was changed)", path, line, col, se)
		}
		return nil, false, 0, apperr.Wrap(codeInit, err, "%s is not valid JSON (%v); fix it and run git ideate init again (nothing was changed)", path, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, false, 0, shapeError(path, "the top level is not a JSON object")
	}
	return b, true, mode, nil
}

func shapeError(path, what string) error {
	return apperr.New(codeInit, "%s: %s; fix it and run git ideate init again (nothing was changed)", path, what)
}

// lineCol returns the position of the byte a json.SyntaxError's Offset
// (the count of bytes read, the bad one included) stops at.
func lineCol(b []byte, off int64) (int, int) {
	off--
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	if off < 0 {
		off = 0
	}
	line, col := 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// writeFileAtomic replaces path with data so a reader sees the old file or
// the new one, never part (settings a user edits: synced first).
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	return atomicfile.Replace(path, data, atomicfile.Options{Mode: mode, Sync: true})
}
