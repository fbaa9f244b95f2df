package record_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/record"
)

func newStore(t *testing.T) (*record.Store, string) {
	t.Helper()
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return record.Open(g), dir
}

func appendN(t *testing.T, s *record.Store, n int, scope func(i int) string) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		res, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("claim %d", i), Scope: scope(i),
			Source: record.Source{CapturePoint: "test", SessionID: "s"}, Content: strings.Repeat("x", 50)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Record.ID)
	}
	return ids
}

func TestStore_Append_GitSeesIt(t *testing.T) {
	s, dir := newStore(t)
	res, err := s.Append(t.Context(), record.AppendInput{Kind: "decision", Claim: "Use lockfile CAS", Scope: "gitstore",
		Source: record.Source{CapturePoint: "test", SessionID: "s1"}, Content: "Because go-git's loses updates."})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Record.ID
	if got := gt.Git(t, dir, "log", "--format=%s", record.RefName); got != "decision: Use lockfile CAS" {
		t.Fatalf("git log subject = %q", got)
	}
	if got := gt.Git(t, dir, "log", "--format=%(trailers:key=Ideate-Record,valueonly)", record.RefName); got != id {
		t.Fatalf("trailer = %q, want %s", got, id)
	}
	shown := gt.Git(t, dir, "show", record.RefName+":"+res.Path)
	if shown+"\n" != string(record.Marshal(res.Record)) {
		t.Fatalf("git show gives\n%s", shown)
	}
	files := gt.Git(t, dir, "ls-tree", "-r", "--name-only", record.RefName)
	if files != record.FormatFile+"\n"+res.Path && files != res.Path+"\n"+record.FormatFile {
		t.Fatalf("tree = %q", files)
	}
	sn, _ := s.Snapshot()
	got, err := sn.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(res.Record, got); d != "" {
		t.Fatal(d)
	}
	gt.Fsck(t, dir)
}

func TestStore_Append_Validation(t *testing.T) {
	s, dir := newStore(t)
	first, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "base"})
	if err != nil {
		t.Fatal(err)
	}
	unknown := "01JDQ3Z5E8X9K2M4N6P8R0T1VW"
	cases := []struct {
		name string
		in   record.AppendInput
		code apperr.Code
	}{
		{"no kind", record.AppendInput{Claim: "c"}, apperr.Schema},
		{"bad id", record.AppendInput{ID: "nope", Kind: "k", Claim: "c"}, apperr.Schema},
		{"bad supersedes", record.AppendInput{Kind: "k", Claim: "c", Supersedes: "xyz"}, apperr.Schema},
		{"bad reference id", record.AppendInput{Kind: "k", Claim: "c", References: []record.Reference{{Rel: "r", ID: "lower"}}}, apperr.Schema},
		{"empty rel", record.AppendInput{Kind: "k", Claim: "c", References: []record.Reference{{Rel: " ", ID: first.Record.ID}}}, apperr.Schema},
		{"bad timestamp", record.AppendInput{Kind: "k", Claim: "c", Source: record.Source{Timestamp: "yesterday"}}, apperr.Schema},
		{"dangling supersedes", record.AppendInput{Kind: "k", Claim: "c", Supersedes: unknown}, apperr.DanglingSupersedes},
		{"dangling reference", record.AppendInput{Kind: "k", Claim: "c", References: []record.Reference{{Rel: "refutes", ID: unknown}}}, apperr.DanglingSupersedes},
		{"duplicate id", record.AppendInput{ID: first.Record.ID, Kind: "k", Claim: "c"}, record.Duplicate},
		{"huge body", record.AppendInput{Kind: "k", Claim: "c", Content: strings.Repeat("x", record.MaxContent+1)}, apperr.Schema},
	}
	before := gt.Git(t, dir, "rev-parse", record.RefName)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(t.Context(), tc.in)
			if got := apperr.CodeOf(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
		})
	}
	if after := gt.Git(t, dir, "rev-parse", record.RefName); after != before {
		t.Fatal("a refused append moved the ref")
	}
	gt.Fsck(t, dir)
}

