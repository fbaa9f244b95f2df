package secretgate

import (
	"regexp"
	"strings"
	"sync"
)

// span is the byte range [lo, hi) of one secret inside the scanned text.
type span struct{ lo, hi int }

// rule is one entry of the ordered rule table.
type rule struct {
	name   string
	marker string    // "[REDACTED:" + name + "]"
	match  *anchored // the matcher behind find; nil for rules with their own finder
	// find appends to dst the spans to redact in s, ascending and
	// non-overlapping, and returns dst.
	find func(s string, dst []span) []span
}

// lazy returns src compiled on its first use. Most texts hold no trigger of
// most rules, and compiling the whole table up front cost about 0.4 ms of
// every CLI write, some 4 % of its CPU (perf).
func lazy(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

// anchored is the matcher behind the prefixed rules (all but
// pem-private-key, aws-access-key-id and high-entropy, which have finders of
// their own).
//
// Every match starts with one of a few literal triggers. The matcher looks for
// the triggers (see trigState; ASCII case-insensitively when fold is set) and
// runs re, which is anchored with ^, only at those positions. A text without
// any trigger therefore costs one fast byte search per trigger and no regexp
// work at all: that is the cheap pre-check that keeps clean text fast.
//
// RE2 has no look-behind, so the character before a match is checked by
// before, and whatever must hold after the match (a token boundary, the
// shape of the value) by accept.
type anchored struct {
	triggers []string              // literal prefixes; lower-case when fold
	fold     bool                  // match triggers ignoring ASCII case
	trigs    []trigState           // initial search state per trigger, set by buildRules
	re       func() *regexp.Regexp // lazy; starts with ^ and with the trigger itself
	group    int                   // submatch that holds the secret; 0 = whole match
	// before reports whether a match may start at s[i:] (typically: the byte
	// before i is not part of a word). Optional.
	before func(s string, i int) bool
	// accept vets a match; m holds absolute offsets into s. A rejected match
	// is skipped as a whole. Optional.
	accept func(s string, m []int) bool
	// window, when positive, is how many bytes from the trigger the regexp
	// may look at; it bounds the work per trigger for patterns whose match
	// is short but whose failing attempts could run far.
	window int
	// run, when set, is the byte class of the run that the pattern starts
	// with. When the regexp fails at a trigger, every later trigger inside
	// the same run fails the same way, so the search resumes after the run.
	run func(byte) bool
}

func (a *anchored) find(s string, dst []span) []span {
	var buf [8]trigState
	ts := append(buf[:0], a.trigs...) // fresh search state for this text
	pos := 0
	for pos < len(s) {
		i := -1 // smallest trigger occurrence at or after pos
		for k := range ts {
			if j := ts[k].next(s, pos); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		if a.before != nil && !a.before(s, i) {
			pos = i + 1
			continue
		}
		in := s[i:]
		if a.window > 0 && len(in) > a.window {
			in = in[:a.window]
		}
		m := a.re().FindStringSubmatchIndex(in)
		if m == nil {
			pos = i + 1
			if a.run != nil {
				for pos < len(s) && a.run(s[pos]) {
					pos++
				}
			}
			continue
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += i
			}
		}
		pos = m[1]
		if a.accept != nil && !a.accept(s, m) {
			continue
		}
		lo, hi := m[2*a.group], m[2*a.group+1]
		if lo >= 0 && hi > lo {
			dst = append(dst, span{lo, hi})
		}
	}
	return dst
}

// trigState finds the occurrences of one trigger literal, in increasing
// order. It searches with strings.IndexByte (SIMD) for the trigger's rarest
// byte – "-" in "sk-", "z" in "authorization", "J" in "eyJ" – rather than
// its first one, so ordinary text yields few candidates to verify. Every
// position it has found is cached, so the whole scan of a text stays linear
// however often next is called.
type trigState struct {
	lit    string // lower-case when fold
	fold   bool
	off    int  // offset of the anchor byte in lit
	b0, b1 byte // the anchor byte, and its other case when fold (else b0)
	n0, n1 int  // next position of b0 / b1 found so far; -2 unknown, -1 none
	at     int  // last result; -2 unknown, -1 none
}

func newTrigState(lit string, fold bool) trigState {
	t := trigState{lit: lit, fold: fold, n0: -2, n1: -2, at: -2}
	for k := 1; k < len(lit); k++ {
		if byteRarity(lit[k], fold) < byteRarity(lit[t.off], fold) {
			t.off = k
		}
	}
	t.b0, t.b1 = lit[t.off], lit[t.off]
	if fold && isLower(t.b0) {
		t.b1 = t.b0 - 'a' + 'A'
	}
	return t
}

// byteRarity ranks how rare a byte is in ordinary prose and code; lower is
// rarer. A folded letter is searched in both cases, so it ranks as lower
// case.
func byteRarity(c byte, fold bool) int {
	const lowerByFrequency = "zqxjkvbpygfwmucldrhsnioate" // rarest first
	switch {
	case isUpper(c) && !fold:
		return strings.IndexByte(lowerByFrequency, c-'A'+'a')
	case isUpper(c):
		return 40 + strings.IndexByte(lowerByFrequency, c-'A'+'a')
	case isLower(c):
		return 40 + strings.IndexByte(lowerByFrequency, c)
	case isDigit(c):
		return 26
	case c == '-' || c == '_' || c == '.' || c == '/' || c == ' ':
		return 35
	default:
		return 30
	}
}

// next returns the first occurrence of the trigger that starts at or after
// from, or -1.
func (t *trigState) next(s string, from int) int {
	if t.at == -1 || t.at >= from {
		return t.at
	}
	for i := from + t.off; i < len(s); {
		if t.n0 != -1 && t.n0 < i {
			t.n0 = indexByteFrom(s, t.b0, i)
		}
		j := t.n0
		if t.b1 != t.b0 {
			if t.n1 != -1 && t.n1 < i {
				t.n1 = indexByteFrom(s, t.b1, i)
			}
			if j < 0 || (t.n1 >= 0 && t.n1 < j) {
				j = t.n1
			}
		}
		if j < 0 {
			break
		}
		start := j - t.off
		if start+len(t.lit) <= len(s) && (t.fold && hasPrefixFold(s[start:], t.lit) ||
			!t.fold && strings.HasPrefix(s[start:], t.lit)) {
			t.at = start
			return start
		}
		i = j + 1
	}
	t.at = -1
	return -1
}

// indexByteFrom is strings.IndexByte(s[from:], c) as an absolute offset,
// or -1.
func indexByteFrom(s string, c byte, from int) int {
	if from >= len(s) {
		return -1
	}
	if k := strings.IndexByte(s[from:], c); k >= 0 {
		return from + k
	}
	return -1
}

// hasPrefixFold reports whether s starts with lit ignoring ASCII case; lit
// must be lower-case.
func hasPrefixFold(s, lit string) bool {
	if len(s) < len(lit) {
		return false
	}
	for k := 0; k < len(lit); k++ {
		c := s[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[k] {
			return false
		}
	}
	return true
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }
func isWord(c byte) bool  { return isAlnum(c) || c == '_' }

// notAfterAlnum: the match does not continue a word made of letters and
// digits (so "task-ant-…" or "disk-…" never yield an "sk-" match).
func notAfterAlnum(s string, i int) bool { return i == 0 || !isAlnum(s[i-1]) }

// notAfterWord: as notAfterAlnum, and not after "_" either.
func notAfterWord(s string, i int) bool { return i == 0 || !isWord(s[i-1]) }

// endsAt reports whether the match ending at end is not followed by a byte
// that in(c) accepts, i.e. the token really ends there.
func endsAt(s string, end int, in func(byte) bool) bool {
	return end >= len(s) || !in(s[end])
}

// classes reports which of lower-case letters, upper-case letters and digits
// occur in v.
func classes(v string) (lower, upper, digit bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isLower(c):
			lower = true
		case isUpper(c):
			upper = true
		case isDigit(c):
			digit = true
		}
	}
	return
}

