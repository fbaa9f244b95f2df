package steering_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/steering"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// TestMain lets the test binary act as a steering client process, so the
// concurrency test races real OS processes.
func TestMain(m *testing.M) { proctest.Main(m, clientMain) }

// clientMain amends STEERING_TEST_ID
// STEERING_TEST_N times with statements "<who> amendment <i>".
func clientMain(role string) int {
	g, err := gitstore.Open(os.Getenv("STEERING_TEST_DIR"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer g.Close()
	s := steering.Open(g, true)
	n, _ := strconv.Atoi(os.Getenv("STEERING_TEST_N"))
	who, id := os.Getenv("STEERING_TEST_WHO"), os.Getenv("STEERING_TEST_ID")
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := 0; i < n; i++ {
		switch role {
		case "amend":
			res, err := s.Put(context.Background(), steering.PutInput{ID: id, Kind: "policy", Statement: fmt.Sprintf("%s amendment %d", who, i), Actor: who})
			if err != nil {
				fmt.Fprintf(out, "%d %s\n", i, apperr.CodeOf(err))
				continue
			}
			fmt.Fprintf(out, "%d OK %v\n", i, res.Amended)
		default:
			fmt.Fprintln(os.Stderr, "unknown role", role)
			return 2
		}
	}
	return 0
}

// clock returns a fixed instant that moves on by step at every call.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

type fixture struct {
	s   *steering.Store
	g   *gitstore.Store
	dir string
	clk *clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := gt.NewRepo(t)
	return openFixture(t, dir, true)
}

func openFixture(t *testing.T, dir string, enabled bool) *fixture {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	c := &clock{t: t0, step: time.Second}
	s := steering.Open(g, enabled)
	s.Now = c.now
	return &fixture{s: s, g: g, dir: dir, clk: c}
}

func (f *fixture) put(t *testing.T, in steering.PutInput) *steering.PutResult {
	t.Helper()
	res, err := f.s.Put(t.Context(), in)
	if err != nil {
		t.Fatalf("put %s: %v", in.ID, err)
	}
	return res
}

func (f *fixture) get(t *testing.T, id string) *steering.Item {
	t.Helper()
	it, err := f.s.Get(id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	if it == nil {
		t.Fatalf("get %s: absent", id)
	}
	return it
}

func (f *fixture) read(t *testing.T, req steering.ReadRequest) *steering.Page {
	t.Helper()
	p, err := f.s.Read(req)
	if err != nil {
		t.Fatalf("read %+v: %v", req, err)
	}
	return p
}

// state is what a call must leave alone when it fails: the ideate refs and
// the object count.
func state(t *testing.T, dir string) string {
	t.Helper()
	return gt.Git(t, dir, "for-each-ref", "refs/ideate/") + "\n" + gt.Git(t, dir, "count-objects", "-v")
}

func wantCode(t *testing.T, err error, code apperr.Code) {
	t.Helper()
	if !apperr.Is(err, code) {
		t.Fatalf("error = %v, want %s", err, code)
	}
}

func ids(rows []steering.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// ---- file format ----

func goldenItem() *steering.Item {
	return &steering.Item{
		ID:        "GP-23",
		Kind:      "guiding-principle",
		Domain:    "storage/refs",
		Status:    "superseded",
		UpdatedAt: "2026-11-29T12:00:00.000Z",
		Statement: "Keep state in git.\n\nNo \"server\" & <no> database.",
		History: []steering.Amendment{
			{At: "2026-11-28T09:00:00.000Z", Status: "deprecated", Statement: "Keep state\tin files."},
			{At: "2026-11-27T08:00:00.000Z", Status: "active", Statement: "Keep state\nsomewhere."},
		},
		References: []steering.Reference{{Rel: "supersedes", ID: "GP-1"}, {Rel: "clarifies", ID: "POL.auth_2"}},
	}
}

const goldenFile = `---
id: "GP-23"
kind: "guiding-principle"
domain: "storage/refs"
status: "superseded"
updated_at: "2026-11-29T12:00:00.000Z"
history: [{"at":"2026-11-28T09:00:00.000Z","status":"deprecated","statement":"Keep state\tin files."},{"at":"2026-11-27T08:00:00.000Z","status":"active","statement":"Keep state\nsomewhere."}]
references: [{"rel":"supersedes","id":"GP-1"},{"rel":"clarifies","id":"POL.auth_2"}]
---

Keep state in git.

No "server" & <no> database.
`

func TestFormat_Golden(t *testing.T) {
	it := goldenItem()
	got := string(steering.Marshal(it))
	if got != goldenFile {
		t.Fatalf("Marshal differs from golden:\n%s", cmp.Diff(goldenFile, got))
	}
	back, err := steering.Parse([]byte(goldenFile))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(it, back); d != "" {
		t.Fatalf("Parse(golden) (-want +got):\n%s", d)
	}
	// A fresh item writes empty arrays.
	fresh := &steering.Item{ID: "a", Kind: "policy", Status: "active", UpdatedAt: "2026-11-29T12:00:00.000Z", Statement: "s"}
	want := "---\nid: \"a\"\nkind: \"policy\"\ndomain: \"\"\nstatus: \"active\"\nupdated_at: \"2026-11-29T12:00:00.000Z\"\nhistory: []\nreferences: []\n---\n\ns\n"
	if got := string(steering.Marshal(fresh)); got != want {
		t.Fatalf("fresh item:\n%q\nwant\n%q", got, want)
	}
}

var hostile = []string{
	"",
	" ",
	"\n",
	"\n\nstarts with blank lines",
	"ends with blank lines\n\n",
	"---",
	"a\n---\nb",
	"---\nid: \"evil\"\nstatus: \"active\"\n---\n\nfake body",
	"\n---\n",
	`quotes " and \ backslashes \" \\u0041 \n`,
	"line\u2028sep\u2029para",
	"controls \x00\x01\x07\x08\x0b\x0c\x1b\x1f\x7f end",
	"tabs\tand\r\nCRLF\r",
	"emoji 😀 and 日本語 and é",
	"<script>&amp;</script>",
	"key: \"value\"\nhistory: []",
	strings.Repeat("long ", 5000),
}

func TestFormat_RoundTripHostile(t *testing.T) {
	for i, h := range hostile {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			it := &steering.Item{ID: "x-" + strconv.Itoa(i), Kind: h, Domain: h, Status: "deprecated", UpdatedAt: h, Statement: h,
				History:    []steering.Amendment{{At: h, Status: "active", Statement: h}},
				References: []steering.Reference{{Rel: h + "r", ID: "GP-1"}}}
			data := steering.Marshal(it)
			back, err := steering.Parse(data)
			if err != nil {
				t.Fatalf("Parse(Marshal(%q)): %v\n%s", h, err, data)
			}
			if d := cmp.Diff(it, back); d != "" {
				t.Fatalf("round trip (-want +got):\n%s", d)
			}
			if !bytes.Equal(steering.Marshal(back), data) {
				t.Fatal("Marshal(Parse(x)) != x")
			}
		})
	}
}

// The front matter is what JavaScript's JSON.stringify writes: checked
// against node when it is installed.
func TestFormat_MatchesJSONStringify(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	var items []*steering.Item
	for i, h := range hostile {
		items = append(items, &steering.Item{ID: "x-" + strconv.Itoa(i), Kind: h, Domain: h, Status: "active", UpdatedAt: h,
			Statement: h, History: []steering.Amendment{{At: h, Status: "active", Statement: h}},
			References: []steering.Reference{{Rel: h + "r", ID: "GP-1"}}})
	}
	items = append(items, goldenItem())
	in, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	// The serializer below is written from the format description: each
	// key, ": ", JSON.stringify of the value; fences; blank line; body.
	script := `
const items = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = items.map((it) => {
  const keys = ['id', 'kind', 'domain', 'status', 'updated_at'];
  const lines = ['---'];
  for (const k of keys) lines.push(k + ': ' + JSON.stringify(it[k]));
  lines.push('history: ' + JSON.stringify(it.history.map((h) => ({at: h.at, status: h.status, statement: h.statement}))));
  lines.push('references: ' + JSON.stringify(it.references.map((r) => ({rel: r.rel, id: r.id}))));
  lines.push('---');
  return lines.join('\n') + '\n\n' + it.statement + '\n';
});
process.stdout.write(JSON.stringify(out));
`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var want []string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		if got := string(steering.Marshal(it)); got != want[i] {
			t.Errorf("item %d differs from JSON.stringify:\n%s", i, cmp.Diff(want[i], got))
		}
	}
}

func TestParse(t *testing.T) {
	good := "---\nid: \"a\"\nkind: \"k\"\ndomain: \"\"\nstatus: \"active\"\nupdated_at: \"t\"\n"
	t.Run("UnknownKeysIgnored_MissingArraysEmpty", func(t *testing.T) {
		it, err := steering.Parse([]byte(good + "extra: {\"x\":[1,2]}\nweight: 3\n---\n\nbody\n"))
		if err != nil {
			t.Fatal(err)
		}
		want := &steering.Item{ID: "a", Kind: "k", Status: "active", UpdatedAt: "t", Statement: "body",
			History: []steering.Amendment{}, References: []steering.Reference{}}
		if d := cmp.Diff(want, it); d != "" {
			t.Fatal(d)
		}
	})
	bad := map[string]string{
		"Empty":            "",
		"NoFence":          "id: \"a\"\n",
		"Unterminated":     good + "\nbody\n",
		"NotKeyValue":      good + "garbage\n---\n\nb\n",
		"NotJSON":          good + "extra: {oops\n---\n\nb\n",
		"MissingKind":      "---\nid: \"a\"\ndomain: \"\"\nstatus: \"active\"\nupdated_at: \"t\"\n---\n\nb\n",
		"NumberID":         "---\nid: 7\nkind: \"k\"\ndomain: \"\"\nstatus: \"active\"\nupdated_at: \"t\"\n---\n\nb\n",
		"NullKind":         "---\nid: \"a\"\nkind: null\ndomain: \"\"\nstatus: \"active\"\nupdated_at: \"t\"\n---\n\nb\n",
		"BadStatus":        "---\nid: \"a\"\nkind: \"k\"\ndomain: \"\"\nstatus: \"gone\"\nupdated_at: \"t\"\n---\n\nb\n",
		"BadID":            "---\nid: \"../a\"\nkind: \"k\"\ndomain: \"\"\nstatus: \"active\"\nupdated_at: \"t\"\n---\n\nb\n",
		"HistoryNotArray":  good + "history: {}\n---\n\nb\n",
		"HistoryNull":      good + "history: null\n---\n\nb\n",
		"HistoryBadStatus": good + "history: [{\"at\":\"t\",\"status\":\"x\",\"statement\":\"s\"}]\n---\n\nb\n",
		"HistoryMissingAt": good + "history: [{\"status\":\"active\",\"statement\":\"s\"}]\n---\n\nb\n",
		"RefEmptyRel":      good + "references: [{\"rel\":\"\",\"id\":\"b\"}]\n---\n\nb\n",
		"RefMissingID":     good + "references: [{\"rel\":\"r\"}]\n---\n\nb\n",
		"InvalidUTF8":      good + "---\n\n\xff\n",
	}
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := steering.Parse([]byte(data)); err != steering.ErrUnparseable {
				t.Fatalf("Parse = %v, want ErrUnparseable", err)
			}
		})
	}
}