func TestStore_Append_RedactsBeforeWriting(t *testing.T) {
	s, dir := newStore(t)
	key := "AKIA" + strings.Repeat("Q7", 8)
	res, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "found key " + key, Content: "x " + key + " y " + key})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Record.Claim, key) || !strings.Contains(res.Record.Content, "[REDACTED:aws-access-key-id]") {
		t.Fatalf("not redacted: %+v", res.Record)
	}
	if len(res.Redactions) != 1 || res.Redactions[0].Rule != "aws-access-key-id" || res.Redactions[0].Count != 3 {
		t.Fatalf("redactions = %+v", res.Redactions)
	}
	// The secret is in no object of the repository.
	if out, _ := gt.GitErr(dir, "grep", "-c", key, record.RefName); out != "" {
		t.Fatalf("secret reached git: %s", out)
	}
	all := gt.Git(t, dir, "cat-file", "--batch-all-objects", "--batch")
	if strings.Contains(all, key) {
		t.Fatal("secret found in an object")
	}
}

func TestStore_Append_IDLintAndBacklinks(t *testing.T) {
	s, _ := newStore(t)
	a, _ := s.Append(t.Context(), record.AppendInput{Kind: "decision", Claim: "A"})
	ghost := "01JDQ3Z5E8X9K2M4N6P8R0T1VW"
	b, err := s.Append(t.Context(), record.AppendInput{Kind: "decision", Claim: "B replaces " + a.Record.ID + " and cites " + ghost, Supersedes: a.Record.ID})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]record.Unresolved{{ID: ghost, Resolution: "unresolved"}}, b.Unresolved); d != "" {
		t.Fatal(d)
	}
	c, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "C", References: []record.Reference{{Rel: "refutes", ID: a.Record.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := s.ReadPage(record.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]record.Row{}
	for _, r := range page.Rows {
		byID[r.ID] = r
	}
	// Newest referrer first, as the reference implementation lists them.
	want := []record.Reference{{Rel: "refutes", ID: c.Record.ID}, {Rel: "supersedes", ID: b.Record.ID}}
	if d := cmp.Diff(want, byID[a.Record.ID].ReferencedBy); d != "" {
		t.Fatalf("backlinks of A:\n%s", d)
	}
	// A page far from A still shows its backlinks (computed over the whole store).
	one := 1
	p2, err := s.ReadPage(record.PageRequest{Limit: &one, Filter: record.Filter{ID: a.Record.ID}})
	if err != nil || len(p2.Rows) != 1 || len(p2.Rows[0].ReferencedBy) != 2 {
		t.Fatalf("by-id page: %+v %v", p2, err)
	}
	prime, _ := s.Prime("", 10)
	if !strings.Contains(prime, "[⚠ superseded by "+b.Record.ID+"]") {
		t.Fatalf("prime lacks the superseded marker:\n%s", prime)
	}
}

func TestStore_ReadPage_CursorWalk(t *testing.T) {
	s, _ := newStore(t)
	ids := appendN(t, s, 57, func(i int) string { return fmt.Sprintf("area-%d", i%3) })
	lim := 10
	seen := map[string]int{}
	var order []string
	cursor := ""
	pages := 0
	for {
		p, err := s.ReadPage(record.PageRequest{Limit: &lim, Cursor: cursor, Measure: paging.CompactLen})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range p.Rows {
			seen[r.ID]++
			order = append(order, r.ID)
			if r.Content != nil {
				t.Fatal("summary rows carry content")
			}
			if r.ContentLength != 50 {
				t.Fatalf("content_length = %d", r.ContentLength)
			}
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if pages != 6 || len(seen) != 57 {
		t.Fatalf("%d pages, %d distinct records", pages, len(seen))
	}
	for i, id := range order {
		if id != ids[len(ids)-1-i] {
			t.Fatalf("order broken at %d", i)
		}
	}
	// Exactly-full last page: next_cursor must be null only when exhausted.
	lim = 57
	p, _ := s.ReadPage(record.PageRequest{Limit: &lim})
	if len(p.Rows) != 57 || p.NextCursor != nil {
		t.Fatalf("full page: %d rows, cursor %v", len(p.Rows), p.NextCursor)
	}
	lim = 56
	p, _ = s.ReadPage(record.PageRequest{Limit: &lim})
	if p.NextCursor == nil {
		t.Fatal("a page one short of the end must carry a cursor")
	}
	// The cursor is bound to its filter.
	_, err := s.ReadPage(record.PageRequest{Cursor: *p.NextCursor, Filter: record.Filter{Scope: "area-1"}})
	if !apperr.Is(err, apperr.CursorMismatch) {
		t.Fatalf("cursor under another filter: %v", err)
	}
	if _, err := s.ReadPage(record.PageRequest{Cursor: "bm90LWEtY3Vyc29y"}); !apperr.Is(err, apperr.Schema) {
		t.Fatalf("malformed cursor: %v", err)
	}
	// Scope filter walk.
	lim = 5
	n, cursor := 0, ""
	for {
		p, err := s.ReadPage(record.PageRequest{Limit: &lim, Cursor: cursor, Filter: record.Filter{Scope: "AREA-1"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Rows {
			if r.Scope != "area-1" {
				t.Fatalf("filter leaked %s", r.Scope)
			}
			n++
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if n != 19 {
		t.Fatalf("scope walk found %d, want 19", n)
	}
}

func TestStore_ReadPage_Budget(t *testing.T) {
	s, _ := newStore(t)
	big := strings.Repeat("y", 15000)
	for i := 0; i < 5; i++ {
		if _, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "big", Content: big}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.ReadPage(record.PageRequest{IncludeContent: true, Measure: paging.CompactLen})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 2 || p.NextCursor == nil {
		t.Fatalf("budget page: %d rows, cursor %v", len(p.Rows), p.NextCursor)
	}
	// Liveness: a record larger than the whole budget still ships, alone.
	if _, err := s.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: "huge", Content: strings.Repeat("z", 50000)}); err != nil {
		t.Fatal(err)
	}
	p, _ = s.ReadPage(record.PageRequest{IncludeContent: true, Measure: paging.CompactLen})
	if len(p.Rows) != 1 || p.NextCursor == nil {
		t.Fatalf("liveness: %d rows", len(p.Rows))
	}
}

func TestStore_SeesOtherWriters(t *testing.T) {
	s1, dir := newStore(t)
	g2, _ := gitstore.Open(dir)
	defer g2.Close()
	s2 := record.Open(g2)
	appendN(t, s1, 1, func(int) string { return "" })
	p, _ := s2.ReadPage(record.PageRequest{})
	if len(p.Rows) != 1 {
		t.Fatal("second store does not see the first write")
	}
	appendN(t, s2, 1, func(int) string { return "" })
	p, _ = s1.ReadPage(record.PageRequest{})
	if len(p.Rows) != 2 {
		t.Fatal("first store does not see the second write")
	}
}

func TestStore_NewerFormatIsTypedError(t *testing.T) {
	s, dir := newStore(t)
	appendN(t, s, 1, func(int) string { return "" })
	// Forge a newer format entry with git itself.
	tree := gt.Git(t, dir, "rev-parse", record.RefName+"^{tree}")
	ls := gt.Git(t, dir, "ls-tree", tree)
	newBlob := strings.TrimSpace(gt.GitStdin(t, dir, "ideate-record 99\n", "hash-object", "-w", "--stdin"))
	var lines []string
	for _, l := range strings.Split(ls, "\n") {
		if strings.HasSuffix(l, "\t"+record.FormatFile) {
			l = "100644 blob " + newBlob + "\t" + record.FormatFile
		}
		lines = append(lines, l)
	}
	newTree := strings.TrimSpace(gt.GitStdin(t, dir, strings.Join(lines, "\n")+"\n", "mktree"))
	c := gt.Git(t, dir, "commit-tree", newTree, "-p", record.RefName, "-m", "future")
	gt.Git(t, dir, "update-ref", record.RefName, c)
	_, err := s.ReadPage(record.PageRequest{})
	if !apperr.Is(err, apperr.FormatVersion) {
		t.Fatalf("read of newer format: %v", err)
	}
	if _, err := s.Append(t.Context(), record.AppendInput{Kind: "k", Claim: "c"}); !apperr.Is(err, apperr.FormatVersion) {
		t.Fatalf("append to newer format: %v", err)
	}
	if got := gt.Git(t, dir, "rev-parse", record.RefName); got != c {
		t.Fatal("append to a newer format moved the ref")
	}
}

func TestStore_Export(t *testing.T) {
	s, _ := newStore(t)
	ids := appendN(t, s, 12, func(int) string { return "" })
	out := t.TempDir()
	st, err := s.Export(out, nil)
	if err != nil || st.Total != 12 || st.Written != 12 {
		t.Fatalf("export: %+v %v", st, err)
	}
	st, _ = s.Export(out, nil)
	if st.Unchanged != 12 || st.Written != 0 {
		t.Fatalf("second export: %+v", st)
	}
	sn, _ := s.Snapshot()
	for _, id := range ids {
		data := mustRead(t, out+"/"+record.ExportPath(id))
		r, err := record.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := sn.Get(id)
		if d := cmp.Diff(want, r); d != "" {
			t.Fatal(d)
		}
		if !strings.HasPrefix(record.ExportPath(id), time.Now().UTC().Format("2006/01")) {
			t.Fatalf("export path %s", record.ExportPath(id))
		}
	}
}
