package testrun

import (
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// The one registry of runner dialects: which dialects each format takes,
// and the other spellings accepted for each (a plan's standards.md, the
// CLI's --dialect, the MCP tools). plan check, test run and test classify
// all ask CheckDialect, so a spelling one accepts the others accept.

// dialectAliases are the other accepted spellings, by canonical name.
var dialectAliases = map[Dialect][]string{
	DialectPytest:   {"pytest-plugin"},
	DialectNextest:  {"nextest"},
	DialectLibtest:  {"libtest"},
	DialectSurefire: {"maven-surefire"},
}

// jestDialects are the producers of jest-json.
var jestDialects = []Dialect{DialectJest, DialectVitest}

// CheckDialect returns the canonical name of dialect d for format f
// (case and surrounding blanks aside, an alias becomes its canonical
// name), or an UNVERIFIABLE error naming every accepted spelling when f
// is unknown, d is missing where f needs one, or f does not take d.
func CheckDialect(f Format, d Dialect) (Dialect, error) {
	name := strings.ToLower(strings.TrimSpace(string(d)))
	switch f {
	case GoJSON:
		if name != "" {
			return "", apperr.New(Unverifiable, "go-test-json takes no dialect, got %q", d)
		}
		return "", nil
	case JUnitXML:
		if name == "" {
			return "", apperr.New(Unverifiable, "junit-xml needs a dialect (%s): its failure and error elements mean different things per producer", DialectSpellings(f))
		}
		if c, ok := canonical(name, JUnitDialects); ok {
			return c, nil
		}
		return "", apperr.New(Unverifiable, "unknown junit-xml dialect %q (known: %s)", d, DialectSpellings(f))
	case JestJSON:
		if name == "" {
			return "", nil
		}
		if c, ok := canonical(name, jestDialects); ok {
			return c, nil
		}
		return "", apperr.New(Unverifiable, "unknown jest-json dialect %q (known: %s)", d, DialectSpellings(f))
	case "":
		return "", apperr.New(Unverifiable, "no output format declared (known: %s)", formatList())
	}
	return "", apperr.New(Unverifiable, "unknown output format %q (known: %s)", f, formatList())
}

func canonical(name string, list []Dialect) (Dialect, bool) {
	for _, c := range list {
		if name == string(c) {
			return c, true
		}
		for _, a := range dialectAliases[c] {
			if name == a {
				return c, true
			}
		}
	}
	return "", false
}

// DialectSpellings lists the dialects format f takes, each with its other
// spellings: "pytest (or pytest-plugin), vitest, …"; "" for a format that
// takes none.
func DialectSpellings(f Format) string {
	var list []Dialect
	switch f {
	case JUnitXML:
		list = JUnitDialects
	case JestJSON:
		list = jestDialects
	}
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = string(c)
		if a := dialectAliases[c]; len(a) > 0 {
			out[i] += " (or " + strings.Join(a, ", ") + ")"
		}
	}
	return strings.Join(out, ", ")
}