// ---- put ----

func TestPut_CreateAmendHistory(t *testing.T) {
	f := newFixture(t)
	r1 := f.put(t, steering.PutInput{ID: "GP-1", Kind: "guiding-principle", Statement: "v1", Domain: ptr("Storage")})
	if r1.Amended || r1.Status != "active" || r1.ID != "GP-1" {
		t.Fatalf("create = %+v", r1)
	}
	r2 := f.put(t, steering.PutInput{ID: "GP-1", Kind: "guiding-principle", Statement: "v2", Status: "deprecated"})
	if !r2.Amended || r2.Status != "deprecated" {
		t.Fatalf("amend = %+v", r2)
	}
	// No status and no domain given: both are kept.
	r3 := f.put(t, steering.PutInput{ID: "GP-1", Kind: "policy", Statement: "v3"})
	if !r3.Amended || r3.Status != "deprecated" {
		t.Fatalf("second amend = %+v", r3)
	}
	it := f.get(t, "GP-1")
	want := &steering.Item{ID: "GP-1", Kind: "policy", Domain: "Storage", Status: "deprecated",
		UpdatedAt: "2026-11-29T12:00:02.000Z", Statement: "v3",
		History: []steering.Amendment{
			{At: "2026-11-29T12:00:01.000Z", Status: "deprecated", Statement: "v2"},
			{At: "2026-11-29T12:00:00.000Z", Status: "active", Statement: "v1"},
		},
		References: []steering.Reference{}}
	if d := cmp.Diff(want, it); d != "" {
		t.Fatalf("item (-want +got):\n%s", d)
	}
	// An explicit empty domain clears it; a status flips back.
	f.put(t, steering.PutInput{ID: "GP-1", Kind: "policy", Statement: "v4", Domain: ptr(""), Status: "active"})
	it = f.get(t, "GP-1")
	if it.Domain != "" || it.Status != "active" || len(it.History) != 3 || it.History[0].Statement != "v3" {
		t.Fatalf("after clearing the domain: %+v", it)
	}
	if it, err := f.s.Get("absent"); err != nil || it != nil {
		t.Fatalf("Get(absent) = %v, %v", it, err)
	}
	if n := gt.Git(t, f.dir, "rev-list", "--count", steering.RefName); n != "4" {
		t.Fatalf("%s commits, want 4 (one per put)", n)
	}
	gt.Fsck(t, f.dir)
}