// mixed reports whether v has a lower-case letter, an upper-case letter and
// a digit, as every randomly generated key of 20 or more characters has.
func mixed(v string) bool {
	l, u, d := classes(v)
	return l && u && d
}

// placeholder reports whether a token value is a stand-in such as
// "xxxxxxxxxxxxxxxxxxxx", "YOUR_TOKEN_HERE" or "your-api-key-goes-here"
// rather than a generated credential: it has no digit and is made of
// word-length runs (see wordShape). Generated tokens of 16 or more
// characters practically always contain a digit.
// noValue are the words a password key is set to when there is no
// password to keep.
var noValue = map[string]bool{"none": true, "null": true, "nil": true, "true": true, "false": true, "required": true,
	"optional": true, "empty": true, "redacted": true, "unset": true, "changeme": true, "string": true, "str": true}

func placeholder(v string) bool {
	_, _, d := classes(v)
	return !d && wordShape(v) >= 3
}

func isHex(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isDigit(c) && !('a' <= c && c <= 'f') && !('A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isB64URL(c byte) bool    { return isAlnum(c) || c == '_' || c == '-' }
func isAWSSecret(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

// buildRules compiles the ordered rule table. Keep it in step with the
// table in doc.go and with wantRules in the tests.
//
// The regular expressions avoid counted repetitions such as {36,}: RE2
// expands a count into that many copies of the class, which made compiling
// the table several times slower. Each pattern takes maximal runs with "+"
// and the accept function checks the lengths.
func buildRules() []rule {
	var rules []rule
	add := func(name string, find func(string, []span) []span) {
		rules = append(rules, rule{name: name, marker: Marker(name), find: find})
	}
	anchor := func(name string, a anchored) {
		for _, t := range a.triggers {
			a.trigs = append(a.trigs, newTrigState(t, a.fold))
		}
		rules = append(rules, rule{name: name, marker: Marker(name), match: &a, find: a.find})
	}
	// length of submatch k
	sub := func(m []int, k int) int { return m[2*k+1] - m[2*k] }

	// 1. A whole PEM private-key block, header to footer, or a truncated
	// block (header, optional "Name: value" header lines, base64 lines).
	add("pem-private-key", newPEMFinder().find)

	// 2. AWS access key id: a known 4-character prefix and 16 [A-Z0-9], on
	// word boundaries on both sides.
	add("aws-access-key-id", findAWSKeyID)

	// 3. AWS secret access key: exactly 40 [A-Za-z0-9/+] after a key name
	// that starts with "aws" or "secret" (letters, digits, "_", ".", "-",
	// space) and a ":", "=", ":=" or "=>" assignment; key name and
	// separator take at most 80 bytes. The key name, separator and any
	// opening quote are kept.
	anchor("aws-secret-access-key", anchored{
		triggers: []string{"aws", "secret"},
		fold:     true,
		window:   256,
		before:   assignmentFollows,
		re:       lazy(`(?i)^(?:aws|secret)[a-z0-9_. -]*["']?[ \t]*(?::=|=>|[:=])\s*["']?([a-z0-9/+]+)`),
		group:    1,
		accept: func(s string, m []int) bool {
			v := s[m[2]:m[3]]
			// Exactly 40 (the run is maximal, and no "=" padding follows),
			// not a hex digest (a git SHA-1 is 40 hex), not a
			// placeholder, not a path made of words.
			return len(v) == 40 && m[2]-m[0] <= 80 && endsAt(s, m[3], isAWSSecret) &&
				!isHex(v) && shannon(v) >= 3.5 && wordShape(v) < 3.5
		},
	})

	// 4. GitHub tokens: gh[pousr]_ + 36 or more alphanumerics, or
	// github_pat_ + 36 or more [A-Za-z0-9_].
	anchor("github-token", anchored{
		triggers: []string{"gh", "github_pat_"},
		before: func(s string, i int) bool {
			return i+4 <= len(s) && (s[i+3] == '_' && strings.IndexByte("pousr", s[i+2]) >= 0 ||
				strings.HasPrefix(s[i:], "github_pat_"))
		},
		re: lazy(`^(?:gh[pousr]_([A-Za-z0-9]+)|github_pat_([A-Za-z0-9_]+))`),
		accept: func(s string, m []int) bool {
			lo, hi := m[2], m[3]
			if lo < 0 {
				lo, hi = m[4], m[5]
			}
			body := s[lo:hi]
			return len(body) >= 36 && !placeholder(body)
		},
	})

	// 5. Anthropic API key: sk-ant- + 20 or more [A-Za-z0-9_-]. Not inside
	// a longer word ("task-ant-…"), and the key body mixes both letter
	// cases and digits.
	anchor("anthropic-api-key", anchored{
		triggers: []string{"sk-ant-"},
		before:   notAfterAlnum,
		re:       lazy(`^sk-ant-([A-Za-z0-9_-]+)`),
		accept: func(s string, m []int) bool {
			return sub(m, 1) >= 20 && mixed(s[m[2]:m[3]])
		},
	})

	// 6. OpenAI API key: sk- (but not sk-ant-) + 20 or more [A-Za-z0-9_-];
	// same shape checks as 5.
	anchor("openai-api-key", anchored{
		triggers: []string{"sk-"},
		before: func(s string, i int) bool {
			return notAfterAlnum(s, i) && !strings.HasPrefix(s[i:], "sk-ant-")
		},
		re: lazy(`^sk-([A-Za-z0-9_-]+)`),
		accept: func(s string, m []int) bool {
			return sub(m, 1) >= 20 && mixed(s[m[2]:m[3]])
		},
	})

	// 7. Slack token: xox[baprs]- and at least 10 more [A-Za-z0-9-], at
	// least one of them a digit (every Slack token carries numeric ids).
	anchor("slack-token", anchored{
		triggers: []string{"xox"},
		re:       lazy(`^xox[baprs]-([A-Za-z0-9-]+)`),
		accept: func(s string, m []int) bool {
			_, _, d := classes(s[m[2]:m[3]])
			return sub(m, 1) >= 10 && d
		},
	})

	// 8. JSON Web Token: three dot-separated base64url segments of at least
	// 8 characters, the first starting with "eyJ" (base64 of `{"`).
	anchor("jwt", anchored{
		triggers: []string{"eyJ"},
		run:      isB64URL,
		re:       lazy(`^eyJ[A-Za-z0-9_-]*\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)`),
		accept: func(s string, m []int) bool {
			return m[2]-1-m[0] >= 8 && sub(m, 1) >= 8 && sub(m, 2) >= 8
		},
	})

	// 9. Bearer credentials in an Authorization or Proxy-Authorization
	// header (or key), any case: the header part is kept, the token68
	// value (16 or more characters) redacted. Placeholders such as
	// YOUR_ACCESS_TOKEN are left.
	anchor("bearer-token", anchored{
		triggers: []string{"authorization"},
		fold:     true,
		re: lazy(`(?i)^authorization["']?[ \t]*[:=][ \t]*["']?bearer[ \t]+` +
			`([a-z0-9._~+/-]+=*)`),
		group: 1,
		accept: func(s string, m []int) bool {
			return sub(m, 1) >= 16 && !placeholder(s[m[2]:m[3]])
		},
	})

	// 10. The password of scheme://user:password@host. Scheme, user, the
	// colon and "@host…" are kept. The password may not contain white
	// space, "/", "?", "#", "[" or "]"; it may contain "@" (the last "@"
	// before the host wins). Excluding "[" keeps the rule idempotent: a
	// marker is never a password. Template and format placeholders
	// ("%s", "${DB_PASS}", "{password}", "<password>", "****") are left.
	passwordPlaceholder := lazy(`^(?:%[-+# 0-9.*]*[a-zA-Z]|%\([A-Za-z_][A-Za-z0-9_]*\)[a-z]` +
		`|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[^{}]*\}|\$\([A-Za-z_][A-Za-z0-9_]*\)|\{+[^{}]*\}+|<[^<>]*>|\*+|x+|X+|\.\.\.|…)$`)
	anchor("connection-string-password", anchored{
		triggers: []string{"://"},
		re:       lazy(`^://[^\s:/?#@\[\]]*:([^\s/?#\[\]]+)@`),
		group:    1,
		accept: func(s string, m []int) bool {
			return !passwordPlaceholder().MatchString(s[m[2]:m[3]])
		},
	})

	// A password assignment: a key that ends in password or passwd, any
	// case and with any prefix (password=, DB_PASSWORD:, "passwd": ,
	// db_password :=), then "=", ":", ":=" or "=>", then the value, quoted
	// or not. The key, the separator and the quotes are kept. Template
	// placeholders ("${DB_PASS}", "<password>", "****") and words that say
	// there is no value (none, null, required, …) are left. The value may
	// not hold "[" or "]", so a marker is never a value.
	anchor("password-assignment", anchored{
		triggers: []string{"passw"},
		fold:     true,
		re:       lazy(`(?i)^passw(?:or)?d["']?[ \t]*(?::=|=>|=|:[ \t"'])[ \t]*["']?([^\s"'\[\],;=>][^\s"'\[\],;]*)`),
		group:    1,
		accept: func(s string, m []int) bool {
			v := s[m[2]:m[3]]
			lv := strings.ToLower(v)
			// A bare ":" is a YAML or JSON key only with a blank or a
			// quote after it (so "user:password:GID" is no key), a value
			// that opens a comment is none, and one that names a
			// password again is code (`type passwd = C.struct_passwd`).
			return !passwordPlaceholder().MatchString(v) && !noValue[lv] && !strings.HasPrefix(v, "//") &&
				!strings.HasPrefix(v, "#") && !strings.Contains(lv, "passw")
		},
	})

	// Additional well-known prefixed tokens, after the reference rules.

	// GitLab personal access token: glpat- + 20 or more [A-Za-z0-9_-].
	anchor("gitlab-token", anchored{
		triggers: []string{"glpat-"},
		re:       lazy(`^glpat-([A-Za-z0-9_-]+)`),
		accept: func(s string, m []int) bool {
			return sub(m, 1) >= 20 && !placeholder(s[m[2]:m[3]])
		},
	})

	// Google API key: "AIza" and exactly 35 more [A-Za-z0-9_-].
	anchor("google-api-key", anchored{
		triggers: []string{"AIza"},
		re:       lazy(`^AIza([A-Za-z0-9_-]+)`),
		accept: func(s string, m []int) bool {
			return sub(m, 1) == 35 && !placeholder(s[m[2]:m[3]])
		},
	})

	// Stripe secret and restricted keys, live and test mode: sk_live_,
	// rk_live_, sk_test_, rk_test_ + 24 or more alphanumerics, not inside
	// a longer word.
	anchor("stripe-secret-key", anchored{
		triggers: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_"},
		before:   notAfterWord,
		re:       lazy(`^[rs]k_(?:live|test)_([A-Za-z0-9]+)`),
		accept: func(s string, m []int) bool {
			return sub(m, 1) >= 24 && !placeholder(s[m[2]:m[3]])
		},
	})

	// npm access token: "npm_" and exactly 36 alphanumerics that mix both
	// letter cases and digits, not inside a longer word.
	anchor("npm-token", anchored{
		triggers: []string{"npm_"},
		before:   notAfterWord,
		re:       lazy(`^npm_([A-Za-z0-9]+)`),
		accept: func(s string, m []int) bool {
			return sub(m, 1) == 36 && mixed(s[m[2]:m[3]])
		},
	})

	// Slack incoming-webhook / workflow URL: the host and kind are kept, the
	// secret path (20 or more characters mixing both letter cases and
	// digits) is redacted.
	anchor("slack-webhook-url", anchored{
		triggers: []string{"hooks.slack.com/"},
		re:       lazy(`^hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]+)`),
		group:    1,
		accept: func(s string, m []int) bool {
			return sub(m, 1) >= 20 && mixed(s[m[2]:m[3]])
		},
	})

	// 11. High-entropy token; see entropy.go.
	add("high-entropy", findHighEntropy)

	return rules
}

// assignmentFollows is the cheap pre-check of rule 3: from s[i], a key name
// of at most 80 bytes, an optional quote and blanks lead to ":" or "=". In
// prose that mentions "AWS" or "secret" it fails at the first comma or
// line end without running the regexp.
func assignmentFollows(s string, i int) bool {
	j, end := i, min(len(s), i+80)
	for j < end && (isWord(s[j]) || s[j] == '.' || s[j] == '-' || s[j] == ' ') {
		j++
	}
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	j = skipBlanks(s, j)
	return j < len(s) && (s[j] == ':' || s[j] == '=')
}

// awsKeyPrefixes are the four-character prefixes of AWS access key ids;
// "A3T" + one [A-Z0-9] is checked separately.
var awsKeyPrefixes = [...]string{"AKIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ASIA", "ABIA", "ACCA"}

// findAWSKeyID finds rule 2 without a regular expression: at each "A" that
// starts a word, a known prefix and 16 [A-Z0-9] that end the word.
func findAWSKeyID(s string, dst []span) []span {
	for i := 0; i+20 <= len(s); {
		k := strings.IndexByte(s[i:len(s)-19], 'A')
		if k < 0 {
			break
		}
		i += k
		if isAWSKeyID(s, i) {
			dst = append(dst, span{i, i + 20})
			i += 20
			continue
		}
		i++
	}
	return dst
}

func isAWSKeyID(s string, i int) bool {
	if !notAfterWord(s, i) || !endsAt(s, i+20, isWord) {
		return false
	}
	p := s[i : i+4]
	ok := p[:3] == "A3T" && isUpperNum(p[3])
	for _, q := range awsKeyPrefixes {
		ok = ok || p == q
	}
	if !ok {
		return false
	}
	for j := i + 4; j < i+20; j++ {
		if !isUpperNum(s[j]) {
			return false
		}
	}
	return !placeholder(s[i+4 : i+20])
}

func isUpperNum(c byte) bool { return isUpper(c) || isDigit(c) }
