package testrun

import (
	"os"
	"strings"
	"testing"
)

// Every spelling the registry accepts comes back canonical, whatever its
// case; other names are refused with the list of spellings.
func TestCheckDialect_Spellings(t *testing.T) {
	for _, c := range []struct {
		f     Format
		in    Dialect
		want  Dialect
		fails bool
	}{
		{JUnitXML, "nextest", DialectNextest, false},
		{JUnitXML, " Cargo-Nextest ", DialectNextest, false},
		{JUnitXML, "pytest-plugin", DialectPytest, false},
		{JUnitXML, "libtest", DialectLibtest, false},
		{JUnitXML, "maven-surefire", DialectSurefire, false},
		{JUnitXML, "jest", "", true},
		{JUnitXML, "", "", true},
		{JestJSON, "VITEST", DialectVitest, false},
		{JestJSON, "", "", false},
		{JestJSON, "nextest", "", true},
		{GoJSON, "", "", false},
		{GoJSON, "gotestsum", "", true},
		{"tap", "", "", true},
	} {
		got, err := CheckDialect(c.f, c.in)
		if (err != nil) != c.fails || got != c.want {
			t.Errorf("CheckDialect(%s, %q) = %q, %v", c.f, c.in, got, err)
		}
		if err != nil && c.f == JUnitXML && !strings.Contains(err.Error(), "cargo-nextest (or nextest)") {
			t.Errorf("the refusal does not list the spellings: %v", err)
		}
	}
}

// docs/PLAN.md names every spelling the registry accepts.
func TestCheckDialect_DocsListEverySpelling(t *testing.T) {
	b, err := os.ReadFile("../../docs/PLAN.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, list := range [][]Dialect{JUnitDialects, jestDialects} {
		for _, d := range list {
			for _, s := range append([]string{string(d)}, dialectAliases[d]...) {
				if !strings.Contains(doc, "`"+s+"`") {
					t.Errorf("docs/PLAN.md does not name the dialect spelling %s", s)
				}
			}
		}
	}
}