func TestPut_InvalidStatus(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "a", Kind: "k", Statement: "s"})
	before := state(t, f.dir)
	for _, st := range []string{"Active", "deleted", " active", "active\n", "superseded "} {
		_, err := f.s.Put(t.Context(), steering.PutInput{ID: "a", Kind: "k", Statement: "t", Status: st})
		wantCode(t, err, apperr.Schema)
		_, err = f.s.Put(t.Context(), steering.PutInput{ID: "new", Kind: "k", Statement: "t", Status: st})
		wantCode(t, err, apperr.Schema)
		_, err = f.s.Read(steering.ReadRequest{Status: st})
		wantCode(t, err, apperr.Schema)
	}
	if state(t, f.dir) != before {
		t.Fatal("a refused put changed the repository")
	}
	if it := f.get(t, "a"); it.Status != "active" || it.Statement != "s" {
		t.Fatalf("item changed: %+v", it)
	}
}

func TestPut_BadID(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "ok", Kind: "k", Statement: "s"})
	before := state(t, f.dir)
	bad := []string{"", "-lead", ".lead", "_lead", "a/b", "../x", "a b", "a\nb", "é", "a:b", "a*", strings.Repeat("a", 129)}
	for _, id := range bad {
		_, err := f.s.Put(t.Context(), steering.PutInput{ID: id, Kind: "k", Statement: "s"})
		wantCode(t, err, apperr.Schema)
		_, err = f.s.Get(id)
		wantCode(t, err, apperr.Schema)
		if id == "" {
			continue // an empty supersedes means "none"
		}
		_, err = f.s.Put(t.Context(), steering.PutInput{ID: "ok", Kind: "k", Statement: "s", Supersedes: id})
		wantCode(t, err, apperr.Schema)
		_, err = f.s.Put(t.Context(), steering.PutInput{ID: "ok", Kind: "k", Statement: "s", References: []steering.Reference{{Rel: "r", ID: id}}})
		wantCode(t, err, apperr.Schema)
	}
	if state(t, f.dir) != before {
		t.Fatal("a refused put changed the repository")
	}
	for _, id := range []string{"a", "GP-23", "POL.auth_1", "0", strings.Repeat("z", 128), "A-._-"} {
		f.put(t, steering.PutInput{ID: id, Kind: "k", Statement: "s"})
	}
}

func TestPut_SchemaFields(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "a", Kind: "k", Statement: "s"})
	before := state(t, f.dir)
	cases := map[string]steering.PutInput{
		"EmptyStatement":      {ID: "b", Kind: "k", Statement: ""},
		"WhitespaceStatement": {ID: "b", Kind: "k", Statement: " \n\t\r\n "},
		"EmptyKind":           {ID: "b", Kind: " ", Statement: "s"},
		"EmptyRel":            {ID: "b", Kind: "k", Statement: "s", References: []steering.Reference{{Rel: "", ID: "a"}}},
		"SelfSupersedes":      {ID: "a", Kind: "k", Statement: "s", Supersedes: "a"},
		"SelfReference":       {ID: "a", Kind: "k", Statement: "s", References: []steering.Reference{{Rel: "r", ID: "a"}}},
		"HugeStatement":       {ID: "b", Kind: "k", Statement: strings.Repeat("x", steering.MaxStatement+1)},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := f.s.Put(t.Context(), in)
			wantCode(t, err, apperr.Schema)
		})
	}
	if state(t, f.dir) != before {
		t.Fatal("a refused put changed the repository")
	}
}

