package secretgate

import (
	"strings"
	"sync"
)

// Redaction reports how many matches one rule redacted.
type Redaction struct {
	Rule  string `json:"pattern"`
	Count int    `json:"count"`
}

// maxPasses bounds the fix-point loop of Scan. A pass that redacts nothing
// ends the loop; in practice the second pass always finds nothing, because a
// marker contains no character that lets any rule match across it.
const maxPasses = 4

// ruleSet builds the rule table on first use and keeps it for the life of
// the process. Building it compiles every regular expression once.
var ruleSet = sync.OnceValue(buildRules)

// Scan returns s with every match redacted and the per-rule counts (rules in
// rule order, only rules with Count>0; nil when clean).
//
// Each rule runs over the text left by the rules before it. When a pass
// redacted anything, the whole rule list runs again over the result, until a
// pass finds nothing; so the returned text is always a fixed point and
// Scan(Scan(x)) == Scan(x) with an empty second report.
func Scan(s string) (string, []Redaction) {
	rules := ruleSet()
	var counts [32]int // more than len(rules); checked by TestRuleTable
	var spans []span
	for pass := 0; pass < maxPasses; pass++ {
		changed := false
		for i := range rules {
			spans = rules[i].find(s, spans[:0])
			if len(spans) == 0 {
				continue
			}
			s = redact(s, spans, rules[i].marker)
			counts[i] += len(spans)
			changed = true
		}
		if !changed {
			break
		}
	}
	var out []Redaction
	for i := range rules {
		if counts[i] > 0 {
			out = append(out, Redaction{Rule: rules[i].name, Count: counts[i]})
		}
	}
	return s, out
}

// Fields scans each *string in place and returns the merged counts (same
// order rules). Nil pointers are skipped.
func Fields(fields ...*string) []Redaction {
	var total []Redaction
	for _, f := range fields {
		if f == nil {
			continue
		}
		var r []Redaction
		*f, r = Scan(*f)
		if r != nil {
			total = Merge(total, r)
		}
	}
	return total
}

// Merge adds b's counts into a (rule order kept). It returns a new slice and
// leaves a and b untouched. Entries with a name that is not a rule of this
// package are kept after the known rules, in the order first seen. Entries
// with a zero total are dropped; the result is nil when nothing remains.
func Merge(a, b []Redaction) []Redaction {
	rules := ruleSet()
	var known [32]int
	var extra []Redaction
	add := func(list []Redaction) {
		for _, r := range list {
			if i := ruleIndex(rules, r.Rule); i >= 0 {
				known[i] += r.Count
				continue
			}
			found := false
			for j := range extra {
				if extra[j].Rule == r.Rule {
					extra[j].Count += r.Count
					found = true
					break
				}
			}
			if !found {
				extra = append(extra, r)
			}
		}
	}
	add(a)
	add(b)
	var out []Redaction
	for i := range rules {
		if known[i] != 0 {
			out = append(out, Redaction{Rule: rules[i].name, Count: known[i]})
		}
	}
	for _, r := range extra {
		if r.Count != 0 {
			out = append(out, r)
		}
	}
	return out
}

// Marker returns the text that replaces a secret found by the named rule:
// "[REDACTED:<rule>]".
func Marker(rule string) string { return "[REDACTED:" + rule + "]" }

func ruleIndex(rules []rule, name string) int {
	for i := range rules {
		if rules[i].name == name {
			return i
		}
	}
	return -1
}

// redact replaces every span (ascending, non-overlapping) of s by marker.
func redact(s string, spans []span, marker string) string {
	var b strings.Builder
	n := len(s)
	for _, sp := range spans {
		n += len(marker) - (sp.hi - sp.lo)
	}
	b.Grow(n)
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.lo])
		b.WriteString(marker)
		last = sp.hi
	}
	b.WriteString(s[last:])
	return b.String()
}
