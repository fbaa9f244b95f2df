package main

// Invariant 4 (DESIGN.md): every free-text write passes the secret gate
// before any object is written. These tests find the text fields by
// reflection — the parameters of every exported write method of the
// stores, the properties of every MCP tool that writes, the fields of the
// hook payload, the string flags of the CLI's write commands — put a
// distinct secret in one field at a time, run the verb, and then read
// every object in the repository (git cat-file --batch-all-objects, which
// sees unreachable objects too) for the secret. A field added later is
// enumerated the same way, so one that skips the gate fails here; a store
// method added later fails until it is listed as a write verb or as
// read-only.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/steering"
)

// secrets hands out distinct secrets: a GitHub token and the password of a
// connection string, each of which the gate must redact. needles are the
// parts that must never reach an object.
type secrets struct {
	n     int
	cases map[string][]string // case name → its needles
}

func (s *secrets) next(name string) string {
	s.n++
	tok := fmt.Sprintf("Zq7%05dKx9Tw3Lm8Pv2Rb6Nc4Hd1Fg5Js0Yt", s.n)
	pw := fmt.Sprintf("Pw%05dq8Zr", s.n)
	if s.cases == nil {
		s.cases = map[string][]string{}
	}
	s.cases[name] = []string{tok, pw}
	return "ghp_" + tok + " postgres://app:" + pw + "@db.example:5432/app"
}

// leaked returns the cases whose needles some object of the repository in
// dir holds, with the needle found.
func (s *secrets) leaked(t testing.TB, dir string) []string {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = dir
	all, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch-all-objects: %v", err)
	}
	var out []string
	for name, needles := range s.cases {
		for _, n := range needles {
			if bytes.Contains(all, []byte(n)) {
				out = append(out, name+" (object holds "+n+")")
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// echoes reports the needle of case name that text holds ("" when none):
// an error or an output line must not carry the secret either.
func (s *secrets) echoes(name, text string) string {
	for _, n := range s.cases[name] {
		if strings.Contains(text, n) {
			return n
		}
	}
	return ""
}

// textWalker visits the text leaves of a value in a fixed order: strings,
// and the strings inside pointers, slices and structs (a nil pointer or an
// empty slice counts the leaves of one element). The leaf numbered target
// gets " "+secret appended (a nil pointer or empty slice is filled for it).
type textWalker struct {
	n, target int
	secret    string
	fill      func(old string) string // when set, the leaf's new value (else old+" "+secret)
	path      []string
	hitPath   string
	bad       []string // kinds the walker does not know
}

func hasText(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Pointer, reflect.Slice:
		return hasText(t.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() && hasText(t.Field(i).Type, depth+1) {
				return true
			}
		}
	case reflect.Map:
		return true // refused below: a map of text needs a rule of its own
	}
	return false
}

func (w *textWalker) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if w.n == w.target {
			if w.fill != nil {
				v.SetString(w.fill(v.String()))
			} else {
				v.SetString(v.String() + " " + w.secret)
			}
			w.hitPath = strings.Join(w.path, "")
		}
		w.n++
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			w.path = append(w.path, "."+f.Name)
			w.walk(v.Field(i))
			w.path = w.path[:len(w.path)-1]
		}
	case reflect.Pointer:
		if !hasText(v.Type().Elem(), 0) {
			return
		}
		if !v.IsNil() {
			w.walk(v.Elem())
			return
		}
		nv := reflect.New(v.Type().Elem())
		before := w.n
		w.walk(nv.Elem())
		if w.target >= before && w.target < w.n {
			v.Set(nv)
		}
	case reflect.Slice:
		if !hasText(v.Type().Elem(), 0) {
			return
		}
		if v.Len() == 0 {
			e := reflect.New(v.Type().Elem()).Elem()
			before := w.n
			w.path = append(w.path, "[0]")
			w.walk(e)
			w.path = w.path[:len(w.path)-1]
			if w.target >= before && w.target < w.n {
				v.Set(reflect.Append(v, e))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			w.path = append(w.path, fmt.Sprintf("[%d]", i))
			w.walk(v.Index(i))
			w.path = w.path[:len(w.path)-1]
		}
	case reflect.Map:
		w.bad = append(w.bad, strings.Join(w.path, "")+" is a "+v.Type().String())
	}
}