func TestPut_DanglingSupersedes(t *testing.T) {
	f := newFixture(t)
	before := state(t, f.dir)
	_, err := f.s.Put(t.Context(), steering.PutInput{ID: "new", Kind: "k", Statement: "s", Supersedes: "old"})
	wantCode(t, err, apperr.DanglingSupersedes)
	_, err = f.s.Put(t.Context(), steering.PutInput{ID: "new", Kind: "k", Statement: "s", References: []steering.Reference{{Rel: "clarifies", ID: "old"}}})
	wantCode(t, err, apperr.DanglingSupersedes)
	if state(t, f.dir) != before {
		t.Fatal("a dangling put wrote something")
	}
	f.put(t, steering.PutInput{ID: "old", Kind: "k", Statement: "s"})
	f.put(t, steering.PutInput{ID: "new", Kind: "k", Statement: "s", Supersedes: "old"})
	// One dangling edge among good ones refuses the whole put.
	_, err = f.s.Put(t.Context(), steering.PutInput{ID: "new", Kind: "k", Statement: "s2",
		References: []steering.Reference{{Rel: "clarifies", ID: "old"}, {Rel: "clarifies", ID: "ghost"}}})
	wantCode(t, err, apperr.DanglingSupersedes)
	if it := f.get(t, "new"); it.Statement != "s" {
		t.Fatalf("refused amend changed the item: %+v", it)
	}

	// A target whose file does not parse is not a target; a read skips it.
	corrupt(t, f, "broken", "not an item\n")
	_, err = f.s.Put(t.Context(), steering.PutInput{ID: "new", Kind: "k", Statement: "s", Supersedes: "broken"})
	wantCode(t, err, apperr.DanglingSupersedes)
	var warned []string
	f.s.Warn = func(m string) { warned = append(warned, m) }
	page := f.read(t, steering.ReadRequest{})
	if got := ids(page.Items); !cmp.Equal(got, []string{"new", "old"}) {
		t.Fatalf("read = %v", got)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "broken.md") {
		t.Fatalf("warnings = %q", warned)
	}
	// Amending an item whose file does not parse is refused, not clobbered.
	_, err = f.s.Put(t.Context(), steering.PutInput{ID: "broken", Kind: "k", Statement: "s"})
	wantCode(t, err, apperr.Internal)
	gt.Fsck(t, f.dir)
}

// corrupt commits items/<id>.md with content through gitstore, as a
// foreign writer would.
func corrupt(t *testing.T, f *fixture, id, content string) {
	t.Helper()
	_, err := f.g.Transact(t.Context(), steering.RefName, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		c, err := f.g.ReadCommit(tip)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		b, err := f.g.WriteBlob([]byte(content))
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		root, err := f.g.Insert(c.Tree, []string{"items"}, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: id + ".md", Hash: b}, true)
		return root, "corrupt " + id + "\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPut_EdgesKeptReplacedCleared(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "a", Kind: "k", Statement: "s"})
	f.put(t, steering.PutInput{ID: "b", Kind: "k", Statement: "s"})
	f.put(t, steering.PutInput{ID: "c", Kind: "k", Statement: "s", Supersedes: "a",
		References: []steering.Reference{{Rel: "clarifies", ID: "b"}, {Rel: "supersedes", ID: "a"}}})
	want := []steering.Reference{{Rel: "supersedes", ID: "a"}, {Rel: "clarifies", ID: "b"}}
	if got := f.get(t, "c").References; !cmp.Equal(got, want) {
		t.Fatalf("edges = %v, want %v (supersedes first, duplicates dropped)", got, want)
	}
	f.put(t, steering.PutInput{ID: "c", Kind: "k", Statement: "amended"})
	if got := f.get(t, "c").References; !cmp.Equal(got, want) {
		t.Fatalf("edges after an amend without edges = %v, want them kept", got)
	}
	f.put(t, steering.PutInput{ID: "c", Kind: "k", Statement: "amended", References: []steering.Reference{{Rel: "relates-to", ID: "b"}}})
	if got := f.get(t, "c").References; !cmp.Equal(got, []steering.Reference{{Rel: "relates-to", ID: "b"}}) {
		t.Fatalf("edges after replacing = %v", got)
	}
	f.put(t, steering.PutInput{ID: "c", Kind: "k", Statement: "amended", References: []steering.Reference{}})
	if got := f.get(t, "c").References; len(got) != 0 {
		t.Fatalf("edges after clearing = %v", got)
	}
}

// ---- read ----

func TestRead_ReferencedBy(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "A", Kind: "policy", Statement: "a"})
	f.put(t, steering.PutInput{ID: "B", Kind: "policy", Statement: "b", Supersedes: "A", Domain: ptr("other")})
	f.put(t, steering.PutInput{ID: "C", Kind: "guiding-principle", Statement: "c", References: []steering.Reference{{Rel: "clarifies", ID: "A"}, {Rel: "relates-to", ID: "B"}}})
	f.put(t, steering.PutInput{ID: "A", Kind: "policy", Statement: "a2", Status: "superseded"})

	// Backlinks come from every item, including those the filter drops.
	page := f.read(t, steering.ReadRequest{ID: "A"})
	if len(page.Items) != 1 || page.NextCursor != nil {
		t.Fatalf("page = %+v", page)
	}
	a := page.Items[0]
	want := []steering.Reference{{Rel: "clarifies", ID: "C"}, {Rel: "supersedes", ID: "B"}}
	if !cmp.Equal(a.ReferencedBy, want) {
		t.Fatalf("A.referenced_by = %v, want %v", a.ReferencedBy, want)
	}
	if a.HistoryLength != 1 || a.History != nil || a.Status != "superseded" {
		t.Fatalf("row A = %+v", a)
	}
	page = f.read(t, steering.ReadRequest{})
	if got := ids(page.Items); !cmp.Equal(got, []string{"A", "C", "B"}) {
		t.Fatalf("order = %v", got)
	}
	if got := page.Items[1].ReferencedBy; len(got) != 0 || got == nil {
		t.Fatalf("C.referenced_by = %#v, want []", got)
	}
	if got := page.Items[2].ReferencedBy; !cmp.Equal(got, []steering.Reference{{Rel: "relates-to", ID: "C"}}) {
		t.Fatalf("B.referenced_by = %v", got)
	}
}

