package board

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/gitstore/odb"
	"github.com/ideate/git-ideate/internal/record"
)

// TestWriteIndex_FormatAndRoundTrip: the index file is the documented
// line format (fields joined by tabs, the tenant as a JSON string, as
// encoding/json writes it), sorted by id, and reads back to the same
// entries, tenants that need escaping included.
func TestWriteIndex_FormatAndRoundTrip(t *testing.T) {
	tip, err := gitstore.ParseHash("0123456789abcdef0123456789abcdef01234567")
	if err != nil {
		t.Fatal(err)
	}
	idx := &boardIndex{byID: map[string]*entry{}}
	for i, tenant := range []string{"local", `a"b`, "x<y>&z", "é", "tab\there", ""} {
		e := &entry{id: "01J" + strconv.Itoa(9-i), tip: tip, status: "open", createdAt: "2026-12-01T00:00:00Z", tenant: tenant,
			refs: "[]", specLen: i * 7, itemJSON: `{"id":"01J` + strconv.Itoa(9-i) + `"}`}
		if i%2 == 1 {
			e.parent, e.deps, e.lease = "01JP", []string{"01JA", "01JB"}, "2026-12-01T01:00:00Z"
		}
		idx.byID[e.id] = e
	}
	path := filepath.Join(t.TempDir(), indexFile)
	writeIndex(path, idx)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ideate-board-index 1"}
	for _, id := range []string{"01J4", "01J5", "01J6", "01J7", "01J8", "01J9"} {
		e := idx.byID[id]
		tenant, _ := json.Marshal(e.tenant)
		want = append(want, strings.Join([]string{e.id, e.tip.String(), e.status, e.parent, strings.Join(e.deps, ","),
			e.createdAt, e.lease, string(tenant), e.refs, strconv.Itoa(e.specLen), e.itemJSON}, "\t"))
	}
	if d := cmp.Diff(strings.Join(want, "\n")+"\n", string(data)); d != "" {
		t.Fatalf("index file (-want +got):\n%s", d)
	}
	back := readIndex(path)
	if len(back.byID) != len(idx.byID) {
		t.Fatalf("read back %d entries, want %d", len(back.byID), len(idx.byID))
	}
	for id, e := range idx.byID {
		if d := cmp.Diff(e, back.byID[id], cmp.AllowUnexported(entry{})); d != "" {
			t.Errorf("entry %s read back (-want +got):\n%s", id, d)
		}
	}
}

// TestChildren_IndexFileKeptCurrentByCLICalls: claims made each by a new
// store (a CLI call each) keep the index file at most 16 items behind the
// refs, so no call reads more than that many items again.
func TestChildren_IndexFileKeptCurrentByCLICalls(t *testing.T) {
	dir, open, ids := cliBoard(t, false)
	for i, id := range ids {
		s := open()
		if _, err := s.Claim(t.Context(), id, Actor{Human: "w"}, nil); err != nil {
			t.Fatal(err)
		}
		file := readIndex(s.indexPath())
		behind := 0
		for _, r := range gitRefs(t, dir) {
			if e, ok := file.byID[strings.TrimPrefix(r.Name, ItemsPrefix)]; !ok || e.tip != r.Hash {
				behind++
			}
		}
		if behind > maxRead {
			t.Fatalf("after %d CLI claims the index file is %d items behind, want at most %d", i+1, behind, maxRead)
		}
	}
}