// libFixture is one repository with the three stores open, steering on.
type libFixture struct {
	dir   string
	env   *Env
	rec   *record.Store
	board *board.Store
	steer *steering.Store
}

func newLibFixture(t testing.TB) *libFixture {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.steering", "true")
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	t.Cleanup(env.Close)
	rec, err := env.Record()
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.Board()
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.Steering()
	if err != nil {
		t.Fatal(err)
	}
	return &libFixture{dir: dir, env: env, rec: rec, board: b, steer: st}
}

var bg = context.Background()

var alice = board.Actor{Human: "alice", Agent: "worker"}

func (fx *libFixture) item(t testing.TB) string {
	t.Helper()
	out, err := fx.board.Create(bg, board.CreateInput{Title: "item", Spec: "do it", SpecFormat: "text", CreatedBy: alice})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item.ID
}

func (fx *libFixture) claimed(t testing.TB) (string, int64) {
	t.Helper()
	id := fx.item(t)
	it, err := fx.board.Claim(bg, id, alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	return id, it.Claim.ClaimToken
}

func (fx *libFixture) done(t testing.TB) string {
	t.Helper()
	id, tok := fx.claimed(t)
	if _, err := fx.board.Complete(bg, id, tok, "done"); err != nil {
		t.Fatal(err)
	}
	return id
}

func (fx *libFixture) recordID(t testing.TB) string {
	t.Helper()
	res, err := fx.rec.Append(bg, record.AppendInput{Kind: "finding", Claim: "a finding", Source: record.Source{CapturePoint: "test", SessionID: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Record.ID
}

func (fx *libFixture) steeringID(t testing.TB, id string) string {
	t.Helper()
	if _, err := fx.steer.Put(bg, steering.PutInput{ID: id, Kind: "principle", Statement: "keep it small"}); err != nil {
		t.Fatal(err)
	}
	return id
}

// libVerb is one exported write method: prep readies what it needs (with
// clean text) and returns the method value and its baseline arguments.
type libVerb struct {
	name string
	prep func(t testing.TB, fx *libFixture) (fn any, args []any)
}

func str(s string) *string { return &s }

var noLease *int64

func libVerbs() []libVerb {
	ctx := context.Background()
	return []libVerb{
		{"record.Append", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.rec.Append, []any{ctx, record.AppendInput{Kind: "finding", Claim: "claim", VerificationAnchor: "anchor",
				Scope: "scope", Content: "content", Source: record.Source{CapturePoint: "cli", SessionID: "s1", TaskID: "t1"},
				References: []record.Reference{{Rel: "relates", ID: fx.recordID(t)}}}}
		}},
		{"record.Stage", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.rec.Stage, []any{record.AppendInput{Kind: "work-completion", Claim: "claim", VerificationAnchor: "anchor",
				Scope: "scope", Content: "content", Source: record.Source{CapturePoint: "work-completion", SessionID: "s1", TaskID: "t1"},
				References: []record.Reference{{Rel: "relates", ID: fx.recordID(t)}}}}
		}},
		{"record.Publish", func(t testing.TB, fx *libFixture) (any, []any) {
			st, err := fx.rec.Stage(record.AppendInput{Kind: "work-completion", Claim: "claim", Content: "content"})
			if err != nil {
				t.Fatal(err)
			}
			return fx.rec.Publish, []any{ctx, st}
		}},
		{"record.Decision", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.rec.Decision, []any{ctx, record.DecisionInput{Claim: "claim", Rationale: "why", VerificationAnchor: "anchor",
				Scope: "scope", Source: record.Source{CapturePoint: "cli", SessionID: "s1", TaskID: "t1"},
				References: []record.Reference{{Rel: "relates", ID: fx.recordID(t)}}}}
		}},
		{"record.AppendSessionOutcome", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.rec.AppendSessionOutcome, []any{ctx, record.SessionOutcome{SessionID: "s1", Reason: "exit", Anchor: "/t.jsonl",
				Activity: &record.SessionActivity{Tools: "Edit (1x)", Files: []string{"a.go"}, Dirs: []string{"."}, LastAssistantText: "bye"}}}
		}},
		{"record.CommitBoundary", func(t testing.TB, fx *libFixture) (any, []any) {
			gt.Git(t, fx.dir, "commit", "-q", "--allow-empty", "-m", "a change")
			return fx.rec.CommitBoundary, []any{ctx, record.CommitBoundaryInput{Commit: "HEAD", Command: "git commit -m x", SessionID: "s1"}}
		}},
		{"board.Create", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.Create, []any{ctx, board.CreateInput{Title: "title", Spec: "spec", SpecFormat: "text", CreatedBy: alice,
				DependsOn: []string{fx.done(t)}, ParentID: fx.item(t), References: []board.Reference{{Rel: "relates", ID: fx.item(t)}},
				TenantID: "local"}}
		}},
		{"board.UpdateMeta", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.UpdateMeta, []any{ctx, fx.item(t), board.UpdateInput{ExpectedVersion: 1, Title: str("t2"), Spec: str("s2"),
				SpecFormat: str("text"), DependsOn: &[]string{fx.done(t)}, Actor: alice,
				References: &[]board.Reference{{Rel: "relates", ID: fx.item(t)}}}}
		}},
		{"board.Claim", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.Claim, []any{ctx, fx.item(t), alice, noLease}
		}},
		{"board.ClaimNext", func(t testing.TB, fx *libFixture) (any, []any) {
			fx.item(t)
			return fx.board.ClaimNext, []any{ctx, "local", alice, noLease}
		}},
		{"board.Renew", func(t testing.TB, fx *libFixture) (any, []any) {
			id, tok := fx.claimed(t)
			return fx.board.Renew, []any{ctx, id, tok, noLease}
		}},
		{"board.Release", func(t testing.TB, fx *libFixture) (any, []any) {
			id, tok := fx.claimed(t)
			return fx.board.Release, []any{ctx, id, tok, "note"}
		}},
		{"board.Complete", func(t testing.TB, fx *libFixture) (any, []any) {
			id, tok := fx.claimed(t)
			return fx.board.Complete, []any{ctx, id, tok, "note"}
		}},
		{"board.Cancel", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.Cancel, []any{ctx, fx.item(t), alice}
		}},
		{"board.Reopen", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.Reopen, []any{ctx, fx.done(t), alice}
		}},
		{"board.Expire", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.Expire, []any{ctx, fx.item(t)}
		}},
		{"board.Sweep", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.Sweep, []any{ctx, "local"}
		}},
		{"board.SweepItems", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.board.SweepItems, []any{ctx, "local", 0}
		}},
		{"board.Rebase", func(t testing.TB, fx *libFixture) (any, []any) {
			id := fx.item(t)
			head := gt.Git(t, fx.dir, "rev-parse", board.RefName(id))
			g, err := fx.env.Git()
			if err != nil {
				t.Fatal(err)
			}
			h, err := g.ResolveCommit(bg, head)
			if err != nil {
				t.Fatal(err)
			}
			return fx.board.Rebase, []any{ctx, id, h}
		}},
		{"execlog.Append", func(t testing.TB, fx *libFixture) (any, []any) {
			head := gt.Git(t, fx.dir, "rev-parse", "HEAD")
			log, err := fx.env.Exec()
			if err != nil {
				t.Fatal(err)
			}
			return log.Append, []any{ctx, execlog.Entry{ID: "id", At: "at", Actor: "gate", Sprint: 1, Wave: 1, Story: "S1-01",
				Task: "S1-01/T1", Attempt: 1, Phase: "green", Event: "verdict", Result: "FAIL", Commit: head, Tree: gt.Git(t, fx.dir, "rev-parse", "HEAD^{tree}"), Base: head,
				Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "touched b.go", Paths: []string{"b.go"}}},
				Tests:   []execlog.TestResult{{ID: "a_test.go::TestA", Outcome: "FAIL_ASSERT", Detail: "got 1"}},
				Paths:   []string{"b.go"}, Detail: "detail"}}
		}},
		{"steering.Put", func(t testing.TB, fx *libFixture) (any, []any) {
			return fx.steer.Put, []any{ctx, steering.PutInput{ID: "GP-1", Kind: "principle", Statement: "statement", Domain: str("domain"),
				Status: "active", References: []steering.Reference{{Rel: "clarifies", ID: fx.steeringID(t, "GP-0")}}, Actor: "alice"}}
		}},
	}
}

