package secretgate

import (
	"math"
	"strings"
)

// Parameters of the high-entropy rule.
const (
	minTokenLen = 32  // shortest token considered
	minEntropy  = 4.3 // Shannon entropy in bits per character, inclusive
	// identShape: a token whose camelCase/snake_case words average this many
	// characters or more reads as an identifier, not as random data. Over
	// every identifier of 32+ characters in the Go source tree that passes
	// the other tests the smallest average is 2.58
	// (http2cipher_TLS_KRB5_WITH_RC4_128_MD5); random base62/base64url
	// tokens average about 1.9. The guard costs 1–4% of random tokens of
	// 32–64 characters (measured), on top of the 4–7% of 32-character
	// random tokens that the entropy threshold itself lets through.
	identShape = 2.5
)

// tokenByte marks the token alphabet of the high-entropy rule:
// [A-Za-z0-9+=_-]. Every other byte ends a token.
var tokenByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isAlnum(b) || b == '+' || b == '=' || b == '_' || b == '-'
	}
	return t
}()

// findHighEntropy finds whole tokens (maximal runs of tokenByte, so the
// bytes before and after are outside the alphabet) that look random.
func findHighEntropy(s string, dst []span) []span {
	for i := 0; i < len(s); {
		if !tokenByte[s[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && tokenByte[s[j]] {
			j++
		}
		if j-i >= minTokenLen && highEntropyToken(s, i, j) {
			dst = append(dst, span{i, j})
		}
		i = j
	}
	return dst
}

// highEntropyToken decides whether the token s[i:j] is redacted.
//
// Published digests are not secrets: a go.sum hash ("h1:" + base64) and a
// subresource-integrity hash ("sha512-" + base64) are skipped (see
// digestContext). Parts of the
// token (split at "-", "_", "+", "=") that are ids (a ULID, a hex digest or
// number of 7+ digits) are left out; what remains must be random on its own.
func highEntropyToken(s string, i, j int) bool {
	tok := s[i:j]
	if digestContext(s, i) {
		return false
	}
	if hasIDPart(tok) {
		tok = withoutIDParts(tok)
	}
	return looksRandom(tok)
}

// digestPrefixes introduce base64 digests: go.sum hashes ("h1:") and
// subresource-integrity hashes ("sha512-…").
var digestPrefixes = [...]string{"h1:", "sha1-", "sha256-", "sha384-", "sha512-"}

// digestContext reports whether the token starting at s[i] belongs to a
// base64 digest: it starts with a digest prefix, or the standard-base64 run
// it is part of ("/" splits tokens but not base64) follows one. The walk back
// is bounded, so a long base64 run costs linear time.
func digestContext(s string, i int) bool {
	for _, p := range digestPrefixes {
		if strings.HasPrefix(s[i:], p) {
			return true
		}
	}
	k := i
	for k > 0 && i-k < 128 && isB64Std(s[k-1]) {
		k--
	}
	for _, p := range digestPrefixes {
		if strings.HasSuffix(s[:k], p) {
			return true
		}
	}
	return false
}

func isB64Std(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

// looksRandom is the test of the high-entropy rule on one token: at least
// minTokenLen characters, a lower-case letter, an upper-case letter and a
// digit, Shannon entropy of at least minEntropy bits per character, and not
// shaped like an identifier.
func looksRandom(tok string) bool {
	return len(tok) >= minTokenLen && mixed(tok) && shannon(tok) >= minEntropy &&
		wordShape(tok) < identShape
}

// shannon returns the Shannon entropy of v in bits per byte.
func shannon(v string) float64 {
	if len(v) == 0 {
		return 0
	}
	var count [256]int
	for i := 0; i < len(v); i++ {
		count[v[i]]++
	}
	n := float64(len(v))
	sum := 0.0
	for _, c := range count {
		if c > 1 {
			f := float64(c)
			sum += f * math.Log2(f)
		}
	}
	return math.Log2(n) - sum/n
}

// wordShape splits v into words the way identifiers are written and returns
// the average word length in letters and digits. Words are: a run of
// digits; a run of lower-case letters, together with one upper-case letter
// before it ("Value"); a run of upper-case letters not followed by a
// lower-case one ("HTTP" in "HTTPServer" – the last capital starts the next
// word). Any other byte separates words.
//
// Identifiers and prose-like names give long words
// ("rewriteValueAMD64_OpCvt8toMask64x8" → 2.75); random strings change case
// or class every one or two characters (about 1.9).
func wordShape(v string) float64 {
	chars, words := 0, 0
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case isDigit(c):
			j := i + 1
			for j < len(v) && isDigit(v[j]) {
				j++
			}
			chars += j - i
			words++
			i = j
		case isLower(c):
			j := i + 1
			for j < len(v) && isLower(v[j]) {
				j++
			}
			chars += j - i
			words++
			i = j
		case isUpper(c):
			j := i + 1
			for j < len(v) && isUpper(v[j]) {
				j++
			}
			if j < len(v) && isLower(v[j]) {
				// v[i:j-1] is an acronym (possibly empty), v[j-1] starts
				// a capitalised word.
				if j-1 > i {
					words++
				}
				k := j + 1
				for k < len(v) && isLower(v[k]) {
					k++
				}
				chars += k - i
				words++
				i = k
			} else {
				chars += j - i
				words++
				i = j
			}
		default:
			i++
		}
	}
	if words == 0 {
		return 0
	}
	return float64(chars) / float64(words)
}

func isTokenSep(c byte) bool { return c == '-' || c == '_' || c == '+' || c == '=' }

// idPart reports whether p (one separator-free part of a token) is an id
// rather than part of a secret: a ULID (26 Crockford base32 characters in
// upper case, the first one 0–7), or a hex digest / number of 7 or more
// digits in one letter case (a git SHA, a UUID's last group).
func idPart(p string) bool {
	if len(p) == 26 && p[0] >= '0' && p[0] <= '7' && isCrockfordUpper(p) {
		return true
	}
	if len(p) < 7 {
		return false
	}
	lowerHex, upperHex := true, true
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !isDigit(c) {
			if !('a' <= c && c <= 'f') {
				lowerHex = false
			}
			if !('A' <= c && c <= 'F') {
				upperHex = false
			}
		}
	}
	return lowerHex || upperHex
}

func isCrockfordUpper(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !isDigit(c) && !(isUpper(c) && c != 'I' && c != 'L' && c != 'O' && c != 'U') {
			return false
		}
	}
	return true
}

// forParts calls f for each maximal separator-free part of tok, with its
// start offset.
func forParts(tok string, f func(start int, p string)) {
	for i := 0; i < len(tok); {
		if isTokenSep(tok[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(tok) && !isTokenSep(tok[j]) {
			j++
		}
		f(i, tok[i:j])
		i = j
	}
}

func hasIDPart(tok string) bool {
	found := false
	forParts(tok, func(_ int, p string) {
		if !found && idPart(p) {
			found = true
		}
	})
	return found
}

// withoutIDParts returns tok with its id parts removed; each kept part keeps
// the separator that follows it.
func withoutIDParts(tok string) string {
	var b strings.Builder
	forParts(tok, func(start int, p string) {
		if idPart(p) {
			return
		}
		end := start + len(p)
		for end < len(tok) && isTokenSep(tok[end]) {
			end++
		}
		b.WriteString(tok[start:end])
	})
	return b.String()
}
