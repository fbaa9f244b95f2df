package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/config"
	"github.com/ideate/git-ideate/internal/gitstore"
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

// hookEntry is one hook init installs; hooks/hooks.json at the repository
// root holds the same entries for the plugin (a test keeps them equal).
type hookEntry struct {
	Event   string
	Matcher string
	If      string
	Timeout int
}

// ideateHooks are the Claude Code hooks git ideate handles. SessionStart
// has no matcher, so compact and fork sessions are primed too; SessionEnd
// gets 2 s because the host gives all SessionEnd hooks together 1.5 s
// unless a settings file asks for more.
var ideateHooks = []hookEntry{
	{Event: "SessionStart", Timeout: 30},
	{Event: "SubagentStart", Timeout: 30},
	{Event: "SessionEnd", Timeout: 2},
	{Event: "PreCompact", Timeout: 30},
	{Event: "SubagentStop", Timeout: 30},
	{Event: "PostToolUse", Matcher: "Bash", If: "Bash(git commit*)", Timeout: 30},
	{Event: "TaskCompleted", Timeout: 30},
}

// The commands init writes: git-ideate found on PATH, run through git.
const (
	initHookCommand = "git ideate hook"
	initMCPServer   = "ideate"
)

// initMCPEntry is the server entry init writes; initMCPValue is the same
// value decoded, to compare an existing entry with.
var (
	initMCPEntry = struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{"git", []string{"ideate", "mcp"}}
	initMCPValue = map[string]any{"command": "git", "args": []any{"ideate", "mcp"}}
)

// File names, relative to the top of the working tree.
var (
	settingsFile = filepath.Join(".claude", "settings.json")
	mcpFile      = ".mcp.json"
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
func (c *InitCmd) Run(env *Env) error {
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
	remoteChanges, remoteNotes, err := planRemotes(g, top, c.Remote)
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
		return writeJSON(env.Out, sum, true)
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

// planSettings merges the hook entries into .claude/settings.json.
func planSettings(top string) (*initChange, error) {
	path := filepath.Join(top, settingsFile)
	doc, existed, mode, err := readJSONObject(path)
	if err != nil {
		return nil, err
	}
	hooks := newObject()
	if raw, ok := doc.get("hooks"); ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, shapeError(path, `"hooks" is not a JSON object`)
		}
	}
	var added []string
	for _, h := range ideateHooks {
		var groups []json.RawMessage
		if raw, ok := hooks.get(h.Event); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, shapeError(path, fmt.Sprintf(`"hooks.%s" is not a JSON array`, h.Event))
			}
		}
		if hasIdeateHook(groups) {
			continue
		}
		groups = append(groups, marshalNoEscape(hookGroup(h)))
		hooks.set(h.Event, marshalNoEscape(groups))
		added = append(added, h.Event)
	}
	if len(added) == 0 {
		return nil, nil
	}
	doc.set("hooks", hooks.raw())
	data := indentDoc(doc.raw())
	ch := &initChange{Action: "update", Target: filepath.ToSlash(settingsFile),
		Detail: fmt.Sprintf("added hooks %s (%s)", strings.Join(added, ", "), initHookCommand)}
	if !existed {
		ch.Action = "create"
		ch.Detail = fmt.Sprintf("hooks %s (%s)", strings.Join(added, ", "), initHookCommand)
	}
	ch.apply = func() error { return writeFileAtomic(path, data, mode) }
	return ch, nil
}

// hookGroup is the settings entry of h: a matcher group holding one
// command handler.
func hookGroup(h hookEntry) any {
	type handler struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		If      string `json:"if,omitempty"`
		Timeout int    `json:"timeout"`
	}
	type group struct {
		Matcher string    `json:"matcher,omitempty"`
		Hooks   []handler `json:"hooks"`
	}
	return group{Matcher: h.Matcher, Hooks: []handler{{Type: "command", Command: initHookCommand, If: h.If, Timeout: h.Timeout}}}
}

// hasIdeateHook reports whether one of the matcher groups already runs
// `git ideate hook` (or `git-ideate hook`), whatever its matcher or timeout:
// a user's edit of our entry is kept, not duplicated.
func hasIdeateHook(groups []json.RawMessage) bool {
	for _, g := range groups {
		var grp struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(g, &grp) != nil {
			continue
		}
		for _, h := range grp.Hooks {
			switch strings.Join(strings.Fields(h.Command), " ") {
			case initHookCommand, "git-ideate hook":
				return true
			}
		}
	}
	return false
}