// readOnly are the exported store methods that write nothing (or nothing
// but files outside git: Export).
var readOnly = map[string]bool{
	"record.Get": true, "record.Git": true, "record.HasRecord": true, "record.Prime": true, "record.PrimeWithin": true, "record.PrimeAgent": true,
	"record.Read": true, "record.ReadPage": true, "record.Snapshot": true, "record.Export": true,
	"board.Get": true, "board.Events": true, "board.Exists": true, "board.List": true, "board.Ready": true, "board.ReadyFirst": true,
	"board.Archivable": true, "board.ArchivedAt": true,
	"execlog.List": true, "execlog.Latest": true, "execlog.Each": true,
	"steering.Get": true, "steering.Enabled": true, "steering.Read": true, "steering.ReadPage": true, "steering.Gate": true,
}

// noCallerText are the exported store methods that write only what the
// store derives itself, with no text from a caller for the secret gate to
// read: the archive's commits name tips, their messages are fixed.
var noCallerText = map[string]bool{"board.ArchiveCommit": true}

// TestWriteVerbs_EveryStoreMethodIsClassified keeps libVerbs complete: a
// store method added later must be listed as a write verb (and so gated),
// as read-only, or as writing no caller text.
func TestWriteVerbs_EveryStoreMethodIsClassified(t *testing.T) {
	known := map[string]bool{}
	for _, v := range libVerbs() {
		known[v.name] = true
	}
	for prefix, typ := range map[string]reflect.Type{
		"record": reflect.TypeOf(&record.Store{}), "board": reflect.TypeOf(&board.Store{}), "steering": reflect.TypeOf(&steering.Store{}),
		"execlog": reflect.TypeOf(&execlog.Log{}),
	} {
		for i := 0; i < typ.NumMethod(); i++ {
			name := prefix + "." + typ.Method(i).Name
			if !known[name] && !readOnly[name] && !noCallerText[name] {
				t.Errorf("%s is neither a write verb (libVerbs) nor read-only: classify it", name)
			}
		}
	}
}

