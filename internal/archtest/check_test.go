package archtest

import (
	"strings"
	"testing"
)

// The checker itself, on a small table and graph: each breach is named.
func TestCheck_NamesEachBreach(t *testing.T) {
	doc := []byte("intro\n\n" +
		"| package | floor | kind | status | same floor | only from | owns | does not |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		"| `internal/leaf` | 1 | lib | present | — | — | a | b |\n" +
		"| `internal/leaf2` | 1 | lib | present | `internal/leaf` | — | a | b |\n" +
		"| `internal/helper` | 1 | test | present | — | — | a | b |\n" +
		"| `internal/store` | 2 | lib | present | — | `internal/top` | a | b |\n" +
		"| `internal/soon` | 2 | lib | reserved | — | — | a | b |\n" +
		"| `internal/gone` | 2 | lib | present | — | — | a | b |\n" +
		"| `internal/top` | 3 | lib | present | — | — | a | b |\n" +
		"| `bench/b` | 4 | bench | present | — | — | a | b |\n" +
		"\nafter\n")
	rows, err := parseTable(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 || rows[1].path != "internal/leaf2" || rows[1].floor != 1 || len(rows[1].sameFloor) != 1 || len(rows[3].onlyFrom) != 1 {
		t.Fatalf("parsed %+v", rows)
	}
	pkgs := map[string]pkg{
		"internal/leaf":   {path: "internal/leaf", imports: []string{"internal/leaf2"}}, // sibling not allowed
		"internal/leaf2":  {path: "internal/leaf2", imports: []string{"internal/leaf"}}, // sibling allowed
		"internal/helper": {path: "internal/helper"},
		"internal/store":  {path: "internal/store", imports: []string{"internal/top", "internal/helper"}},            // up; a test helper
		"internal/soon":   {path: "internal/soon"},                                                                   // reserved but here
		"internal/top":    {path: "internal/top", imports: []string{"internal/store", "internal/leaf"}},              // down: fine
		"internal/new":    {path: "internal/new"},                                                                    // no row
		"bench/b":         {path: "bench/b", imports: []string{"internal/helper", "internal/top", "internal/store"}}, // store: only from top
	}
	got := strings.Join(check(rows, pkgs, map[string]string{"internal/top -> internal/leaf": "not a breach"}), "\n")
	for _, want := range []string{
		"forbidden import internal/leaf -> internal/leaf2: both on floor 1",
		"forbidden import internal/store -> internal/top: floor 2 imports floor 3",
		"forbidden import internal/store -> internal/helper: internal/helper is a test helper",
		"internal/new is not in the layer table",
		"internal/soon exists but is marked reserved",
		"internal/gone is marked present (line 10) but there is no such package",
		`the known exception "internal/top -> internal/leaf" is no longer in the code`,
		"forbidden import bench/b -> internal/store: internal/store may be imported only from internal/top",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 8 {
		t.Errorf("%d problems, want 8:\n%s", n, got)
	}
	// An exception that is used silences its edge and nothing else.
	got = strings.Join(check(rows, pkgs, map[string]string{"internal/store -> internal/top": "temporary"}), "\n")
	if strings.Contains(got, "internal/store -> internal/top") || !strings.Contains(got, "internal/store -> internal/helper") {
		t.Errorf("with the exception:\n%s", got)
	}
}

func TestParseTable_RejectsMalformedRows(t *testing.T) {
	head := "| package | floor | kind | status | same floor | only from | owns | does not |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n"
	for _, c := range []struct{ row, want string }{
		{"| internal/x | 1 | lib | present | — | — | a | b |", "not one path in backticks"},
		{"| `internal/x` | one | lib | present | — | — | a | b |", "is not a positive number"},
		{"| `internal/x` | 1 | library | present | — | — | a | b |", "kind"},
		{"| `internal/x` | 1 | lib | planned | — | — | a | b |", "status"},
		{"| `internal/x` | 1 | lib | present | internal/y | — | a | b |", "names no path"},
		{"| `internal/x` | 1 | lib | present | — | cmd/y | a | b |", "only from"},
	} {
		if _, err := parseTable([]byte(head + c.row + "\n")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.row, err, c.want)
		}
	}
	if _, err := parseTable([]byte("no table here\n")); err == nil {
		t.Error("a document without the table parsed")
	}
}
