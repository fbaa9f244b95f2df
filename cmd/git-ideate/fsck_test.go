package main

// No input may reach a commit in a form git fsck --strict rejects (a NUL
// in a title through MCP once landed in a commit message,
// and a remote with receive.fsckObjects=true then refused every later
// push). Every write verb gets random bytes — through the store methods
// (found by reflection, as in writegate_test.go), the MCP tools and the
// hook payload — and after each batch the repository must pass
// git fsck --strict and push to a bare remote that checks every object.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/mcpserver"
)

// awkward are the bytes git and terminals care about.
var awkward = []string{"\x00", "\n", "\r", "\t", "<", ">", "\x1b", "\x7f", "\u0085", "\xff", "\xc3", " ", "\u2028", "a"}

func randomText(r *rand.Rand) string {
	n := r.IntN(24)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if r.IntN(2) == 0 {
			b.WriteString(awkward[r.IntN(len(awkward))])
		} else {
			b.WriteByte(byte(r.IntN(256)))
		}
	}
	return b.String()
}

// fsckRig is a repository whose every write goes through the verbs, with
// a bare remote that checks every object it receives.
type fsckRig struct {
	fx     *libFixture
	bare   string
	srv    *mcpserver.Server
	tools  []mcpTool
	verbs  []libVerb
	events []string
	keys   []string // hook payload keys that take text
}

func newFsckRig(t testing.TB) *fsckRig {
	fx := newLibFixture(t)
	bare := t.TempDir()
	gt.Git(t, bare, "init", "-q", "--bare")
	gt.Git(t, bare, "config", "receive.fsckObjects", "true")
	gt.Git(t, fx.dir, "remote", "add", "origin", bare)
	rig := &fsckRig{fx: fx, bare: bare, verbs: libVerbs()}
	rig.srv = mcpserver.New("test", func() (*mcpserver.Backend, error) { return backendFor(fx.env, "mcp-test") })
	for _, tool := range listTools(t, rig.srv) {
		if !tool.Annotations.ReadOnlyHint {
			rig.tools = append(rig.tools, tool)
		}
	}
	for _, h := range hooks.Hooks() {
		rig.events = append(rig.events, h.Event)
	}
	rig.keys = []string{"session_id", "task_subject", "task_id", "task_description", "agent_id", "agent_type", "reason",
		"trigger", "custom_instructions", "last_assistant_message", "teammate_name", "team_name", "transcript_path", "tool_use_id"}
	return rig
}

// libCall runs store method verb with text leaf leaf (modulo their
// counts) set to text.
func (rig *fsckRig) libCall(t testing.TB, verb, leaf int, text string) {
	v := rig.verbs[verb%len(rig.verbs)]
	fn, args := v.prep(t, rig.fx)
	vals := argValues(fn, args)
	count := &textWalker{target: -1}
	for _, a := range vals {
		count.walk(a)
	}
	if count.n == 0 {
		return
	}
	w := &textWalker{target: leaf % count.n, fill: func(string) string { return text }}
	for _, a := range vals {
		w.walk(a)
	}
	callVerb(fn, vals) // refusals are fine; what lands is checked by fsck
}

// mcpCall runs write tool tool with its text property prop set to text.
func (rig *fsckRig) mcpCall(t testing.TB, tool, prop int, text string) {
	tl := rig.tools[tool%len(rig.tools)]
	var props []string
	for p, s := range tl.InputSchema.Properties {
		if typeIs(s.Type, "string") {
			props = append(props, p)
		}
	}
	if len(props) == 0 {
		return
	}
	sort.Strings(props)
	base, ok := mcpWrites(t, rig.fx)[tl.Name]
	if !ok {
		t.Fatalf("no baseline for tool %s", tl.Name)
	}
	args := base()
	args[props[prop%len(props)]] = text
	raw, _ := json.Marshal(args)
	rig.srv.Call(bg, tl.Name, raw)
}

// hookCall runs hook event with payload key set to text.
func (rig *fsckRig) hookCall(t *testing.T, event, key int, text string) {
	ev := rig.events[event%len(rig.events)]
	dir := rig.fx.dir
	p := map[string]any{"hook_event_name": ev, "session_id": "s1", "cwd": dir, "agent_id": "a1", "agent_type": "worker",
		"task_id": "t1", "task_subject": "subject", "reason": "exit", "trigger": "manual", "last_assistant_message": "done",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "git commit -m x"}}
	p[rig.keys[key%len(rig.keys)]] = text
	if ev == "PostToolUse" {
		gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "change")
	}
	raw, _ := json.Marshal(p)
	cli(t, dir, string(raw), "hook")
}

