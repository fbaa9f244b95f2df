package pathglob

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
)

func TestMatch_Table(t *testing.T) {
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"a.go", "a.go", true},
		{"a.go", "x/a.go", false},
		{"*.go", "a.go", true},
		{"*.go", "x/a.go", false},
		{"x/*.go", "x/a.go", true},
		{"x/*", "x/y/a.go", false},
		{"x/**", "x/y/a.go", true},
		{"x/**", "x", false},
		{"**/a.go", "a.go", true},
		{"**/a.go", "p/q/a.go", true},
		{"**/a.go", "p/qa.go", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/xb", false},
		{"**", "any/thing/at/all", true},
		{"a**b", "axxb", true},
		{"a**b", "ax/xb", false}, // "**" inside a component is one '*'
		{"?.go", "a.go", true},
		{"?.go", "/.go", false},
		{"a?b", "a/b", false},
		{"[ab].go", "b.go", true},
		{"[!ab].go", "b.go", false},
		{"[^ab].go", "c.go", true},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[[:digit:]]x", "7x", true},
		{"[[:digit:]]x", "ax", false},
		{"[]]", "]", true},
		{"[!]]", "a", true},
		{"a[/]b", "a/b", false},
		{`\*.go`, "*.go", true},
		{`\*.go`, "a.go", false},
		{"[a", "[a", false},
		{"*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 60), false},
		{"**/**/**/**/**/z", strings.Repeat("a/", 40) + "y", false},
		{"internal/**/*_test.go", "internal/x_test.go", true},
		{"internal/**/*_test.go", "internal/a/b/x_test.go", true},
		{"internal/**/*_test.go", "internal/a/b/x.go", false},
	}
	for _, c := range cases {
		if got := Match(c.pat, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
}

// TestMatch_AgainstGit checks Match against git's own wildmatch, reached
// through `git ls-files ':(glob)PATTERN'`. A pathspec without wildcards
// also matches every file under the directory it names, so for those the
// expectation is closed the same way.
func TestMatch_AgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	files := []string{
		"a.go", "b.txt", "x/a.go", "x/y/a.go", "x/y/z/b.go", "xa/a.go", "ab/cd/ef.go",
		"a/b", "a/x/b", "a/x/y/b", "a/xb", "internal/p/p_test.go", "internal/p/p.go",
		"internal/q/r/s_test.go", "[x]/y", "c-d/e", "1/2/3/4/5.md",
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("add", "-A")
	patterns := []string{
		"*.go", "**/*.go", "x/**", "x/*", "x/**/b.go", "**/a.go", "a/**/b", "a/*/b", "?/b",
		"internal/**/*_test.go", "internal/*/*.go", "[ax]/*", "[!a]*/**", "*/*/*", "**/y/*",
		"ab/**/ef.go", "**", "1/**/5.md", "1/*/5.md", "c-d/*", "[[:alpha:]]/**", "x/y",
	}
	for _, pat := range patterns {
		out := git("ls-files", "-z", "--", ":(glob)"+pat)
		var want []string
		for _, f := range strings.Split(out, "\x00") {
			if f != "" {
				want = append(want, f)
			}
		}
		var got []string
		for _, f := range files {
			for d := f; ; {
				if Match(pat, d) {
					got = append(got, f)
					break
				}
				i := strings.LastIndexByte(d, '/')
				if i < 0 || strings.ContainsAny(pat, "*?[") {
					break
				}
				d = d[:i]
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("pattern %q: got %v, git lists %v", pat, got, want)
		}
	}
}

// toRegexp is an independent oracle for patterns over the alphabet of
// FuzzMatch: a, b, '/', '*', '?'.
func toRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); {
		switch {
		case p[i] == '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			start := i == 0 || p[i-1] == '/'
			end := j == len(p) || p[j] == '/'
			switch {
			case j-i >= 2 && start && j == len(p):
				b.WriteString(".*")
			case j-i >= 2 && start && end:
				b.WriteString("(?:[^/]*/)*")
				j++ // the '/' after "**" is part of the any-depth run
			default:
				b.WriteString("[^/]*")
			}
			i = j
		case p[i] == '?':
			b.WriteString("[^/]")
			i++
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			i++
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func FuzzMatch(f *testing.F) {
	f.Add("a/**/b", "a/x/b")
	f.Add("**/a*", "b/ab")
	f.Add("*a*a*b", "aaaab")
	f.Add("a/**", "a/b/")
	f.Fuzz(func(t *testing.T, pat, path string) {
		clean := func(s string) string {
			var b strings.Builder
			for i := 0; i < len(s) && b.Len() < 24; i++ {
				b.WriteByte("ab/*?"[int(s[i])%5])
			}
			return b.String()
		}
		pat, path = clean(pat), strings.ReplaceAll(clean(path), "*", "a")
		path = strings.ReplaceAll(path, "?", "b")
		want := toRegexp(pat).MatchString(path)
		if got := Match(pat, path); got != want {
			t.Fatalf("Match(%q, %q) = %v, the regexp oracle says %v", pat, path, got, want)
		}
	})
}

func TestSet_LastMatchDecides(t *testing.T) {
	s, err := Compile([]string{"internal/**", "!internal/gen/**", "internal/gen/keep.go", "docs/"})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"internal/a.go":          true,
		"internal/gen/x.go":      false,
		"internal/gen/keep.go":   true,
		"docs/a/b.md":            true,
		"docs":                   false,
		"cmd/main.go":            false,
		"internalx/a.go":         false,
		"internal/gen/sub/y.txt": false,
	} {
		if got := s.Match(path); got != want {
			t.Errorf("Match(%q) = %v, want %v", path, got, want)
		}
	}
	if in, by := s.Decide("internal/gen/x.go"); in || by != "!internal/gen/**" {
		t.Errorf("Decide = %v %q, want false by !internal/gen/**", in, by)
	}
	got := s.Outside([]string{"internal/a.go", "cmd/x.go", "internal/gen/y.go"})
	if strings.Join(got, ",") != "cmd/x.go,internal/gen/y.go" {
		t.Errorf("Outside = %v", got)
	}
}

func TestCompile_RefusesGlobsThatMatchNothing(t *testing.T) {
	for _, g := range []string{"", "!", "/", "../x", "a/../b", "a//b", "[ab", "[[:nope:]]x", `a\`, "./"} {
		if _, err := Compile([]string{"ok/**", g}); !apperr.Is(err, apperr.Schema) {
			t.Errorf("Compile(%q) = %v, want a SCHEMA error", g, err)
		}
	}
	s, err := Compile([]string{"/abs.go", "./rel.go"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Match("abs.go") || !s.Match("rel.go") {
		t.Error("a leading / or ./ should be dropped")
	}
}
