package plan

import "testing"

func TestGlob_MatchAndOverlap(t *testing.T) {
	for _, c := range []struct {
		pat, name string
		match     bool
	}{
		{"strutil/*.go", "strutil/a.go", true},
		{"strutil/*.go", "strutil/x/a.go", false}, // * stops at /
		{"strutil/**", "strutil/x/a.go", true},
		{"strutil/**", "strutil", true}, // ** matches zero segments
		{"**/*_test.go", "a/b/c_test.go", true},
		{"**/*_test.go", "c_test.go", true},
		{"a/[", "a/[", false}, // malformed pattern matches nothing
	} {
		if got := globMatch(c.pat, c.name); got != c.match {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pat, c.name, got, c.match)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"x/a.go", "x/a.go", true},
		{"x/a.go", "x/b.go", false},
		{"x/**", "x/a.go", true},
		{"x/*.go", "x/**", true},
		{"x/**", "y/**", false},
		{"x/*.go", "x/sub/a.go", false},
	} {
		if got := overlap(c.a, c.b); got != c.want {
			t.Errorf("overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestMarkdown_Readers(t *testing.T) {
	if got := splitRow("| a \\| b | `x\\|y` |  |"); len(got) != 3 || got[0] != "a | b" || got[1] != "`x|y`" || got[2] != "" {
		t.Fatalf("splitRow = %q", got)
	}
	if got := codeSpans("`a` and ``b ` c`` and `unclosed"); len(got) != 2 || got[0] != "a" || got[1] != "b ` c" {
		t.Fatalf("codeSpans = %q", got)
	}
	if c, ok := singleCodeSpan(" `go test` "); !ok || c != "go test" {
		t.Fatalf("singleCodeSpan = %q %v", c, ok)
	}
	if _, ok := singleCodeSpan("`a` b"); ok {
		t.Fatal("singleCodeSpan accepted trailing text")
	}
	d := parseMarkdown("x.md", []byte("---\ntype: \"tasks\"\nstory: 'S1-01'\nfrom_red_at: 2026-11-30T10:12:00Z # utc\n---\n# T\n```\n## not a heading\n```\n## T01: Real\n"))
	if v, _ := d.front.Get("type"); v != "tasks" {
		t.Fatalf("quoted type = %q", v)
	}
	if v, _ := d.front.Get("from_red_at"); v != "2026-11-30T10:12:00Z" {
		t.Fatalf("timestamp = %q", v)
	}
	if len(d.heads) != 2 || d.heads[1].text != "T01: Real" || d.heads[1].idx != 9 {
		t.Fatalf("heads = %+v", d.heads)
	}
	if n, title, ok := d.taskHead(1); !ok || n != 1 || title != "Real" {
		t.Fatalf("taskHead = %d %q %v", n, title, ok)
	}
	refs, bad := parseDepends("S1-01/T02, T3 (same story), S1-02-T1, S1-03 T4; S1-04, something", "S1-09", 1)
	want := []string{"S1-01/T2", "S1-09/T3", "S1-02/T1", "S1-03/T4", "S1-04"}
	if len(refs) != len(want) || len(bad) != 1 || bad[0].text != "something" {
		t.Fatalf("parseDepends = %q, bad %+v", refs, bad)
	}
	for i := range want {
		if refs[i] != want[i] {
			t.Fatalf("parseDepends[%d] = %q, want %q", i, refs[i], want[i])
		}
	}
}