func callVerb(fn any, args []reflect.Value) error {
	out := reflect.ValueOf(fn).Call(args)
	if e := out[len(out)-1]; !e.IsNil() {
		return e.Interface().(error)
	}
	return nil
}

func argValues(fn any, args []any) []reflect.Value {
	ft := reflect.TypeOf(fn)
	vals := make([]reflect.Value, len(args))
	for i, a := range args {
		v := reflect.New(ft.In(i)).Elem()
		if a != nil {
			v.Set(reflect.ValueOf(a))
		}
		vals[i] = v
	}
	return vals
}

// TestWriteVerbs_SecretInEveryField_NeverReachesAnObject: a secret in
// any text leaf of any write method's arguments, one at a time, never
// reaches an object (the gate sits below every entry point).
func TestWriteVerbs_SecretInEveryField_NeverReachesAnObject(t *testing.T) {
	fx := newLibFixture(t)
	var sec secrets
	cases := 0
	for _, v := range libVerbs() {
		fn, args := v.prep(t, fx)
		count := &textWalker{target: -1}
		for _, a := range argValues(fn, args) {
			count.walk(a)
		}
		if len(count.bad) > 0 {
			t.Errorf("%s: the walker cannot fill %v: teach it", v.name, count.bad)
		}
		for leaf := 0; leaf < count.n; leaf++ {
			fn, args := v.prep(t, fx)
			vals := argValues(fn, args)
			name := fmt.Sprintf("%s#%d", v.name, leaf)
			w := &textWalker{target: leaf, secret: sec.next(name)}
			for i, a := range vals {
				w.path = []string{fmt.Sprintf("arg%d", i)}
				w.walk(a)
			}
			// Rename the case after the field it filled.
			full := v.name + " " + w.hitPath
			sec.cases[full] = sec.cases[name]
			delete(sec.cases, name)
			err := callVerb(fn, vals)
			if err != nil {
				if n := sec.echoes(full, err.Error()); n != "" {
					t.Errorf("%s: the error echoes the secret: %v", full, err)
				}
			}
			cases++
		}
	}
	t.Logf("%d fields of %d write verbs", cases, len(libVerbs()))
	for _, l := range sec.leaked(t, fx.dir) {
		t.Errorf("secret written verbatim: %s", l)
	}
}

