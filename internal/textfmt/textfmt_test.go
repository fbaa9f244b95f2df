package textfmt

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestOneLine(t *testing.T) {
	cases := map[string]string{
		"":                   "",
		"plain":              "plain",
		"  a\n\tb  \r\n c  ": "a b c",
		"\n\n":               "",
	}
	for in, want := range cases {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFitAndHead(t *testing.T) {
	cases := []struct {
		s         string
		n         int
		fit, head string
	}{
		{"abc", 3, "abc", "abc"},
		{"abc", 5, "abc", "abc"},
		{"abcd", 3, "ab…", "abc…"},
		{"", 1, "", ""},
		{"ab", 1, "…", "a…"},
		{"héllo wörld", 6, "héllo…", "héllo …"},
		{"🎉🎉🎉", 2, "🎉…", "🎉🎉…"},
		{"a\xffbc", 2, "a…", "a\uFFFD…"},
		{"\xff\xfeabc", 3, "\xff\xfe…", "\uFFFD\uFFFDa…"},
	}
	for _, c := range cases {
		if got := Fit(c.s, c.n); got != c.fit {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.s, c.n, got, c.fit)
		}
		if got := Head(c.s, c.n); got != c.head {
			t.Errorf("Head(%q, %d) = %q, want %q", c.s, c.n, got, c.head)
		}
	}
}

func TestTimestamp(t *testing.T) {
	at := time.Date(2024, 2, 29, 23, 59, 58, 7_000_000, time.FixedZone("x", 2*3600))
	if got, want := Timestamp(at), "2024-02-29T21:59:58.007Z"; got != want {
		t.Errorf("Timestamp = %q, want %q", got, want)
	}
	if got, want := Timestamp(time.Unix(0, 0)), "1970-01-01T00:00:00.000Z"; got != want {
		t.Errorf("Timestamp(epoch) = %q, want %q", got, want)
	}
}

func TestSplitFrontMatter(t *testing.T) {
	cases := []struct {
		in          string
		front, body string
		ok          bool
	}{
		{"---\na: 1\n---\n\nbody\n", "a: 1", "\nbody\n", true},
		{"---\na: 1\nb: 2\n---\n", "a: 1\nb: 2", "", true},
		{"---\na\n---\nx\n---\ny", "a", "x\n---\ny", true}, // the first fence closes
		{"---\n\n---\n", "", "", true},
		{"a: 1\n---\n", "", "", false},         // no opening fence
		{"---\na: 1\n", "", "", false},         // no closing fence
		{"---\na: 1\n---", "", "", false},      // closing fence without its newline
		{"---\na: \xff\n---\n", "", "", false}, // not UTF-8
		{"", "", "", false},
	}
	for _, c := range cases {
		front, body, ok := SplitFrontMatter([]byte(c.in))
		if front != c.front || body != c.body || ok != c.ok {
			t.Errorf("SplitFrontMatter(%q) = %q, %q, %v; want %q, %q, %v", c.in, front, body, ok, c.front, c.body, c.ok)
		}
	}
}

func TestFirstLine(t *testing.T) {
	cases := map[string]string{
		"":                            "",
		"one":                         "one",
		"\n  \n\t two  words \nthree": "two words",
		" \n\t\n":                     "",
	}
	for in, want := range cases {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRegexp_CompiledOnceOnFirstUse(t *testing.T) {
	re := Regexp(`^a(b+)$`)
	first := re()
	if m := first.FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("match: got %q", m)
	}
	if re() != first {
		t.Fatal("a second call compiled the pattern again")
	}
	bad := Regexp(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid pattern did not panic on first use")
		}
	}()
	bad()
}

// A bounded pattern matches what its counted-repeat form would: every
// length up to the bound, none past it, and the pattern still whole.
func TestBoundedRegexp_SameAsTheCountedRepeat(t *testing.T) {
	b := BoundedRegexp(`^[a-z][a-z0-9-]*$`, 40)()
	counted := regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)
	for _, s := range []string{"", "a", "a-1", "1a", "A", "a b", strings.Repeat("a", 39), strings.Repeat("a", 40), strings.Repeat("a", 41), "é"} {
		if got, want := b.MatchString(s), counted.MatchString(s); got != want {
			t.Errorf("%q: %v, the counted repeat says %v", s, got, want)
		}
	}
}
