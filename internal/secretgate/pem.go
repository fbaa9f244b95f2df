package secretgate

import (
	"regexp"
	"strings"
)

// pemFinder finds PEM private-key blocks for rule 1.
//
// A complete block runs from a "-----BEGIN … PRIVATE KEY-----" header to the
// first "-----END" after it, which must be a "-----END … PRIVATE KEY-----"
// footer with no other "-----BEGIN" in between, and the body between them
// must look like a PEM body: only pemBodyByte characters (base64, white
// space, escaped newlines, the quotes and "+" of a string literal split over
// several lines, comment leaders) and at least one run of 20 base64
// characters. So two marker lines quoted in code never swallow the code
// between them.
//
// A header without such a footer is a truncated block: it is redacted from
// the header through its "Name: value" header lines and every following
// line of 16+ base64 characters; at least one such line is required.
//
// The search is linear: the next "-----BEGIN" and "-----END" are cached as
// the scan moves forward, and the bodies checked are disjoint.
type pemFinder struct {
	header, footer func() *regexp.Regexp // lazy
}

func newPEMFinder() *pemFinder {
	return &pemFinder{
		header: lazy(`^-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`),
		footer: lazy(`^-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`),
	}
}

var pemBodyByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isAlnum(b) || strings.IndexByte("+/= \t\r\n\f:,.\\\"'#>|*_-", b) >= 0
	}
	return t
}()

// pemBody reports whether body can be the inside of a PEM block.
func pemBody(body string) bool {
	run, longest := 0, 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !pemBodyByte[c] {
			return false
		}
		if isAlnum(c) || c == '+' || c == '/' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest >= 20
}

func (p *pemFinder) find(s string, dst []span) []span {
	nextBegin, nextEnd := -2, -2 // first occurrence at or after the body start; -1 none
	pos := 0
	for pos < len(s) {
		i := strings.Index(s[pos:], "-----BEGIN")
		if i < 0 {
			break
		}
		i += pos
		hm := p.header().FindStringIndex(s[i:])
		if hm == nil {
			pos = i + 1
			continue
		}
		body := i + hm[1]
		if nextBegin != -1 && nextBegin < body {
			nextBegin = indexFrom(s, "-----BEGIN", body)
		}
		if nextEnd != -1 && nextEnd < body {
			nextEnd = indexFrom(s, "-----END", body)
		}
		if nextEnd >= 0 && (nextBegin < 0 || nextEnd < nextBegin) {
			if fm := p.footer().FindStringIndex(s[nextEnd:]); fm != nil && pemBody(s[body:nextEnd]) {
				dst = append(dst, span{i, nextEnd + fm[1]})
				pos = nextEnd + fm[1]
				continue
			}
		}
		if end := truncatedEnd(s, body); end > body {
			dst = append(dst, span{i, end})
			pos = end
			continue
		}
		pos = body
	}
	return dst
}

// indexFrom is strings.Index(s[from:], sub) as an absolute offset, or -1.
func indexFrom(s, sub string, from int) int {
	if k := strings.Index(s[from:], sub); k >= 0 {
		return from + k
	}
	return -1
}

// truncatedEnd returns where a truncated PEM block whose header ends at
// body ends: after its "Name: value" header lines, blank lines and every
// following line of 16 or more base64 characters. It returns -1 when no
// such base64 line follows.
func truncatedEnd(s string, body int) int {
	end := -1
	headers := true // "Name: value" lines may come before the base64
	for i := body; ; {
		n := pemNewline(s, i)
		if n == 0 {
			return end
		}
		j := i + n
		if pemNewline(s, j) > 0 { // a blank line
			i = j
			continue
		}
		k := j
		for k < len(s) && isB64Std(s[k]) {
			k++
		}
		if k-j >= 16 {
			end, i, headers = k, k, false
			continue
		}
		if k = pemHeaderLine(s, j); headers && k > j {
			i = k
			continue
		}
		return end
	}
}

// pemNewline returns the length of the line break at s[i:] (a raw or
// escaped "\n" or "\r\n", with spaces and tabs around it), or 0.
func pemNewline(s string, i int) int {
	j := skipBlanks(s, i)
	switch {
	case strings.HasPrefix(s[j:], "\r\n"):
		j += 2
	case strings.HasPrefix(s[j:], "\n"):
		j++
	case strings.HasPrefix(s[j:], `\r\n`):
		j += 4
	case strings.HasPrefix(s[j:], `\n`):
		j += 2
	default:
		return 0
	}
	return skipBlanks(s, j) - i
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// pemHeaderLine returns the end of an encapsulated header line such as
// "Proc-Type: 4,ENCRYPTED" at s[j:] (before its line break), or j.
func pemHeaderLine(s string, j int) int {
	k := j
	for k < len(s) && (isAlnum(s[k]) || s[k] == '-') {
		k++
	}
	if k == j || !isUpper(s[j]) && !isLower(s[j]) || !strings.HasPrefix(s[k:], ": ") {
		return j
	}
	for k += 2; k < len(s) && strings.IndexByte("\r\n\\[]", s[k]) < 0; k++ {
	}
	return k
}