// planMCP adds mcpServers.ideate to .mcp.json. An ideate server that is
// already there is left alone, with a note when it differs from ours.
func planMCP(top string) (*initChange, string, error) {
	path := filepath.Join(top, mcpFile)
	doc, existed, mode, err := readJSONObject(path)
	if err != nil {
		return nil, "", err
	}
	servers := newObject()
	if raw, ok := doc.get("mcpServers"); ok {
		if servers, err = parseObject(raw); err != nil {
			return nil, "", shapeError(path, `"mcpServers" is not a JSON object`)
		}
	}
	if raw, ok := servers.get(initMCPServer); ok {
		var have any
		if json.Unmarshal(raw, &have) == nil && reflect.DeepEqual(have, initMCPValue) {
			return nil, "", nil
		}
		return nil, fmt.Sprintf("%s already configures mcpServers.%s differently; left as is", mcpFile, initMCPServer), nil
	}
	servers.set(initMCPServer, marshalNoEscape(initMCPEntry))
	doc.set("mcpServers", servers.raw())
	data := indentDoc(doc.raw())
	ch := &initChange{Action: "update", Target: mcpFile, Detail: "added mcpServers.ideate (git ideate mcp)"}
	if !existed {
		ch.Action = "create"
		ch.Detail = "mcpServers.ideate (git ideate mcp)"
	}
	ch.apply = func() error { return writeFileAtomic(path, data, mode) }
	return ch, "", nil
}

// planRemotes adds the fetch refspecs of the remote-tracking namespace
// (gitstore.FetchRefspecs) to each remote that lacks them.
func planRemotes(g *gitstore.Store, top string, only []string) ([]initChange, []string, error) {
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
		have, err := gitConfigAll(top, "remote."+r+".fetch")
		if err != nil {
			return nil, nil, err
		}
		for _, spec := range gitstore.FetchRefspecs(r) {
			if have[spec] {
				continue
			}
			key, spec := "remote."+r+".fetch", spec
			changes = append(changes, initChange{Action: "add", Target: key, Detail: spec,
				apply: func() error { return gitConfigAdd(top, key, spec) }})
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

// gitConfigAll returns every value of key (all scopes).
func gitConfigAll(top, key string) (map[string]bool, error) {
	cmd := exec.Command("git", "config", "--get-all", key)
	cmd.Dir = top
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 { // the key is not set
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, apperr.Wrap(codeInit, err, "git config --get-all %s failed: %s", key, firstLineOf(errb.String(), err))
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			have[l] = true
		}
	}
	return have, nil
}

func gitConfigAdd(top, key, value string) error {
	cmd := exec.Command("git", "config", "--local", "--add", key, value)
	cmd.Dir = top
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return apperr.Wrap(apperr.Write, err, "git config --add %s %s failed: %s", key, value, firstLineOf(errb.String(), err))
	}
	return nil
}

func firstLineOf(s string, err error) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return err.Error()
}

// readJSONObject reads path as a JSON object: a missing or blank file is an
// empty one. It also returns whether the file existed and the mode to keep.
func readJSONObject(path string) (*object, bool, fs.FileMode, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newObject(), false, 0o644, nil
	case err != nil:
		return nil, false, 0, apperr.Wrap(codeInit, err, "cannot read %s: %v; nothing was changed", path, err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return newObject(), true, mode, nil
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
	o, err := parseObject(b)
	if err != nil {
		return nil, false, 0, shapeError(path, err.Error())
	}
	return o, true, mode, nil
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

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path, so a reader sees the old file or the new one, never part.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create %s: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path, err)
	}
	return nil
}

// object is a JSON object that keeps its keys in order; values stay raw
// (their text as read), so merging touches only what it changes.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

func parseObject(b []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	o := newObject()
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set replaces k's value in place, or appends k.
func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) raw() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalNoEscape(k))
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshalNoEscape is json.Marshal without HTML escaping.
func marshalNoEscape(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only our own values, which always encode
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// indentDoc renders a document with a 2-space indent and a final newline.
func indentDoc(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		panic(err) // raw was assembled from valid JSON
	}
	b.WriteByte('\n')
	return b.Bytes()
}