func TestRead_FiltersAndShape(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "p1", Kind: "policy", Statement: "one", Domain: ptr("Auth/Tokens")})
	f.put(t, steering.PutInput{ID: "p2", Kind: "policy", Statement: "two", Domain: ptr("storage"), Status: "deprecated"})
	f.put(t, steering.PutInput{ID: "g1", Kind: "guiding-principle", Statement: "three", Domain: ptr("auth")})
	f.put(t, steering.PutInput{ID: "g1", Kind: "guiding-principle", Statement: "three, amended"})
	cases := []struct {
		req  steering.ReadRequest
		want []string
	}{
		{steering.ReadRequest{}, []string{"g1", "p2", "p1"}},
		{steering.ReadRequest{ID: "p2"}, []string{"p2"}},
		{steering.ReadRequest{ID: "P2"}, []string{}},
		{steering.ReadRequest{ID: "not/an/id"}, []string{}},
		{steering.ReadRequest{Domain: "AUTH"}, []string{"g1", "p1"}},
		{steering.ReadRequest{Domain: "tok"}, []string{"p1"}},
		{steering.ReadRequest{Status: "deprecated"}, []string{"p2"}},
		{steering.ReadRequest{Status: "active"}, []string{"g1", "p1"}},
		{steering.ReadRequest{Kind: "policy"}, []string{"p2", "p1"}},
		{steering.ReadRequest{Kind: "Policy"}, []string{}},
		{steering.ReadRequest{Kind: "policy", Domain: "auth"}, []string{"p1"}},
	}
	for _, c := range cases {
		if got := ids(f.read(t, c.req).Items); !cmp.Equal(got, c.want) {
			t.Errorf("read %+v = %v, want %v", c.req, got, c.want)
		}
	}

	// JSON shape: no history key unless asked, then an array (also when empty).
	page := f.read(t, steering.ReadRequest{})
	b, _ := json.Marshal(page)
	if strings.Contains(string(b), `"history"`) {
		t.Fatalf("history present without IncludeHistory: %s", b)
	}
	row, _ := json.Marshal(page.Items[2])
	wantRow := `{"id":"p1","kind":"policy","domain":"Auth/Tokens","status":"active","updated_at":"2026-11-29T12:00:00.000Z","statement":"one","references":[],"referenced_by":[],"history_length":0}`
	if string(row) != wantRow {
		t.Fatalf("row JSON:\n%s\nwant\n%s", row, wantRow)
	}
	page = f.read(t, steering.ReadRequest{IncludeHistory: true})
	b, _ = json.Marshal(page)
	if !strings.HasPrefix(string(b), `{"items":[{"id":"g1",`) || !strings.HasSuffix(string(b), `"history_length":0,"history":[]}],"next_cursor":null}`) {
		t.Fatalf("page JSON: %s", b)
	}
	if h := page.Items[0].History; len(h) != 1 || h[0].Statement != "three" {
		t.Fatalf("g1 history = %v", h)
	}
}

// walk reads every page of req and returns the ids in order.
func walk(t *testing.T, f *fixture, req steering.ReadRequest) (out []string, pages int) {
	t.Helper()
	for {
		p := f.read(t, req)
		pages++
		if len(p.Items) == 0 && p.NextCursor != nil {
			t.Fatal("an empty page with a cursor")
		}
		out = append(out, ids(p.Items)...)
		if p.NextCursor == nil {
			return out, pages
		}
		req.Cursor = *p.NextCursor
		if pages > 1000 {
			t.Fatal("walk does not end")
		}
	}
}

func TestRead_PagingWalk(t *testing.T) {
	f := newFixture(t)
	// 30 items; every third shares its updated_at with the one before it,
	// so ties are broken by id ascending.
	type key struct{ at, id string }
	var all []key
	for i := 0; i < 30; i++ {
		at := t0.Add(time.Duration(i/2) * time.Minute)
		f.clk.set(at)
		id := fmt.Sprintf("item-%02d", 29-i)
		domain := "even"
		if i%2 == 1 {
			domain = "Odd"
		}
		f.put(t, steering.PutInput{ID: id, Kind: "k", Statement: "s " + id, Domain: ptr(domain)})
		all = append(all, key{textfmt.Timestamp(at), id})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].at != all[j].at {
			return all[i].at > all[j].at
		}
		return all[i].id < all[j].id
	})
	var want []string
	for _, k := range all {
		want = append(want, k.id)
	}
	for _, limit := range []int{1, 7, 30, 500} {
		got, pages := walk(t, f, steering.ReadRequest{Limit: ptr(limit)})
		if !cmp.Equal(got, want) {
			t.Fatalf("limit %d walk:\n%v\nwant\n%v", limit, got, want)
		}
		if wantPages := (30 + limit - 1) / limit; pages != wantPages {
			t.Fatalf("limit %d: %d pages, want %d", limit, pages, wantPages)
		}
	}
	// Filtered walk.
	got, _ := walk(t, f, steering.ReadRequest{Domain: "ODD", Limit: ptr(4)})
	var wantOdd []string
	for _, id := range want {
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "item-"))
		if (29-n)%2 == 1 {
			wantOdd = append(wantOdd, id)
		}
	}
	if !cmp.Equal(got, wantOdd) {
		t.Fatalf("odd walk = %v, want %v", got, wantOdd)
	}

	// The cursor is bound to its filter. Domain case does not matter.
	p := f.read(t, steering.ReadRequest{Domain: "odd", Limit: ptr(4)})
	c := *p.NextCursor
	if _, err := f.s.Read(steering.ReadRequest{Domain: "ODD", Limit: ptr(4), Cursor: c}); err != nil {
		t.Fatalf("same filter, other case: %v", err)
	}
	if _, err := f.s.Read(steering.ReadRequest{Domain: "odd", Limit: ptr(9), Cursor: c, IncludeHistory: true}); err != nil {
		t.Fatalf("same filter, other page shape: %v", err)
	}
	for _, other := range []steering.ReadRequest{{}, {Domain: "even"}, {Domain: "odd", Status: "active"},
		{Domain: "odd", Kind: "k"}, {Domain: "odd", ID: "item-01"}} {
		other.Cursor = c
		_, err := f.s.Read(other)
		wantCode(t, err, apperr.CursorMismatch)
	}
	// Malformed and foreign cursors are SCHEMA.
	for _, bad := range []string{"x", c + "=", paging.EncodeCursor("work", "", []string{"a", "b"}),
		paging.EncodeCursor("steering", steeringKey("", "", "", ""), []string{"only-one"})} {
		_, err := f.s.Read(steering.ReadRequest{Cursor: bad})
		wantCode(t, err, apperr.Schema)
	}
	// A boundary no item has selects the items past it.
	mid := paging.EncodeCursor("steering", steeringKey("", "", "", ""), []string{all[10].at, all[10].id + "~"})
	p = f.read(t, steering.ReadRequest{Cursor: mid, Limit: ptr(500)})
	if got := ids(p.Items); !cmp.Equal(got, want[11:]) {
		t.Fatalf("read past a synthetic boundary = %v, want %v", got, want[11:])
	}
}

