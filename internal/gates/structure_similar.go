package gates

import (
	"sort"

	"github.com/ideate/git-ideate/internal/symbols"
)

// Near copies that are not equal: a renamed copy with a line added,
// removed or changed. Two bodies' similarity is the share of their
// normalized tokens that match in order, 2·LCS/(len a + len b) (1 for
// equal bodies; a 100-token body with one 8-token line changed is about
// 0.92, with a line added 0.96). Comparing every added body with every
// body of the repository that way is quadratic, so candidates come first
// from shared k-grams of normalized tokens (k = simGram): only a pair
// sharing at least simCandidate of the smaller body's distinct k-grams is
// measured. A k-gram found in more than simStopGram added bodies is
// boilerplate (`if err != nil { return`), not evidence, and is not
// counted.
const (
	simGram      = 5
	simCandidate = 0.3
	simStopGram  = 64
	// simMaxCells bounds one measurement (the LCS table): two bodies of
	// 3000 tokens each. Longer pairs are left to the exact check.
	simMaxCells = 9_000_000
)

// simBody is one comparable body.
type simBody struct {
	s      symbols.Symbol
	norm   []uint32
	idents []uint32
	grams  []uint64 // distinct, sorted
}

// kgrams is the distinct sorted k-gram hashes of norm.
func kgrams(norm []uint32) []uint64 {
	if len(norm) < simGram {
		return nil
	}
	out := make([]uint64, 0, len(norm)-simGram+1)
	for i := 0; i+simGram <= len(norm); i++ {
		h := uint64(14695981039346656037)
		for _, t := range norm[i : i+simGram] {
			h ^= uint64(t)
			h *= 1099511628211
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	n := 0
	for i, g := range out {
		if i == 0 || g != out[n-1] {
			out[n] = g
			n++
		}
	}
	return out[:n]
}

// similarity is 2·LCS(a, b)/(len a + len b), and false when the pair is
// too long to measure.
func similarity(a, b []uint32) (float64, bool) {
	if len(a) == 0 && len(b) == 0 {
		return 1, true
	}
	if len(a) == 0 || len(b) == 0 {
		return 0, true
	}
	if len(a)*len(b) > simMaxCells {
		return 0, false
	}
	if len(b) > len(a) {
		a, b = b, a
	}
	prev := make([]int32, len(b)+1)
	cur := make([]int32, len(b)+1)
	for i := 1; i <= len(a); i++ {
		ai := a[i-1]
		for j := 1; j <= len(b); j++ {
			switch {
			case ai == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return 2 * float64(prev[len(b)]) / float64(len(a)+len(b)), true
}

// simMatch is the most similar body found for an added one.
type simMatch struct {
	other symbols.Symbol
	sim   float64
}

// nearCopies finds, for each added body (by index into added), the most
// similar other body in all whose similarity is at least threshold.
// skip says which pairs are not compared (the same symbol, two kinds,
// a pair already reported from the other side).
//
// global is the ids of the names defined at the top level of the
// repository (see parallel).
func nearCopies(added, all []simBody, threshold float64, global map[uint32]bool, skip func(s, o symbols.Symbol) bool) map[int]simMatch {
	post := map[uint64][]int32{}
	for i, b := range added {
		for _, g := range b.grams {
			post[g] = append(post[g], int32(i))
		}
	}
	// The number of counted (non-boilerplate) grams of each added body.
	counted := make([]int, len(added))
	for i, b := range added {
		for _, g := range b.grams {
			if len(post[g]) <= simStopGram {
				counted[i]++
			}
		}
	}
	out := map[int]simMatch{}
	shared := make([]int, len(added))
	var touched []int
	for _, o := range all {
		touched = touched[:0]
		nonStop := 0
		for _, g := range o.grams {
			p := post[g]
			if len(p) > simStopGram {
				continue
			}
			nonStop++
			for _, i := range p {
				if shared[i] == 0 {
					touched = append(touched, int(i))
				}
				shared[i]++
			}
		}
		for _, i := range touched {
			n := shared[i]
			shared[i] = 0
			a := added[i]
			small := counted[i]
			if nonStop < small {
				small = nonStop
			}
			if small == 0 || float64(n) < simCandidate*float64(small) {
				continue
			}
			// A pair whose lengths alone keep it under the threshold.
			la, lo := len(a.norm), len(o.norm)
			if 2*float64(min(la, lo))/float64(la+lo) < threshold {
				continue
			}
			if skip(a.s, o.s) {
				continue
			}
			sim, ok := similarity(a.norm, o.norm)
			if !ok || sim < threshold {
				continue
			}
			if parallel(a, o, threshold, global) {
				continue
			}
			if m, seen := out[i]; !seen || sim > m.sim || sim == m.sim && before(o.s, m.other) {
				out[i] = simMatch{other: o.s, sim: sim}
			}
		}
	}
	return out
}

// parallel reports whether two bodies of one shape are two functions
// rather than a copy. Their vocabulary is the names normalizing kept
// (what a body calls, selects and keys) and the identifiers that name
// something defined at the top level of the repository (its constants,
// types and functions); a renamed copy keeps it, since what it renamed
// are locals. Two bodies are parallel when each uses a name of its
// vocabulary the other never uses (the same steps over another
// operation: SetReadDeadline beside SetWriteDeadline, one MCP handler
// per board verb, one table of tools beside another), or when their
// vocabularies in order match less than threshold (checkIfModifiedSince
// beside checkIfUnmodifiedSince answers condTrue where the other answers
// condFalse). A copy with a line added or removed uses names the other
// does not on one side only.
func parallel(a, b simBody, threshold float64, global map[uint32]bool) bool {
	vocab := func(x simBody) ([]uint32, map[uint32]bool) {
		var seq []uint32
		set := map[uint32]bool{}
		for _, id := range x.idents {
			if id&identKept != 0 || global[id>>2] {
				seq = append(seq, id>>2)
				set[id>>2] = true
			}
		}
		return seq, set
	}
	va, sa := vocab(a)
	vb, sb := vocab(b)
	only := func(x, y map[uint32]bool) bool {
		for id := range x {
			if !y[id] {
				return true
			}
		}
		return false
	}
	if only(sa, sb) && only(sb, sa) {
		return true
	}
	vs, ok := similarity(va, vb)
	return !ok || vs < threshold
}

// before orders symbols by file then offset.
func before(a, b symbols.Symbol) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Start < b.Start
}