// mcpTool is a tool as tools/list describes it.
type mcpTool struct {
	Name        string `json:"name"`
	InputSchema struct {
		Properties map[string]struct {
			Type  any `json:"type"`
			Items *struct {
				Type any `json:"type"`
			} `json:"items"`
		} `json:"properties"`
	} `json:"inputSchema"`
	Annotations struct {
		ReadOnlyHint bool `json:"readOnlyHint"`
	} `json:"annotations"`
}

func listTools(t testing.TB, srv *mcpserver.Server) []mcpTool {
	t.Helper()
	var out bytes.Buffer
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	if err := srv.Serve(bg, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				Tools []mcpTool `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &resp) == nil && resp.ID == 2 {
			return resp.Result.Tools
		}
	}
	t.Fatalf("no tools/list answer in %s", out.String())
	return nil
}

// typeIs reports whether a JSON Schema type (a name or a list) allows want;
// an absent type allows anything.
func typeIs(typ any, want string) bool {
	switch v := typ.(type) {
	case nil:
		return true
	case string:
		return v == want
	case []any:
		for _, e := range v {
			if e == want {
				return true
			}
		}
	}
	return false
}

// mcpWrites gives the baseline arguments of every tool that writes.
func mcpWrites(t testing.TB, fx *libFixture) map[string]func() map[string]any {
	return map[string]func() map[string]any{
		"record_append": func() map[string]any {
			return map[string]any{"kind": "finding", "claim": "c", "content": "x", "verification_anchor": "a", "scope": "s",
				"task_id": "t1", "references": `[{"rel":"relates","id":"` + fx.recordID(t) + `"}]`}
		},
		"record_decision": func() map[string]any {
			return map[string]any{"claim": "c", "rationale": "why", "verification_anchor": "a", "scope": "s", "task_id": "t1"}
		},
		"work_create": func() map[string]any {
			return map[string]any{"title": "t", "spec": "s", "spec_format": "text", "actor_human": "alice", "actor_agent": "w",
				"depends_on": []string{fx.done(t)}, "parent_id": fx.item(t), "tenant_id": "local"}
		},
		"work_update_meta": func() map[string]any {
			return map[string]any{"id": fx.item(t), "expected_version": 1, "title": "t2", "spec": "s2", "spec_format": "text",
				"actor_human": "alice", "actor_agent": "w"}
		},
		"work_claim": func() map[string]any {
			return map[string]any{"id": fx.item(t), "actor_human": "alice", "actor_agent": "w"}
		},
		"work_renew": func() map[string]any {
			id, tok := fx.claimed(t)
			return map[string]any{"id": id, "claim_token": tok}
		},
		"work_release": func() map[string]any {
			id, tok := fx.claimed(t)
			return map[string]any{"id": id, "claim_token": tok, "note": "n"}
		},
		"work_complete": func() map[string]any {
			id, tok := fx.claimed(t)
			return map[string]any{"id": id, "claim_token": tok, "note": "n"}
		},
		"work_cancel": func() map[string]any {
			return map[string]any{"id": fx.item(t), "actor_human": "alice", "actor_agent": "w"}
		},
		"work_reopen": func() map[string]any {
			return map[string]any{"id": fx.done(t), "actor_human": "alice", "actor_agent": "w"}
		},
		"plan_check": func() map[string]any { return map[string]any{} },
		"gate_run":   func() map[string]any { return map[string]any{"gate": "red", "task": "S1-01/T1"} },
		"test_run":   func() map[string]any { return map[string]any{"task": "S1-01/T1"} },
		"plan_import": func() map[string]any {
			// The example plan in the fixture's working tree: the first
			// import writes every item under these actors.
			if _, err := os.Stat(filepath.Join(fx.dir, "docs/agents/sprint1")); err != nil {
				copyExample(t, fx.dir)
			}
			return map[string]any{"actor_human": "alice", "actor_agent": "w", "tenant_id": "local"}
		},
		"task_start": func() map[string]any {
			return map[string]any{"task": "S1-01/T1", "item": fx.item(t), "actor_human": "alice", "actor_agent": "w", "base": "HEAD",
				"role": "red-worker", "scope": []string{"strutil/**"}, "tests": []string{"strutil/reverse_test.go::TestReverse"}}
		},
		// The board's reads return expired claims to open as they read, so
		// they are not read-only either.
		"work_get":      func() map[string]any { return map[string]any{"id": fx.item(t)} },
		"work_events":   func() map[string]any { return map[string]any{"id": fx.item(t)} },
		"work_list":     func() map[string]any { return map[string]any{"status": "open", "tenant_id": "local"} },
		"task_list":     func() map[string]any { return map[string]any{} },
		"task_complete": func() map[string]any { return map[string]any{"task": "S1-01/T1", "note": "n"} },
		"task_release":  func() map[string]any { return map[string]any{"task": "S1-01/T1", "note": "n"} },
		"task_abandon":  func() map[string]any { return map[string]any{"task": "S1-01/T1", "note": "n"} },
		"task_attempt":  func() map[string]any { return map[string]any{"task": "S1-01/T1"} },
		"task_feedback": func() map[string]any { return map[string]any{"task": "S1-01/T1"} },
		"scaffold":      func() map[string]any { return map[string]any{"task": "S1-01/T1"} },
		"wave_check":    func() map[string]any { return map[string]any{"wave": 1} },
		"memory_add": func() map[string]any {
			return map[string]any{"role": "green-worker", "text": "check the lease", "evidence": "exec:1", "date": "2026-01-02"}
		},
		"steering_put": func() map[string]any {
			return map[string]any{"id": "GP-2", "kind": "principle", "statement": "s", "domain": "d", "status": "active",
				"references": `[{"rel":"clarifies","id":"` + fx.steeringID(t, "GP-0") + `"}]`}
		},
	}
}

// TestMCPWrites_SecretInEveryArgument_NeverReachesAnObject is defect 1
// through MCP (work_create stored a spec's token verbatim): every text
// property of every tool that is not read-only.
func TestMCPWrites_SecretInEveryArgument_NeverReachesAnObject(t *testing.T) {
	fx := newLibFixture(t)
	srv := mcpserver.New("test", func() (*mcpserver.Backend, error) { return backendFor(fx.env, "mcp-test") })
	writes := mcpWrites(t, fx)
	var sec secrets
	n := 0
	for _, tool := range listTools(t, srv) {
		if tool.Annotations.ReadOnlyHint {
			continue
		}
		base, ok := writes[tool.Name]
		if !ok {
			t.Errorf("tool %s writes but has no baseline arguments here: add it to mcpWrites", tool.Name)
			continue
		}
		var props []string
		for p := range tool.InputSchema.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		for _, p := range props {
			schema := tool.InputSchema.Properties[p]
			isArr := typeIs(schema.Type, "array") && schema.Items != nil && typeIs(schema.Items.Type, "string")
			if !isArr && !typeIs(schema.Type, "string") {
				continue
			}
			name := tool.Name + "." + p
			args := base()
			secret := sec.next(name)
			switch cur := args[p].(type) {
			case []string:
				args[p] = append(cur, secret)
			case string:
				args[p] = cur + " " + secret
			default:
				if isArr {
					args[p] = []string{secret}
				} else {
					args[p] = secret
				}
			}
			raw, _ := json.Marshal(args)
			res := srv.Call(bg, tool.Name, raw)
			text, _ := json.Marshal(res)
			if nd := sec.echoes(name, string(text)); nd != "" && res.IsError {
				t.Errorf("%s: the error echoes the secret: %s", name, text)
			}
			n++
		}
	}
	t.Logf("%d tool arguments", n)
	for _, l := range sec.leaked(t, fx.dir) {
		t.Errorf("secret written verbatim: %s", l)
	}
}

// snakeKey is the JSON key of a Payload field: SessionID → session_id.
func snakeKey(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// TestHookPayloads_SecretInEveryField_NeverReachesAnObject: every text
// field of the hook payload (by reflection over hooks.Payload), for every
// event of the hook table, plus the command and subject of a commit.
func TestHookPayloads_SecretInEveryField_NeverReachesAnObject(t *testing.T) {
	dir := gt.NewRepo(t)
	var sec secrets
	var keys []string
	pt := reflect.TypeOf(hooks.Payload{})
	for i := 0; i < pt.NumField(); i++ {
		if f := pt.Field(i); f.Type.Kind() == reflect.String && f.Name != "HookEventName" && f.Name != "Cwd" {
			keys = append(keys, snakeKey(f.Name))
		}
	}
	events := []string{"Stop", "PreToolUse"} // gate events, when they write
	for _, h := range hooks.Hooks() {
		events = append(events, h.Event)
	}
	baseline := func(event string) map[string]any {
		return map[string]any{"hook_event_name": event, "session_id": "s1", "cwd": dir, "transcript_path": filepath.Join(dir, "none.jsonl"),
			"agent_id": "a1", "agent_type": "worker", "task_id": "t1", "task_subject": "subject", "task_description": "desc",
			"reason": "exit", "trigger": "manual", "custom_instructions": "keep", "last_assistant_message": "done",
			"tool_name": "Bash", "tool_input": map[string]any{"command": "git commit -m x"}, "tool_response": map[string]any{}}
	}
	run := func(name string, p map[string]any) {
		if p["hook_event_name"] == "PostToolUse" {
			gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "change")
		}
		raw, _ := json.Marshal(p)
		r := cli(t, dir, string(raw), "hook")
		if nd := sec.echoes(name, r.out+r.err); nd != "" {
			t.Errorf("%s: the hook's output echoes the secret: %s%s", name, r.out, r.err)
		}
	}
	n := 0
	for _, ev := range events {
		for _, k := range keys {
			name := ev + "." + k
			p := baseline(ev)
			s, _ := p[k].(string)
			p[k] = s + " " + sec.next(name)
			run(name, p)
			n++
		}
	}
	// The commit a PostToolUse names: its command line and its own message.
	p := baseline("PostToolUse")
	p["tool_input"] = map[string]any{"command": "git commit -m '" + sec.next("PostToolUse.tool_input.command") + "'"}
	run("PostToolUse.tool_input.command", p)
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "subject "+sec.next("PostToolUse: the commit's subject"))
	raw, _ := json.Marshal(baseline("PostToolUse"))
	cli(t, dir, string(raw), "hook")
	t.Logf("%d payload fields over %d events", n+2, len(events))
	// The user's own commit holds the last secret, so its objects cannot
	// be searched for it; the commit-boundary record that quotes the
	// subject can, and must have it redacted.
	subject := sec.cases["PostToolUse: the commit's subject"]
	delete(sec.cases, "PostToolUse: the commit's subject")
	for _, l := range sec.leaked(t, dir) {
		t.Errorf("secret written verbatim: %s", l)
	}
	recs := gt.Git(t, dir, "log", "-p", "refs/ideate/record")
	if !strings.Contains(recs, "commit-boundary") {
		t.Fatalf("no commit-boundary record was written:\n%s", recs)
	}
	for _, nd := range subject {
		if strings.Contains(recs, nd) {
			t.Errorf("the commit-boundary record quotes the commit's secret %s verbatim", nd)
		}
	}
}

// cliWrite is one CLI write command: the words, the flags struct it
// parses into, and baseline flags.
type cliWrite struct {
	words []string
	flags any
	base  func(t *testing.T, fx *libFixture) map[string]string
}

func kebab(name string) string { return strings.ReplaceAll(snakeKey(name), "_", "-") }

// stringFlags are the flags of a command struct that take text.
func stringFlags(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, stringFlags(f.Type)...)
			continue
		}
		if !f.IsExported() || f.Tag.Get("arg") != "" || !hasText(f.Type, 0) {
			continue
		}
		name := f.Tag.Get("name")
		if name == "" {
			name = kebab(f.Name)
		}
		out = append(out, name)
	}
	return out
}

// TestCLIWrites_SecretInEveryFlag_NeverReachesAnObject is defect 1 as a
// user meets it (`work create --spec` stored a token): every text flag of
// every write command, and what it prints.
func TestCLIWrites_SecretInEveryFlag_NeverReachesAnObject(t *testing.T) {
	fx := newLibFixture(t)
	cmds := []cliWrite{
		{[]string{"record", "append"}, corecmd.RecordAppendCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"kind": "finding", "claim": "c", "content": "x"}
		}},
		{[]string{"record", "decision"}, corecmd.RecordDecisionCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"claim": "c", "rationale": "why"}
		}},
		{[]string{"work", "create"}, corecmd.WorkCreateCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"title": "t", "spec": "s", "spec-format": "text", "human": "alice"}
		}},
		{[]string{"work", "update-meta"}, corecmd.WorkUpdateMetaCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"id": fx.item(t), "expected-version": "1", "title": "t2"}
		}},
		{[]string{"work", "claim"}, corecmd.WorkClaimCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"id": fx.item(t), "human": "alice"}
		}},
		{[]string{"work", "release"}, corecmd.WorkReleaseCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			id, tok := fx.claimed(t)
			return map[string]string{"id": id, "token": fmt.Sprint(tok), "note": "n"}
		}},
		{[]string{"work", "complete"}, corecmd.WorkCompleteCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			id, tok := fx.claimed(t)
			return map[string]string{"id": id, "token": fmt.Sprint(tok), "note": "n"}
		}},
		{[]string{"work", "cancel"}, corecmd.WorkCancelCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"id": fx.item(t), "human": "alice"}
		}},
		{[]string{"work", "reopen"}, corecmd.WorkReopenCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"id": fx.done(t), "human": "alice"}
		}},
		{[]string{"steering", "put"}, corecmd.SteeringPutCmd{}, func(t *testing.T, fx *libFixture) map[string]string {
			return map[string]string{"id": "GP-3", "kind": "principle", "statement": "s"}
		}},
	}
	var sec secrets
	n := 0
	for _, c := range cmds {
		for _, flag := range stringFlags(reflect.TypeOf(c.flags)) {
			name := strings.Join(c.words, " ") + " --" + flag
			fl := c.base(t, fx)
			v := fl[flag]
			if v != "" {
				v += " "
			}
			fl[flag] = v + sec.next(name)
			args := append([]string{}, c.words...)
			for k, v := range fl {
				args = append(args, "--"+k+"="+v)
			}
			r := cli(t, fx.dir, "", args...)
			if nd := sec.echoes(name, r.out+r.err); nd != "" {
				t.Errorf("%s: the command prints the secret: %s%s", name, r.out, r.err)
			}
			n++
		}
	}
	t.Logf("%d flags", n)
	for _, l := range sec.leaked(t, fx.dir) {
		t.Errorf("secret written verbatim: %s", l)
	}
}