// steeringKey rebuilds the documented filter string of a read.
func steeringKey(id, domain, status, kind string) string {
	return "id=" + id + "\x00domain=" + strings.ToLower(domain) + "\x00status=" + status + "\x00kind=" + kind
}

func TestRead_DefaultAndClampedLimit(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < paging.DefaultLimit+3; i++ {
		f.put(t, steering.PutInput{ID: fmt.Sprintf("i%03d", i), Kind: "k", Statement: "s"})
	}
	p := f.read(t, steering.ReadRequest{})
	if len(p.Items) != paging.DefaultLimit || p.NextCursor == nil {
		t.Fatalf("default page: %d items, cursor %v", len(p.Items), p.NextCursor)
	}
	p = f.read(t, steering.ReadRequest{Cursor: *p.NextCursor})
	if len(p.Items) != 3 || p.NextCursor != nil {
		t.Fatalf("second page: %d items, cursor %v", len(p.Items), p.NextCursor)
	}
	for lim, want := range map[int]int{0: 1, -5: 1, 2: 2, 100000: paging.DefaultLimit + 3} {
		if p := f.read(t, steering.ReadRequest{Limit: ptr(lim)}); len(p.Items) != want {
			t.Errorf("limit %d: %d items, want %d", lim, len(p.Items), want)
		}
	}
}

func TestRead_BudgetLiveness(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("b", paging.Budget+5000)
	for i := 0; i < 3; i++ {
		f.put(t, steering.PutInput{ID: fmt.Sprintf("big%d", i), Kind: "k", Statement: big})
	}
	for i := 0; i < 5; i++ {
		f.put(t, steering.PutInput{ID: fmt.Sprintf("small%d", i), Kind: "k", Statement: strings.Repeat("s", 9000)})
	}
	for _, measure := range []func(any) (int, error){paging.CompactLen, paging.PrettyLen} {
		req := steering.ReadRequest{Measure: measure}
		var got []string
		var sizes []int
		for pages := 0; ; pages++ {
			p := f.read(t, req)
			if len(p.Items) == 0 {
				t.Fatal("empty page")
			}
			total := 0
			for _, r := range p.Items {
				n, _ := measure(r)
				total += n
			}
			if len(p.Items) > 1 && total > paging.Budget {
				t.Fatalf("page of %d items measures %d > budget", len(p.Items), total)
			}
			sizes = append(sizes, len(p.Items))
			got = append(got, ids(p.Items)...)
			if p.NextCursor == nil {
				break
			}
			req.Cursor = *p.NextCursor
		}
		// Newest first: the five small ones (4 fit), then each big one alone.
		if !cmp.Equal(sizes, []int{4, 1, 1, 1, 1}) {
			t.Fatalf("page sizes = %v", sizes)
		}
		want := []string{"small4", "small3", "small2", "small1", "small0", "big2", "big1", "big0"}
		if !cmp.Equal(got, want) {
			t.Fatalf("walk = %v", got)
		}
	}
	// Without a measure, no budget applies.
	if p := f.read(t, steering.ReadRequest{}); len(p.Items) != 8 || p.NextCursor != nil {
		t.Fatalf("unmeasured page: %d items", len(p.Items))
	}
}

// ---- the gate ----

func TestGate(t *testing.T) {
	dir := gt.NewRepo(t)
	on := openFixture(t, dir, true)
	on.put(t, steering.PutInput{ID: "existing", Kind: "k", Statement: "s"})
	on.put(t, steering.PutInput{ID: "second", Kind: "k", Statement: "s"})
	cursor := *on.read(t, steering.ReadRequest{Limit: ptr(1)}).NextCursor

	for name, d := range map[string]string{"existing-store": dir, "fresh-repo": gt.NewRepo(t)} {
		t.Run(name, func(t *testing.T) {
			before := state(t, d)
			off := openFixture(t, d, false)
			if off.s.Enabled() {
				t.Fatal("Enabled() on a gated store")
			}
			puts := []steering.PutInput{
				{ID: "valid", Kind: "policy", Statement: "fine", Domain: ptr("d"), Status: "active"},
				{ID: "existing", Kind: "policy", Statement: "amend"},
				{},
				{ID: "../../etc/passwd", Kind: "", Statement: "   ", Status: "bogus", Supersedes: "/x",
					References: []steering.Reference{{Rel: "", ID: "no such"}}},
				{ID: "x", Kind: "k", Statement: "AKIA" + strings.Repeat("Q7", 8)},
				{ID: "y", Kind: "k", Statement: "s", Supersedes: "ghost"},
			}
			for i, in := range puts {
				res, err := off.s.Put(t.Context(), in)
				if res != nil {
					t.Errorf("put %d returned a result", i)
				}
				wantCode(t, err, steering.Gated)
			}
			reads := []steering.ReadRequest{
				{},
				{ID: "existing", IncludeHistory: true},
				{Status: "bogus"},
				{Cursor: "%%%not-a-cursor"},
				{Cursor: cursor},
				{Cursor: cursor, Domain: "other"},
				{Limit: ptr(-1), Measure: paging.CompactLen},
			}
			for i, req := range reads {
				p, err := off.s.Read(req)
				if p != nil {
					t.Errorf("read %d returned a page", i)
				}
				wantCode(t, err, steering.Gated)
			}
			for _, id := range []string{"existing", "absent", "", "bad/id"} {
				it, err := off.s.Get(id)
				if it != nil {
					t.Errorf("get %q returned an item", id)
				}
				wantCode(t, err, steering.Gated)
			}
			var nilStore *steering.Store
			_, err := nilStore.Read(steering.ReadRequest{})
			wantCode(t, err, steering.Gated)
			if after := state(t, d); after != before {
				t.Fatalf("the gated store changed the repository:\nbefore\n%s\nafter\n%s", before, after)
			}
			if apperr.Message(err) == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("gate sentence = %q", err)
			}
		})
	}
	if steering.Gated != "GATED" {
		t.Fatalf("Gated = %q", steering.Gated)
	}
	gt.Fsck(t, dir)
}

