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

// OlderHookCommands are the hook commands earlier versions of git ideate
// init wrote: through git (one more process start per hook), or a second
// binary, git-ideate-full, which no longer exists.
var OlderHookCommands = []string{"git ideate hook", "git-ideate-full hook"}

// MergeSettings merges the hook table (Hooks) into doc, the text of a
// .claude/settings.json that holds one JSON object (nil or blank: an empty
// one). An event that already runs command in any group is left as is,
// whatever its matcher or timeout: a user's edit of our entry is kept, not
// duplicated. An event whose handler runs one of older instead (the same
// words, blanks aside; for a gate entry, in a group with h's matcher) has
// that handler's command replaced, and nothing else of it: it is among
// replaced. Every other missing event gets a matcher group running
// command: it is among added. Every other key and its text stay as they
// were, in their order. It returns the new text (2-space indent, final
// newline), or nil when nothing changed. A "hooks" value that is not an
// object, or an event's that is not an array, is apperr.Schema naming it,
// and nothing is returned.
func MergeSettings(doc []byte, command string, older []string) (merged []byte, added, replaced []string, err error) {
	o, err := parseDoc(doc)
	if err != nil {
		return nil, nil, nil, err
	}
	hooks := newObject()
	if raw, ok := o.get("hooks"); ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, nil, nil, apperr.New(apperr.Schema, `"hooks" is not a JSON object`)
		}
	}
	note := func(list []string, event string) []string {
		if len(list) == 0 || list[len(list)-1] != event {
			list = append(list, event)
		}
		return list
	}
	for _, h := range Hooks() {
		var groups []json.RawMessage
		if raw, ok := hooks.get(h.Event); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, nil, nil, apperr.New(apperr.Schema, `"hooks.%s" is not a JSON array`, h.Event)
			}
		}
		if runsCommand(groups, h, []string{command}) {
			continue
		}
		if replaceCommand(groups, h, older, command) {
			replaced = note(replaced, h.Event)
		} else {
			groups = append(groups, marshalNoEscape(hookGroup(h, command)))
			added = note(added, h.Event)
		}
		hooks.set(h.Event, marshalNoEscape(groups))
	}
	if len(added) == 0 && len(replaced) == 0 {
		return nil, nil, nil, nil
	}
	o.set("hooks", hooks.raw())
	return indentDoc(o.raw()), added, replaced, nil
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

// runsCommand reports whether one of the matcher groups runs the entry h
// of one of commands (blanks aside): in any group, or for a gate entry
// (the command followed by GateFlag) in a group with h's matcher.
func runsCommand(groups []json.RawMessage, h Hook, commands []string) bool {
	gi, _ := findHandler(groups, h, commands)
	return gi >= 0
}

// findHandler is the group and handler indexes of the first handler
// running h's entry of one of commands, or -1, -1.
func findHandler(groups []json.RawMessage, h Hook, commands []string) (int, int) {
	want := map[string]bool{}
	for _, c := range commands {
		want[strings.Join(strings.Fields(h.Command(c)), " ")] = true
	}
	for gi, g := range groups {
		var grp struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(g, &grp) != nil || h.Gate && grp.Matcher != h.Matcher {
			continue
		}
		for hi, x := range grp.Hooks {
			if want[strings.Join(strings.Fields(x.Command), " ")] {
				return gi, hi
			}
		}
	}
	return -1, -1
}

// replaceCommand finds a handler of h's entry running one of older and
// puts h's entry of command in its "command", keeping the rest of the
// group's text. It reports whether it did.
func replaceCommand(groups []json.RawMessage, h Hook, older []string, command string) bool {
	gi, hi := findHandler(groups, h, older)
	if gi < 0 {
		return false
	}
	grp, err := parseObject(groups[gi])
	if err != nil {
		return false
	}
	raw, _ := grp.get("hooks")
	var handlers []json.RawMessage
	if json.Unmarshal(raw, &handlers) != nil || hi >= len(handlers) {
		return false
	}
	hd, err := parseObject(handlers[hi])
	if err != nil {
		return false
	}
	hd.set("command", marshalNoEscape(h.Command(command)))
	handlers[hi] = hd.raw()
	grp.set("hooks", marshalNoEscape(handlers))
	groups[gi] = grp.raw()
	return true
}

// OlderMCPServers are the server entries (command, then arguments)
// earlier versions of git ideate init wrote.
var OlderMCPServers = [][]string{{"git", "ideate", "mcp"}, {"git-ideate-full", "mcp"}}

// MergeMCPServer adds mcpServers.<name> = {"command": command, "args":
// args} to doc, the text of a .mcp.json holding one JSON object (nil or
// blank: an empty one), keeping everything else as it was. A server of
// that name that is exactly one of older (its command and arguments, and
// no other key) is replaced by ours, and replaced is true. Any other
// server of that name is left alone: merged is then nil, and differs
// tells whether it is not the one asked for. An "mcpServers" value that is
// not an object is apperr.Schema.
func MergeMCPServer(doc []byte, name, command string, args []string, older [][]string) (merged []byte, replaced, differs bool, err error) {
	o, err := parseDoc(doc)
	if err != nil {
		return nil, false, false, err
	}
	servers := newObject()
	if raw, ok := o.get("mcpServers"); ok {
		if servers, err = parseObject(raw); err != nil {
			return nil, false, false, apperr.New(apperr.Schema, `"mcpServers" is not a JSON object`)
		}
	}
	type server struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	same := func(raw json.RawMessage, e server) bool {
		var have, want any
		json.Unmarshal(marshalNoEscape(e), &want)
		return json.Unmarshal(raw, &have) == nil && reflect.DeepEqual(have, want)
	}
	entry := server{command, args}
	if raw, ok := servers.get(name); ok {
		for _, old := range older {
			if len(old) > 0 && same(raw, server{old[0], old[1:]}) {
				replaced = true
			}
		}
		if !replaced {
			return nil, false, !same(raw, entry), nil
		}
	}
	servers.set(name, marshalNoEscape(entry))
	o.set("mcpServers", servers.raw())
	return indentDoc(o.raw()), replaced, false, nil
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