// check runs git fsck --strict and pushes every ideate ref and the notes
// to the checking remote.
func (rig *fsckRig) check(t testing.TB, what string) {
	t.Helper()
	dir := rig.fx.dir
	if out, err := gt.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil || strings.Contains(out, "error") || strings.Contains(out, "warning") {
		t.Fatalf("%s: git fsck --strict: %v\n%s", what, err, out)
	}
	if out, err := gt.GitErr(dir, "push", "--porcelain", "origin", "refs/ideate/*:refs/ideate/*", "refs/notes/*:refs/notes/*"); err != nil {
		t.Fatalf("%s: push to a receive.fsckObjects remote refused: %v\n%s", what, err, out)
	}
}

// TestWriteVerbs_RandomBytes_FsckStrictAndPushStayClean is the
// deterministic run: fixed seeds, every store method, MCP tool and hook
// event once per batch with one text field random.
func TestWriteVerbs_RandomBytes_FsckStrictAndPushStayClean(t *testing.T) {
	rig := newFsckRig(t)
	r := rand.New(rand.NewPCG(11, 2026))
	const batches = 3
	for b := 0; b < batches; b++ {
		for v := range rig.verbs {
			rig.libCall(t, v, r.IntN(64), randomText(r))
		}
		for i := range rig.tools {
			rig.mcpCall(t, i, r.IntN(64), randomText(r))
		}
		for e := range rig.events {
			rig.hookCall(t, e, r.IntN(64), randomText(r))
		}
		rig.check(t, fmt.Sprintf("batch %d", b))
	}
	// The cases of the issue, each once: a NUL in kind, claim, title and
	// actor through MCP, and in session_id and task_subject of a hook.
	for _, c := range []struct{ tool, prop string }{{"record_append", "kind"}, {"record_append", "claim"},
		{"work_create", "title"}, {"work_create", "actor_human"}, {"work_claim", "actor_human"}} {
		args := mcpWrites(t, rig.fx)[c.tool]()
		args[c.prop] = "x\x00y"
		raw, _ := json.Marshal(args)
		res := rig.srv.Call(bg, c.tool, raw)
		if res.IsError {
			text, _ := json.Marshal(res)
			if !strings.Contains(string(text), "SCHEMA") {
				t.Errorf("%s.%s with a NUL: refused without SCHEMA: %s", c.tool, c.prop, text)
			}
		}
	}
	for _, key := range []string{"session_id", "task_subject"} {
		p := map[string]any{"hook_event_name": "TaskCompleted", "session_id": "s1", "cwd": rig.fx.dir, "task_id": "t1", "task_subject": "s"}
		p[key] = "x\x00y"
		raw, _ := json.Marshal(p)
		before := gt.Git(t, rig.fx.dir, "rev-parse", "refs/ideate/record")
		cli(t, rig.fx.dir, string(raw), "hook")
		if after := gt.Git(t, rig.fx.dir, "rev-parse", "refs/ideate/record"); after == before {
			t.Errorf("a hook whose %s holds a NUL recorded nothing; it should escape the name and record", key)
		}
	}
	rig.check(t, "the issue's cases")
}

// FuzzWriteVerbs drives one write per input: face 0 a store method, 1 an
// MCP tool, 2 a hook event; which and which field from the next two
// numbers; the field's text from data. Run with
// go test -fuzz FuzzWriteVerbs ./cmd/git-ideate.
func FuzzWriteVerbs(f *testing.F) {
	for _, s := range []string{"\x00", "a\nb", "x\x00y\n<z>", "\xff\xfe", "\x1b[31m", "ghp_\x00", "\r\n\r\n", strings.Repeat("\x00", 40)} {
		for face := uint8(0); face < 3; face++ {
			f.Add(face, uint8(len(s)), uint8(1), []byte(s))
		}
	}
	rig := newFsckRig(f)
	f.Fuzz(func(t *testing.T, face, which, field uint8, data []byte) {
		text := string(data)
		switch face % 3 {
		case 0:
			rig.libCall(t, int(which), int(field), text)
		case 1:
			rig.mcpCall(t, int(which), int(field), text)
		case 2:
			rig.hookCall(t, int(which), int(field), text)
		}
		rig.check(t, fmt.Sprintf("face %d, verb %d, field %d, %q", face%3, which, field, text))
	})
}
