package board

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
)

// TestWriteIndex_FormatAndRoundTrip: the index file is the documented
// format: a header with the sections' offsets, the packed line (what
// packed-refs held, relative to the sorted entries), each parent's
// children, then the entry lines (fields joined by tabs, the tenant as a
// JSON string, as encoding/json writes it) sorted by id; it reads back to
// the same entries, tenants that need escaping included, one by one and
// all at once.
func TestWriteIndex_FormatAndRoundTrip(t *testing.T) {
	tip, err := gitstore.ParseHash("0123456789abcdef0123456789abcdef01234567")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := gitstore.ParseHash("89abcdef0123456789abcdef0123456789abcdef")
	idx := &boardIndex{byID: map[string]*entry{}}
	for i, tenant := range []string{"local", `a"b`, "x<y>&z", "é", "tab\there", ""} {
		e := &entry{id: "01J" + strconv.Itoa(9-i), tip: tip, status: "open", createdAt: "2026-12-01T00:00:00Z", tenant: tenant,
			refs: "[]", specLen: i * 7, itemJSON: `{"id":"01J` + strconv.Itoa(9-i) + `"}`}
		if i%2 == 1 {
			e.parent, e.deps, e.lease = "01JP", []string{"01JA", "01JB"}, "2026-12-01T01:00:00Z"
		}
		idx.byID[e.id] = e
	}
	// packed-refs: 01J4 at another tip, 01J5 and 01J9 not packed, 01J0
	// packed but not in the index, the rest as the index says.
	packed := []gitstore.Ref{{Name: ItemsPrefix + "01J0", Hash: other}, {Name: ItemsPrefix + "01J4", Hash: other},
		{Name: ItemsPrefix + "01J6", Hash: tip}, {Name: ItemsPrefix + "01J7", Hash: tip}, {Name: ItemsPrefix + "01J8", Hash: tip}}
	path := filepath.Join(t.TempDir(), indexFile)
	writeIndex(path, idx, packed, "11.22.33.44")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := []string{"packed\t11.22.33.44\t01J0=" + other.String() + ",01J4=" + other.String() + "\t01J5,01J9", "01JP\t01J4,01J6,01J8"}
	kidsAt := 0
	for _, l := range body[:1] {
		kidsAt += len(l) + 1
	}
	entriesAt := kidsAt + len(body[1]) + 1
	var entries []string
	for _, id := range []string{"01J4", "01J5", "01J6", "01J7", "01J8", "01J9"} {
		e := idx.byID[id]
		tenant, _ := json.Marshal(e.tenant)
		entries = append(entries, strings.Join([]string{e.id, e.tip.String(), e.status, e.parent, strings.Join(e.deps, ","),
			e.createdAt, e.lease, string(tenant), e.refs, strconv.Itoa(e.specLen), e.itemJSON}, "\t"))
	}
	tailAt := entriesAt + len(strings.Join(entries, "\n")) + 1
	header := fmt.Sprintf("ideate-board-index 2 %012d %012d %012d %012d", headerLen+kidsAt, headerLen+entriesAt, headerLen+tailAt, 6)
	want := strings.Join(append(append([]string{header}, body...), entries...), "\n") + "\n"
	if d := cmp.Diff(want, string(data)); d != "" {
		t.Fatalf("index file (-want +got):\n%s", d)
	}
	back := readIndex(path)
	if back.file == nil || back.file.stamp.version != "11.22.33.44" {
		t.Fatalf("read back no packed line: %+v", back.file)
	}
	for id, e := range idx.byID {
		got, ok := back.get(id)
		if d := cmp.Diff(e, got, cmp.AllowUnexported(entry{})); !ok || d != "" {
			t.Errorf("entry %s read back alone (-want +got):\n%s", id, d)
		}
	}
	if _, ok := back.get("01J55"); ok {
		t.Error("an id not in the file was found")
	}
	if d := cmp.Diff(idx.byID, back.all(), cmp.AllowUnexported(entry{})); d != "" {
		t.Errorf("entries read back (-want +got):\n%s", d)
	}
	var kids []string
	for _, e := range back.kidsOf("01JP") {
		kids = append(kids, e.id)
	}
	sort.Strings(kids)
	if d := cmp.Diff([]string{"01J4", "01J6", "01J8"}, kids); d != "" || len(back.kidsOf("01J4")) != 0 {
		t.Errorf("children read back (-want +got):\n%s", d)
	}
	for id, want := range map[string]bool{"01J0": true, "01J4": true, "01J5": false, "01J6": true, "01J9": false, "01JX": false} {
		if got := back.file.packedHas(id); got != want {
			t.Errorf("packedHas(%s) = %v, want %v", id, got, want)
		}
	}
	if d := cmp.Diff(packed[:2], back.file.packedMoved()); d != "" {
		t.Errorf("packed refs moved from the index (-want +got):\n%s", d)
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
			if e, ok := file.get(strings.TrimPrefix(r.Name, ItemsPrefix)); !ok || e.tip != r.Hash {
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
			if e, ok := file.get(strings.TrimPrefix(r.Name, ItemsPrefix)); !ok || e.tip != r.Hash {
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
	if len(appended.all()) != len(rebuilt.byID) {
		t.Fatalf("the appended file holds %d items, a rebuild %d", len(appended.all()), len(rebuilt.byID))
	}
	for id, e := range rebuilt.byID {
		if d := cmp.Diff(e, appended.all()[id], cmp.AllowUnexported(entry{}), cmpopts.EquateEmpty()); d != "" {
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
	writeIndex(path, &boardIndex{byID: map[string]*entry{"01JA": mk("01JA", tip1, "open"), "01JB": mk("01JB", tip1, "open")}}, nil, "")
	appendIndex(path, []*entry{mk("01JA", tip2, "in_progress")}, nil)
	part := appendEntry(nil, mk("01JB", tip2, "done"))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(part[:len(part)-9]) // a line cut inside its item JSON
	f.Close()
	idx := readIndex(path)
	if a, b := idx.all()["01JA"], idx.all()["01JB"]; a == nil || b == nil || a.tip != tip2 || a.status != "in_progress" || b.tip != tip1 || b.itemJSON != `{"id":"01JB","status":"open"}` {
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
	writeIndex(s.indexPath(), &boardIndex{byID: map[string]*entry{"01JA": e}}, nil, "")
	for i := 0; i < maxAppended; i++ {
		appendIndex(s.indexPath(), []*entry{e}, nil)
	}
	if mem, _ := s.cachedIndex(); mem.lines != maxAppended+1 {
		t.Fatalf("%d lines read, want %d (not yet past the bound)", mem.lines, maxAppended+1)
	}
	appendIndex(s.indexPath(), []*entry{e}, nil)
	openBoard(t, s.git.Repo().WorkTree).cachedIndex()
	if file := readIndex(s.indexPath()); file.lines != 1 || file.all()["01JA"] == nil {
		t.Fatalf("after a read past the bound the file has %d lines, want 1", file.lines)
	}
}

// An index file cut short (which git ideate never does: it renames or
// appends) reads as an empty index, not a crash, and one that is whole is
// read whole.
func TestReadIndex_FileCutShortIsAnEmptyIndex(t *testing.T) {
	tip, _ := gitstore.ParseHash("0123456789abcdef0123456789abcdef01234567")
	byID := map[string]*entry{}
	for i := 0; i < 3000; i++ { // about 300 KB
		id := fmt.Sprintf("01JA%06d", i)
		byID[id] = &entry{id: id, tip: tip, status: "open", createdAt: "2026-12-01T00:00:00Z", refs: "[]",
			itemJSON: `{"id":"` + id + `","title":"` + strings.Repeat("x", 40) + `"}`}
	}
	path := filepath.Join(t.TempDir(), indexFile)
	writeIndex(path, &boardIndex{byID: byID}, nil, "")
	if idx := readIndex(path); len(idx.all()) != 3000 || idx.faulted() {
		t.Fatalf("read %d entries, want 3000", len(idx.all()))
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	if idx := readIndex(path); len(idx.all()) != 0 {
		t.Fatalf("read %d entries from a file cut short", len(idx.all()))
	}
}

// TestChildren_FromThePackedLine: a CLI call's open-child check answers
// from the index file's packed line while packed-refs is the version it
// names, and only then, and agrees with the refs every time: a new child
// (loose), a child in the index but deleted since (its ref was loose when
// the index was written), a child packed after the index was written (the
// line appended by the call that read packed-refs anew), a child cancelled.
func TestChildren_FromThePackedLine(t *testing.T) {
	dir := gt.NewRepo(t)
	open := func(appendIndex bool) *Store {
		s := openBoard(t, dir)
		s.AppendIndex = appendIndex
		return s
	}
	mk := func(parent, title string) string {
		out, err := open(false).Create(t.Context(), CreateInput{Title: title, Spec: "s", SpecFormat: "plan/outline", ParentID: parent, CreatedBy: Actor{Human: "dan"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item.ID
	}
	p := mk("", "parent")
	for i := 0; i < 20; i++ {
		mk("", fmt.Sprintf("other %d", i))
	}
	old := mk(p, "child written before the index, deleted after")
	gt.Git(t, dir, "pack-refs", "--all")
	gone := mk(p, "child loose when the index is written, deleted after")
	if _, err := open(true).List(t.Context(), ListRequest{}); err != nil { // writes the index file
		t.Fatal(err)
	}
	if f := readIndex(filepath.Join(dir, ".git", "ideate", indexFile)).file; f == nil || f.stamp.version == "" || !f.stamp.absent[gone] {
		t.Fatalf("the index file names no packed-refs version, or not %s as unpacked: %+v", gone, f)
	}
	check := func(step string, fromLine bool, want ...string) {
		t.Helper()
		before := fromPackedLine.Load()
		kids, err := open(true).children(p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range kids {
			got = append(got, k.id+" "+k.status)
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s: children (-want +got):\n%s", step, d)
		}
		if used := fromPackedLine.Load() > before; used != fromLine {
			t.Fatalf("%s: answered from the packed line: %v, want %v", step, used, fromLine)
		}
	}
	check("as written", true, old+" open", gone+" open")
	gt.Git(t, dir, "update-ref", "-d", RefName(gone))
	check("a loose child deleted", true, old+" open")
	gt.Git(t, dir, "update-ref", "-d", RefName(old))
	check("a packed child deleted", false, []string(nil)...) // that rewrites packed-refs
	check("from the appended line", true, []string(nil)...)
	c := mk(p, "new child")
	check("a loose child", true, c+" open")
	gt.Git(t, dir, "pack-refs", "--all")
	check("packed since", false, c+" open")
	// The call above appended c's entry and the packed line; without the
	// entry, the packed line alone must name c (it is in no sorted line).
	path := filepath.Join(dir, ".git", "ideate", indexFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if last := lines[len(lines)-2]; !strings.HasPrefix(last, "packed\t") || !strings.Contains(last, c+"=") {
		t.Fatalf("the last line appended is not a packed line naming %s: %q", c, last)
	}
	for i, l := range lines {
		if strings.HasPrefix(l, c+"\t") {
			lines[i] = ""
		}
	}
	if err := os.WriteFile(path+".new", []byte(strings.Join(lines, "")), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	check("packed, from the appended line", true, c+" open")
	if _, err := open(false).Cancel(t.Context(), c, Actor{Human: "dan"}); err != nil {
		t.Fatal(err)
	}
	check("cancelled", true, c+" cancelled")
	gt.Fsck(t, dir)
}

// A sorted line of the index file that does not parse (here a child's,
// its tip garbled) is not taken for an item that is not there: the open
// child is still found (the index is rebuilt from the refs), and no packed
// line is appended from a file that could not be read.
func TestChildren_AnUnreadableLineIsNoMissingChild(t *testing.T) {
	dir := gt.NewRepo(t)
	s := openBoard(t, dir)
	create := func(parent string) string {
		out, err := s.Create(t.Context(), CreateInput{Title: "t", Spec: "s", SpecFormat: "plan/outline", ParentID: parent, CreatedBy: Actor{Human: "dan"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item.ID
	}
	p := create("")
	kid := create(p)
	gt.Git(t, dir, "pack-refs", "--all")
	if _, err := s.List(t.Context(), ListRequest{}); err != nil { // writes the index file
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".git", "ideate", indexFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tip := gt.Git(t, dir, "rev-parse", RefName(kid))
	at := strings.Index(string(data), "\n"+kid+"\t"+tip)
	if at < 0 {
		t.Fatalf("no sorted line of %s at %s in:\n%s", kid, tip, data)
	}
	at += len(kid) + 2
	copy(data[at:], strings.Repeat("z", 40)) // the same length: the offsets stand
	if err := os.WriteFile(path+".new", data, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	cli := openBoard(t, dir)
	cli.AppendIndex = true
	kids, err := cli.children(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || kids[0].id != kid || kids[0].status != StatusOpen {
		t.Fatalf("children of %s = %v, want %s open", p, kids, kid)
	}
	if _, err := cli.Claim(t.Context(), p, Actor{Human: "w"}, nil); !apperr.Is(err, NotClaimable) {
		t.Fatalf("claim of a parent with an open child: %v, want NOT_CLAIMABLE", err)
	}
}
