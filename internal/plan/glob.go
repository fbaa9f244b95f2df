package plan

import (
	"path"
	"strings"
)

// Scope globs (C10) have doublestar semantics: `*`, `?` and `[...]`
// stay inside one path segment, `**` as a whole segment crosses any
// number of them. Paths are slash-separated and relative to the repo root.

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// globMatch reports whether name matches pattern. A malformed pattern
// matches nothing.
func globMatch(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(name); i++ {
				if matchSegs(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// covers reports whether the owned pattern o includes the path or glob f.
// A glob f is covered when o matches its text (so `pkg/**` covers
// `pkg/*.go`).
func covers(o, f string) bool { return o == f || globMatch(o, f) }

// overlap reports whether two paths or globs may name a common file. Two
// globs overlap when either matches the other's text; this is exact for
// the common forms (`dir/**`, `dir/*.go`) and conservative otherwise.
func overlap(a, b string) bool {
	if a == b {
		return true
	}
	ma, mb := hasMeta(a), hasMeta(b)
	if !ma && !mb {
		return false
	}
	// Literal prefixes up to the first meta character must agree.
	pa, pb := literalPrefix(a), literalPrefix(b)
	if !strings.HasPrefix(pa, pb) && !strings.HasPrefix(pb, pa) {
		return false
	}
	return ma && globMatch(a, b) || mb && globMatch(b, a)
}

func literalPrefix(s string) string {
	if i := strings.IndexAny(s, "*?["); i >= 0 {
		return s[:i]
	}
	return s
}
