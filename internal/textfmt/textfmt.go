// Package textfmt holds the small text forms that the record, steering and
// board stores (and the hooks and telemetry beside them) all write the same
// way: a value folded onto one line, a value cut to a length, an instant as
// a timestamp, and the split of a file into its front matter and body.
//
// # Cutting
//
// Two cuts exist, because the stored formats use both and their bytes must
// not change:
//
//   - Fit cuts s to at most n characters, the ellipsis included: the result
//     always fits in n. Steering subjects and the hook and
//     commit-boundary records use it.
//   - Head keeps the first n characters and appends an ellipsis when it
//     cut, so the result may be n+1 characters long. Record and board
//     commit subjects and error sentences use it.
//
// Both count characters as Unicode code points (runes), never bytes, so a
// cut never splits a character. They differ on invalid UTF-8 too, each as
// the formats that use it always have: Fit keeps the bytes, Head writes
// U+FFFD for them.
//
// # Timestamps
//
// Timestamp writes an instant as JavaScript's Date.prototype.toISOString
// does: UTC, milliseconds, a trailing Z. Every stored format of git ideate
// carries instants in this form, so they sort as strings.
//
// # Front matter
//
// SplitFrontMatter cuts a file of the form "---\n<front>\n---\n<body>" in
// two. It checks only the frame; what the lines of the front matter mean is
// the caller's format.
package textfmt

import (
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// OneLine folds every run of white space in s (newlines included) into one
// space and trims both ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// FirstLine is the first line of s that is not blank, folded by OneLine;
// "" when every line is blank.
func FirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = OneLine(l); l != "" {
			return l
		}
	}
	return ""
}

// Fit returns s when it has at most n characters, else its first n-1
// characters and "…": the result never exceeds n characters. The kept
// bytes are s's own, invalid UTF-8 included. n must be at least 1.
func Fit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	k := 0
	for i := range s {
		if k == n-1 {
			return s[:i] + "…"
		}
		k++
	}
	return s
}

// Head returns s when it has at most n characters, else its first n
// characters and "…" (n+1 characters in all). What it keeps of a cut
// string is re-encoded, so an invalid byte there comes out as U+FFFD, as
// it always has in the record and board subjects.
func Head(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Timestamp formats t as an ISO-8601 UTC instant with milliseconds,
// "2006-01-02T15:04:05.000Z", the form of JavaScript's toISOString.
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Front-matter fences.
const (
	fenceOpen  = "---\n"
	fenceClose = "\n---\n"
)

// SplitFrontMatter splits data, which must be valid UTF-8 and open with the
// fence "---\n", at the first "\n---\n" after it. front is the text between
// the fences without its final newline; body is everything after the
// closing fence. ok is false when data is not UTF-8 or either fence is
// missing. The first closing fence wins, which is sound for formats whose
// front-matter values never hold a raw newline.
func SplitFrontMatter(data []byte) (front, body string, ok bool) {
	if !utf8.Valid(data) {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(string(data), fenceOpen)
	if !ok {
		return "", "", false
	}
	end := strings.Index(rest, fenceClose)
	if end < 0 {
		return "", "", false
	}
	return rest[:end], rest[end+len(fenceClose):], true
}

// Regexp returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp ever after. Package-level patterns made
// with regexp.MustCompile are compiled in package init, by every process
// that links the package: every CLI call and hook pays for the plan
// reader's patterns, used or not (0.8 ms of a 2 ms start, measured with
// GODEBUG=inittrace=1). An invalid expr panics on first use, as
// MustCompile would at init; tests that use the pattern find it.
func Regexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Bounded is a whole-string pattern with a length bound kept apart from
// it: regexp compiles a counted repeat such as [a-z0-9-]{0,127} into an
// instruction per allowed byte, and compiling the agent-id pattern that
// way was 3 % of a hook call's time (perf, 200 PreToolUse calls).
type Bounded struct {
	re  *regexp.Regexp
	max int
}

// MatchString reports whether s has at most max bytes and matches.
func (b Bounded) MatchString(s string) bool { return len(s) <= b.max && b.re.MatchString(s) }

// BoundedRegexp is Regexp for a pattern whose length bound is max bytes:
// expr says what the bytes are with * or +, max how many there may be.
func BoundedRegexp(expr string, max int) func() Bounded {
	return sync.OnceValue(func() Bounded { return Bounded{regexp.MustCompile(expr), max} })
}
