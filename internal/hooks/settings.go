package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// The host's project files `git ideate init` merges into, relative to the
// top of the working tree.
const (
	SettingsFile = ".claude/settings.json" // hooks, among the user's other settings
	MCPFile      = ".mcp.json"             // the project's MCP servers
)

// MergeSettings merges the hook table (Hooks) into doc, the text of a
// .claude/settings.json that holds one JSON object (nil or blank: an empty
// one). Each missing event gets a matcher group running command. An event
// that already runs command, `git ideate hook` or `git-ideate hook` in any
// group is left as is, whatever its matcher or timeout: a user's edit of
// our entry is kept, not duplicated. Every other key and its text stay as
// they were, in their order. It returns the new text (2-space indent, final
// newline) and the events added, or nil and none when nothing was missing.
// A "hooks" value that is not an object, or an event's that is not an
// array, is apperr.Schema naming it, and nothing is returned.
func MergeSettings(doc []byte, command string) (merged []byte, added []string, err error) {
	o, err := parseDoc(doc)
	if err != nil {
		return nil, nil, err
	}
	hooks := newObject()
	if raw, ok := o.get("hooks"); ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, nil, apperr.New(apperr.Schema, `"hooks" is not a JSON object`)
		}
	}
	for _, h := range Hooks() {
		var groups []json.RawMessage
		if raw, ok := hooks.get(h.Event); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, nil, apperr.New(apperr.Schema, `"hooks.%s" is not a JSON array`, h.Event)
			}
		}
		if runsCommand(groups, h, command) {
			continue
		}
		groups = append(groups, marshalNoEscape(hookGroup(h, command)))
		hooks.set(h.Event, marshalNoEscape(groups))
		if len(added) == 0 || added[len(added)-1] != h.Event {
			added = append(added, h.Event)
		}
	}
	if len(added) == 0 {
		return nil, nil, nil
	}
	o.set("hooks", hooks.raw())
	return indentDoc(o.raw()), added, nil
}

// hookGroup is the settings entry of h: a matcher group holding one
// command handler.
func hookGroup(h Hook, command string) any {
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
	return group{Matcher: h.Matcher, Hooks: []handler{{Type: "command", Command: h.Command(command), If: h.If, Timeout: h.Timeout}}}
}

// runsCommand reports whether one of the matcher groups already runs the
// entry h: command, `git ideate hook` or `git-ideate hook` (blanks aside)
// in any group, or for a gate entry the same followed by GateFlag in a
// group with h's matcher.
func runsCommand(groups []json.RawMessage, h Hook, command string) bool {
	want := map[string]bool{}
	for _, c := range []string{command, "git ideate hook", "git-ideate hook"} {
		want[strings.Join(strings.Fields(h.Command(c)), " ")] = true
	}
	for _, g := range groups {
		var grp struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(g, &grp) != nil || h.Gate && grp.Matcher != h.Matcher {
			continue
		}
		for _, x := range grp.Hooks {
			if want[strings.Join(strings.Fields(x.Command), " ")] {
				return true
			}
		}
	}
	return false
}

// MergeMCPServer adds mcpServers.<name> = {"command": command, "args":
// args} to doc, the text of a .mcp.json holding one JSON object (nil or
// blank: an empty one), keeping everything else as it was. A server of
// that name already there is left alone: merged is then nil, and differs
// tells whether it is not the one asked for. An "mcpServers" value that is
// not an object is apperr.Schema.
func MergeMCPServer(doc []byte, name, command string, args []string) (merged []byte, differs bool, err error) {
	o, err := parseDoc(doc)
	if err != nil {
		return nil, false, err
	}
	servers := newObject()
	if raw, ok := o.get("mcpServers"); ok {
		if servers, err = parseObject(raw); err != nil {
			return nil, false, apperr.New(apperr.Schema, `"mcpServers" is not a JSON object`)
		}
	}
	entry := struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{command, args}
	if raw, ok := servers.get(name); ok {
		var have, want any
		json.Unmarshal(marshalNoEscape(entry), &want)
		return nil, json.Unmarshal(raw, &have) != nil || !reflect.DeepEqual(have, want), nil
	}
	servers.set(name, marshalNoEscape(entry))
	o.set("mcpServers", servers.raw())
	return indentDoc(o.raw()), false, nil
}

// parseDoc reads a settings document: blank is an empty object.
func parseDoc(doc []byte) (*object, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return newObject(), nil
	}
	o, err := parseObject(doc)
	if err != nil {
		return nil, apperr.New(apperr.Schema, "the top level is not a JSON object")
	}
	return o, nil
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

// MCPPermission is the settings permission rule that allows every tool of
// the MCP server git ideate init adds (.mcp.json's "ideate").
const MCPPermission = "mcp__ideate"

// MergePermissions adds the rules in allow that are missing from doc's
// permissions.allow (a .claude/settings.json as MergeSettings reads it),
// keeping every other key and rule as it was. It returns the new text and
// the rules added, or nil and none when nothing was missing. A
// "permissions" that is not an object, or an "allow" that is not an array
// of strings, is apperr.Schema naming it.
func MergePermissions(doc []byte, allow []string) (merged []byte, added []string, err error) {
	o, err := parseDoc(doc)
	if err != nil {
		return nil, nil, err
	}
	perms := newObject()
	if raw, ok := o.get("permissions"); ok {
		if perms, err = parseObject(raw); err != nil {
			return nil, nil, apperr.New(apperr.Schema, `"permissions" is not a JSON object`)
		}
	}
	var have []string
	if raw, ok := perms.get("allow"); ok {
		if err := json.Unmarshal(raw, &have); err != nil {
			return nil, nil, apperr.New(apperr.Schema, `"permissions.allow" is not a JSON array of strings`)
		}
	}
	for _, a := range allow {
		found := false
		for _, h := range have {
			found = found || h == a
		}
		if !found {
			have = append(have, a)
			added = append(added, a)
		}
	}
	if len(added) == 0 {
		return nil, nil, nil
	}
	perms.set("allow", marshalNoEscape(have))
	o.set("permissions", perms.raw())
	return indentDoc(o.raw()), added, nil
}