// cliBoard makes 40 items and the index file in a new repository, and
// returns a function opening a new store on it each time (a CLI call each),
// appending index lines as a CLI call does when appendIndex is set.
func cliBoard(t *testing.T, appendIndex bool) (dir string, open func() *Store, ids []string) {
	t.Helper()
	dir = gt.NewRepo(t)
	open = func() *Store {
		s := openBoard(t, dir)
		s.AppendIndex = appendIndex
		return s
	}
	first := open()
	for i := 0; i < 40; i++ {
		out, err := first.Create(t.Context(), CreateInput{Title: fmt.Sprintf("item %d", i), Spec: "s", SpecFormat: "plan/outline", CreatedBy: Actor{Human: "dan"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.Item.ID)
	}
	if _, err := first.List(t.Context(), ListRequest{}); err != nil { // writes the index file
		t.Fatal(err)
	}
	return dir, open, ids
}

// openBoard opens a store on the repository at dir, closed with the test.
func openBoard(t *testing.T, dir string) *Store {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return Open(g, record.Open(g))
}

func gitRefs(t *testing.T, dir string) []gitstore.Ref {
	t.Helper()
	var out []gitstore.Ref
	for _, line := range strings.Split(gt.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", ItemsPrefix), "\n") {
		hash, name, _ := strings.Cut(line, " ")
		h, err := gitstore.ParseHash(hash)
		if err != nil {
			t.Fatalf("for-each-ref line %q: %v", line, err)
		}
		out = append(out, gitstore.Ref{Name: name, Hash: h})
	}
	return out
}

// TestRemember_Bounded: the entries a long-lived store keeps (keep) of its own
// writes spare the next child check from reading them back, and stay
// bounded when no check comes to rebuild the index.
func TestRemember_Bounded(t *testing.T) {
	s := openBoard(t, gt.NewRepo(t))
	mk := func(title string) *Item {
		out, err := s.Create(t.Context(), CreateInput{Title: title, Spec: "s", SpecFormat: "plan/outline", CreatedBy: Actor{Human: "dan"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	first := mk("first")
	if _, err := s.List(t.Context(), ListRequest{}); err != nil { // an index in memory
		t.Fatal(err)
	}
	it := mk("second")
	tip, err := s.git.Ref(RefName(it.ID))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.cachedEntry(it.ID, tip); e == nil || e.status != StatusOpen {
		t.Fatalf("the entry of an item this store just wrote is not kept: %+v", e)
	}
	for i := 0; i < 3*maxOver; i++ {
		mk(fmt.Sprintf("item %d", i))
	}
	s.idxMu.Lock()
	n := len(s.idxOver)
	s.idxMu.Unlock()
	if n > 2*maxOver {
		t.Fatalf("%d entries kept beside the index after %d creates, want at most %d", n, 3*maxOver, 2*maxOver)
	}
	if _, err := s.Claim(t.Context(), first.ID, Actor{Human: "w"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestAppendIndex_CLICallsLeaveTheirItems: a CLI call (AppendIndex) adds
// the line of the item it wrote to the index file, so after each of 40
// claims by a new store the file is current for every item, and reads back
// as the entries a full rebuild makes.
func TestAppendIndex_CLICallsLeaveTheirItems(t *testing.T) {
	dir, open, ids := cliBoard(t, true)
	for i, id := range ids {
		s := open()
		if _, err := s.Claim(t.Context(), id, Actor{Human: "w"}, nil); err != nil {
			t.Fatal(err)
		}
		file := readIndex(s.indexPath())
		for _, r := range gitRefs(t, dir) {
			if e, ok := file.byID[strings.TrimPrefix(r.Name, ItemsPrefix)]; !ok || e.tip != r.Hash {
				t.Fatalf("after %d CLI claims the index file is behind on %s", i+1, r.Name)
			}
		}
	}
	path := filepath.Join(dir, ".git", "ideate", indexFile)
	appended := readIndex(path)
	os.Remove(path)
	rebuilt, err := open().index()
	if err != nil {
		t.Fatal(err)
	}
	if len(appended.byID) != len(rebuilt.byID) {
		t.Fatalf("the appended file holds %d items, a rebuild %d", len(appended.byID), len(rebuilt.byID))
	}
	for id, e := range rebuilt.byID {
		if d := cmp.Diff(e, appended.byID[id], cmp.AllowUnexported(entry{}), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("item %s in the appended file (-rebuilt +appended):\n%s", id, d)
		}
	}
}

// TestReadIndex_WholeLinesLaterFirst: a line still being appended (no
// newline yet) is not read, and a later line of an item stands over an
// earlier one.
func TestReadIndex_WholeLinesLaterFirst(t *testing.T) {
	tip1, _ := gitstore.ParseHash("0123456789abcdef0123456789abcdef01234567")
	tip2, _ := gitstore.ParseHash("89abcdef0123456789abcdef0123456789abcdef")
	mk := func(id string, tip gitstore.Hash, status string) *entry {
		return &entry{id: id, tip: tip, status: status, createdAt: "2026-12-01T00:00:00Z", refs: "[]", itemJSON: `{"id":"` + id + `","status":"` + status + `"}`}
	}
	path := filepath.Join(t.TempDir(), indexFile)
	writeIndex(path, &boardIndex{byID: map[string]*entry{"01JA": mk("01JA", tip1, "open"), "01JB": mk("01JB", tip1, "open")}})
	appendIndex(path, []*entry{mk("01JA", tip2, "in_progress")})
	part := appendEntry(nil, mk("01JB", tip2, "done"))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(part[:len(part)-9]) // a line cut inside its item JSON
	f.Close()
	idx := readIndex(path)
	if a, b := idx.byID["01JA"], idx.byID["01JB"]; a == nil || b == nil || a.tip != tip2 || a.status != "in_progress" || b.tip != tip1 || b.itemJSON != `{"id":"01JB","status":"open"}` {
		t.Fatalf("read %v and %v; want 01JA at its appended line, 01JB at its first", a, b)
	}
	if idx.lines != 3 {
		t.Fatalf("%d whole lines, want 3", idx.lines)
	}
}

// TestAppendIndex_Compacted: once the lines passed over outnumber
// maxAppended (and a quarter of the items), the next reader rewrites the
// file with one line per item.
func TestAppendIndex_Compacted(t *testing.T) {
	s := openBoard(t, gt.NewRepo(t))
	tip, _ := gitstore.ParseHash("0123456789abcdef0123456789abcdef01234567")
	e := &entry{id: "01JA", tip: tip, status: "open", createdAt: "2026-12-01T00:00:00Z", refs: "[]", itemJSON: `{"id":"01JA"}`}
	writeIndex(s.indexPath(), &boardIndex{byID: map[string]*entry{"01JA": e}})
	for i := 0; i < maxAppended; i++ {
		appendIndex(s.indexPath(), []*entry{e})
	}
	if mem, _ := s.cachedIndex(); mem.lines != maxAppended+1 {
		t.Fatalf("%d lines read, want %d (not yet past the bound)", mem.lines, maxAppended+1)
	}
	appendIndex(s.indexPath(), []*entry{e})
	openBoard(t, s.git.Repo().WorkTree).cachedIndex()
	if file := readIndex(s.indexPath()); file.lines != 1 || file.byID["01JA"] == nil {
		t.Fatalf("after a read past the bound the file has %d lines, want 1", file.lines)
	}
}

// The index file is mapped, not read: cut short under the mapping (which
// git ideate never does: it renames or appends), reading past its new end
// faults, and the fault makes an empty index, not a crash; a file that
// is not cut short is read whole from its mapping.
func TestParseIndex_FileCutShortUnderItsMappingIsAnEmptyIndex(t *testing.T) {
	tip, _ := gitstore.ParseHash("0123456789abcdef0123456789abcdef01234567")
	byID := map[string]*entry{}
	for i := 0; i < 3000; i++ { // about 300 KB: many pages past the first
		id := fmt.Sprintf("01JA%06d", i)
		byID[id] = &entry{id: id, tip: tip, status: "open", createdAt: "2026-12-01T00:00:00Z", refs: "[]",
			itemJSON: `{"id":"` + id + `","title":"` + strings.Repeat("x", 40) + `"}`}
	}
	path := filepath.Join(t.TempDir(), indexFile)
	writeIndex(path, &boardIndex{byID: byID})
	data, err := odb.MapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if idx := parseIndex(data); len(idx.byID) != 3000 {
		t.Fatalf("read %d entries from the mapping, want 3000", len(idx.byID))
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	if idx := parseIndex(data); len(idx.byID) != 0 {
		t.Fatalf("read %d entries past the file's end", len(idx.byID))
	}
}