// ---- secrets ----

func TestSecretRedaction(t *testing.T) {
	f := newFixture(t)
	key := "AKIA" + strings.Repeat("Q7", 8)
	gh := "ghp_" + strings.Repeat("aB3", 12)
	f.put(t, steering.PutInput{ID: "target", Kind: "k", Statement: "s"})
	res := f.put(t, steering.PutInput{ID: "leaky", Kind: "policy " + key, Domain: ptr("domain " + gh),
		Statement: "Use key " + key + " for deploys.\nsecond line " + gh, Actor: "dan " + key,
		References: []steering.Reference{{Rel: "clarifies " + key, ID: "target"}}})
	it := res.Item
	for _, v := range []string{it.Kind, it.Domain, it.Statement, it.References[0].Rel} {
		if strings.Contains(v, key) || strings.Contains(v, gh) || !strings.Contains(v, "[REDACTED:") {
			t.Errorf("field not redacted: %q", v)
		}
	}
	got := f.get(t, "leaky")
	if d := cmp.Diff(it, got); d != "" {
		t.Fatalf("stored item differs from the result:\n%s", d)
	}
	if got.Statement != "Use key [REDACTED:aws-access-key-id] for deploys.\nsecond line [REDACTED:github-token]" {
		t.Fatalf("statement = %q", got.Statement)
	}
	// No object in the repository holds either secret: not the file, not
	// the commit message, not a tree.
	all := gt.Git(t, f.dir, "cat-file", "--batch-all-objects", "--batch")
	if strings.Contains(all, key) || strings.Contains(all, gh) {
		t.Fatal("a secret reached the object database")
	}
	// An id (or edge id) the gate would change is refused.
	before := state(t, f.dir)
	_, err := f.s.Put(t.Context(), steering.PutInput{ID: key, Kind: "k", Statement: "s"})
	wantCode(t, err, apperr.Schema)
	_, err = f.s.Put(t.Context(), steering.PutInput{ID: "other", Kind: "k", Statement: "s", Supersedes: key})
	wantCode(t, err, apperr.Schema)
	if strings.Contains(err.Error(), key) {
		t.Fatalf("the error echoes the secret: %v", err)
	}
	// No refusal sentence echoes a secret either.
	for _, in := range []steering.PutInput{
		{ID: key + "/x", Kind: "k", Statement: "s"},
		{ID: "other", Kind: "k", Statement: "s", Status: key},
		{ID: "other", Kind: "k", Statement: "s", References: []steering.Reference{{Rel: "r", ID: key + " x"}}},
	} {
		_, err := f.s.Put(t.Context(), in)
		wantCode(t, err, apperr.Schema)
		if strings.Contains(err.Error(), key) {
			t.Fatalf("the error echoes the secret: %v", err)
		}
	}
	if _, err := f.s.Read(steering.ReadRequest{Status: key}); !apperr.Is(err, apperr.Schema) || strings.Contains(err.Error(), key) {
		t.Fatalf("read with a secret status: %v", err)
	}
	if state(t, f.dir) != before {
		t.Fatal("a refused put wrote something")
	}
	gt.Fsck(t, f.dir)
}

// ---- format version ----

func TestFormatVersion_Newer(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "a", Kind: "k", Statement: "s"})
	// A newer git ideate moves the store to format 2.
	_, err := f.g.Transact(t.Context(), steering.RefName, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		c, err := f.g.ReadCommit(tip)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		b, err := f.g.WriteBlob([]byte("ideate-steering 2\n"))
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		root, err := f.g.Insert(c.Tree, nil, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: steering.FormatFile, Hash: b}, true)
		return root, "format 2\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
	before := state(t, f.dir)
	_, err = f.s.Put(t.Context(), steering.PutInput{ID: "a", Kind: "k", Statement: "amend"})
	wantCode(t, err, apperr.FormatVersion)
	_, err = f.s.Put(t.Context(), steering.PutInput{ID: "b", Kind: "k", Statement: "new"})
	wantCode(t, err, apperr.FormatVersion)
	_, err = f.s.Read(steering.ReadRequest{})
	wantCode(t, err, apperr.FormatVersion)
	_, err = f.s.Get("a")
	wantCode(t, err, apperr.FormatVersion)
	if state(t, f.dir) != before {
		t.Fatal("a put on a newer store wrote something")
	}
	gt.Fsck(t, f.dir)
}

