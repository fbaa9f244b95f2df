package pathglob

import (
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Set is an ordered list of globs over repository-relative paths. A glob
// starting with '!' excludes what it matches; for a given path the last
// glob that matches it decides, so "pkg/**" then "!pkg/gen/**" allows pkg/
// but not pkg/gen/. A path no glob matches is outside the set.
type Set struct {
	globs []glob
}

type glob struct {
	text string // as given
	pat  string // normalized pattern
	neg  bool
}

// Compile checks and normalizes globs. A glob is relative to the repository
// root ("/" at its start is dropped, as is "./"); one ending in "/" names a
// directory and everything under it. An empty glob, a bare "!", a ".."
// component, or an unterminated or unknown character class is an
// apperr.Schema error naming the glob.
func Compile(globs []string) (*Set, error) {
	s := &Set{globs: make([]glob, 0, len(globs))}
	for _, g := range globs {
		p := g
		neg := false
		if strings.HasPrefix(p, "!") {
			neg, p = true, p[1:]
		}
		p = strings.TrimPrefix(p, "./")
		p = strings.TrimLeft(p, "/")
		if strings.HasSuffix(p, "/") {
			p = strings.TrimRight(p, "/") + "/**"
		}
		if p == "" || p == "/**" {
			return nil, apperr.New(apperr.Schema, "scope glob %q names no path", g)
		}
		for _, c := range strings.Split(p, "/") {
			if c == ".." || c == "." || c == "" {
				return nil, apperr.New(apperr.Schema, "scope glob %q has an empty, \".\" or \"..\" component; globs are relative to the repository root", g)
			}
		}
		if err := checkClasses(p); err != nil {
			return nil, apperr.New(apperr.Schema, "scope glob %q: %s", g, err)
		}
		s.globs = append(s.globs, glob{text: g, pat: p, neg: neg})
	}
	return s, nil
}

// checkClasses finds an unterminated or unknown class, or a trailing
// backslash, which would make the glob match nothing.
func checkClasses(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 >= len(p) {
				return errorString("a trailing backslash quotes nothing")
			}
			i++
		case '[':
			_, rest, ok := matchClass(p[i:], 'a')
			if !ok {
				return errorString("a character class is not closed or names an unknown [:class:]")
			}
			i = len(p) - len(rest) - 1
		}
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// Match reports whether path is in the set: the last glob matching it is
// not negated.
func (s *Set) Match(path string) bool {
	in, _ := s.Decide(path)
	return in
}

// Decide is Match, also naming the glob that decided ("" when none
// matched).
func (s *Set) Decide(path string) (in bool, by string) {
	for i := len(s.globs) - 1; i >= 0; i-- {
		g := s.globs[i]
		if Match(g.pat, path) {
			return !g.neg, g.text
		}
	}
	return false, ""
}

// Outside returns the paths that are not in the set, in the order given.
func (s *Set) Outside(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !s.Match(p) {
			out = append(out, p)
		}
	}
	return out
}