func TestFormat_TreeLayout(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "GP-1", Kind: "k", Statement: "s"})
	f.put(t, steering.PutInput{ID: "GP-2", Kind: "k", Statement: "s"})
	if got := gt.Git(t, f.dir, "ls-tree", "-r", "--name-only", steering.RefName); got != "ideate-format\nitems/GP-1.md\nitems/GP-2.md" {
		t.Fatalf("tree:\n%s", got)
	}
	if got := gt.Git(t, f.dir, "cat-file", "-p", steering.RefName+":ideate-format"); got != "ideate-steering 1" {
		t.Fatalf("format blob = %q", got)
	}
	file := gt.Git(t, f.dir, "cat-file", "-p", steering.RefName+":items/GP-2.md")
	if file+"\n" != string(steering.Marshal(f.get(t, "GP-2"))) {
		t.Fatalf("file:\n%s", file)
	}
}

// ---- git log ----

func TestGitLog(t *testing.T) {
	f := newFixture(t)
	f.put(t, steering.PutInput{ID: "GP-1", Kind: "guiding-principle", Statement: "\n  Keep   state\tin git.\nMore text.", Actor: "dan"})
	long := strings.Repeat("word ", 30)
	f.put(t, steering.PutInput{ID: "GP-1", Kind: "guiding-principle", Statement: long, Status: "deprecated"})
	subjects := gt.Git(t, f.dir, "log", "--format=%s", steering.RefName)
	wantLong := "guiding-principle GP-1: " + strings.TrimSpace(long)[:71] + "…"
	if want := wantLong + "\nguiding-principle GP-1: Keep state in git."; subjects != want {
		t.Fatalf("subjects:\n%s\nwant\n%s", subjects, want)
	}
	trailers := gt.Git(t, f.dir, "log", "--format=%(trailers:key=Ideate-Steering,key=Ideate-Status,key=Ideate-Actor,separator=%x2C)", steering.RefName)
	want := "Ideate-Steering: GP-1,Ideate-Status: deprecated\nIdeate-Steering: GP-1,Ideate-Status: active,Ideate-Actor: dan"
	if trailers != want {
		t.Fatalf("trailers:\n%s\nwant\n%s", trailers, want)
	}
	if got := gt.Git(t, f.dir, "log", "--format=%an <%ae>", "-1", steering.RefName); got != "Test User <test@example.com>" {
		t.Fatalf("author = %q", got)
	}
	gt.Fsck(t, f.dir)
}

// ---- concurrency ----

// Four processes amend one item 25 times each: every amendment lands, in
// the history exactly once.
func TestConcurrentAmend(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	t.Run("quiet", func(t *testing.T) { concurrentAmend(t, false) })
	t.Run("with-pack-refs-and-gc", func(t *testing.T) { concurrentAmend(t, true) })
}

func concurrentAmend(t *testing.T, withGC bool) {
	const procs, each = 4, 25
	f := newFixture(t)
	stopGC := func() {}
	if withGC {
		gt.Git(t, f.dir, "config", "gc.auto", "50")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%3 == 2 {
					gt.GitErr(f.dir, "gc", "--auto", "--quiet")
				} else {
					gt.GitErr(f.dir, "pack-refs", "--all")
				}
			}
		}()
		stopGC = func() { close(stop); wg.Wait() }
		defer func() {
			select {
			case <-stop:
			default:
				stopGC()
			}
		}()
	}
	f.put(t, steering.PutInput{ID: "hot", Kind: "policy", Statement: "original"})
	bar := proctest.NewBarrier(t)
	var ps []*proctest.Proc
	for i := 0; i < procs; i++ {
		ps = append(ps, proctest.Start(t, proctest.Spec{Role: "amend", Barrier: bar, Env: []string{"STEERING_TEST_DIR=" + f.dir, "STEERING_TEST_ID=hot",
			"STEERING_TEST_N=" + strconv.Itoa(each), "STEERING_TEST_WHO=p" + strconv.Itoa(i)}}))
	}
	bar.Release(t)
	for i, p := range ps {
		lines := p.Wait(t)
		if len(lines) != each {
			t.Fatalf("client %d printed %d lines", i, len(lines))
		}
		for _, l := range lines {
			if !strings.HasSuffix(l, " OK true") {
				t.Fatalf("client %d: %s", i, l)
			}
		}
	}
	stopGC()
	it := f.get(t, "hot")
	if len(it.History) != procs*each {
		t.Fatalf("history has %d entries, want %d", len(it.History), procs*each)
	}
	seen := map[string]int{it.Statement: 1}
	for _, h := range it.History {
		seen[h.Statement]++
	}
	if seen["original"] != 1 || it.History[len(it.History)-1].Statement != "original" {
		t.Fatalf("the original version is not the oldest history entry")
	}
	// Each process's own amendments appear once each, in its order.
	last := map[string]int{}
	for i := len(it.History) - 1; i >= -1; i-- {
		st := it.Statement
		if i >= 0 {
			st = it.History[i].Statement
		}
		if st == "original" {
			continue
		}
		var who string
		var n int
		if _, err := fmt.Sscanf(st, "%s amendment %d", &who, &n); err != nil {
			t.Fatalf("unexpected statement %q", st)
		}
		if prev, ok := last[who]; ok && n != prev+1 || !ok && n != 0 {
			t.Fatalf("%s: amendment %d follows %d", who, n, prev)
		}
		last[who] = n
	}
	for i := 0; i < procs; i++ {
		for j := 0; j < each; j++ {
			if s := fmt.Sprintf("p%d amendment %d", i, j); seen[s] != 1 {
				t.Fatalf("%q appears %d times", s, seen[s])
			}
		}
	}
	if len(seen) != procs*each+1 {
		t.Fatalf("%d distinct versions, want %d", len(seen), procs*each+1)
	}
	if n := gt.Git(t, f.dir, "rev-list", "--count", steering.RefName); n != strconv.Itoa(procs*each+1) {
		t.Fatalf("%s commits, want %d", n, procs*each+1)
	}
	gt.Fsck(t, f.dir)
}
