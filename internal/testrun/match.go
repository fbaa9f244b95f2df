package testrun

import (
	"fmt"
	"path"
	"strings"
)

// parsed is what a format parser hands to report: the tests it saw, and the
// outcomes of the groups (Go package, Python module, JavaScript file) that
// apply to a declared test the output never names.
type parsed struct {
	scheme  scheme
	results []Result // ID is the runner's id
	groups  []group
	notes   []string
}

// group is a package-, module- or file-level fact, such as a build failure.
type group struct {
	key     string
	outcome Outcome
	reason  string
	file    string
	line    int
	crashed bool // the group's run crashed before reaching later tests
}

// groupRank orders group outcomes when several groups match one id.
func groupRank(o Outcome) int {
	switch o {
	case BuildFail:
		return 5
	case ErrorSetup:
		return 4
	case Timeout:
		return 3
	case NotRun:
		return 1
	}
	return 2
}

// scheme is how a format's test ids are matched against declared ids.
type scheme interface {
	// split returns the lookup key of an id and its qualifier (the part a
	// declared id may leave out: a Go package, a JavaScript file).
	split(id string) (key, qual string)
	// qualMatch reports whether a declared qualifier fits a result's.
	qualMatch(declared, result string) bool
	// inGroup reports whether a declared id belongs to group g.
	inGroup(key, qual, g string) bool
}

func (p *parsed) add(r Result) int {
	p.results = append(p.results, r)
	return len(p.results) - 1
}

func (p *parsed) report(opts Options) *Report {
	rep := &Report{Format: opts.Format, Dialect: opts.Dialect, Counts: map[Outcome]int{}, Notes: p.notes}
	type entry struct {
		idx  int
		qual string
	}
	index := make(map[string][]entry, len(p.results))
	for i, r := range p.results {
		k, q := p.scheme.split(r.ID)
		index[k] = append(index[k], entry{i, q})
	}
	used := make([]bool, len(p.results))
	seen := map[string]bool{}
	for _, d := range opts.Declared {
		d = strings.TrimSpace(d)
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		k, q := p.scheme.split(d)
		var hits []int
		for _, e := range index[k] {
			if p.scheme.qualMatch(q, e.qual) {
				hits = append(hits, e.idx)
			}
		}
		switch {
		case len(hits) == 1:
			r := p.results[hits[0]]
			used[hits[0]] = true
			if r.ID != d {
				r.RunnerID = r.ID
			}
			r.ID, r.Declared = d, true
			rep.Tests = append(rep.Tests, r)
		case len(hits) > 1:
			names := make([]string, 0, 3)
			for i, h := range hits {
				if i == 3 {
					names = append(names, "…")
					break
				}
				names = append(names, p.results[h].ID)
			}
			rep.Tests = append(rep.Tests, Result{ID: d, Declared: true, Outcome: NotRun,
				Reason: fmt.Sprintf("declared id matches %d tests (%s); qualify it", len(hits), strings.Join(names, ", "))})
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s is ambiguous: it matches %d tests", d, len(hits)))
		default:
			if r, ok := p.family(d, k); ok {
				rep.Tests = append(rep.Tests, r)
				continue
			}
			rep.Tests = append(rep.Tests, p.fallback(d, k, q, opts))
		}
	}
	for i, r := range p.results {
		if !used[i] {
			rep.Tests = append(rep.Tests, r)
		}
	}
	if rep.Tests == nil {
		rep.Tests = []Result{}
	}
	rep.Verdict, rep.Reason = verdict(rep.Tests)
	for _, t := range rep.Tests {
		rep.Counts[t.Outcome]++
	}
	return rep
}

// familyRank orders the outcomes of a parametrized test's cases: the
// declared test takes its worst case's.
func familyRank(o Outcome) int {
	return map[Outcome]int{Pass: 0, Skip: 1, NotRun: 2, FailAssert: 3, FailStub: 4, FailError: 5, Timeout: 6, ErrorSetup: 7, BuildFail: 8}[o]
}

// family gives a declared pytest test without parameters ("test_x") the
// outcome of its parametrized cases ("test_x[1]", "test_x[2]"): the worst.
// The cases stay in the report under their own ids.
func (p *parsed) family(d, k string) (Result, bool) {
	if _, ok := p.scheme.(pyScheme); !ok {
		return Result{}, false
	}
	var best *Result
	n := 0
	for i := range p.results {
		rk, _ := p.scheme.split(p.results[i].ID)
		if !strings.HasPrefix(rk, k+"[") || !strings.HasSuffix(rk, "]") {
			continue
		}
		n++
		if best == nil || familyRank(p.results[i].Outcome) > familyRank(best.Outcome) {
			best = &p.results[i]
		}
	}
	if best == nil {
		return Result{}, false
	}
	r := *best
	r.RunnerID, r.ID, r.Declared = r.ID, d, true
	r.Reason = fmt.Sprintf("worst of %d parametrized cases (%s): %s", n, r.RunnerID[strings.LastIndex(r.RunnerID, "::")+2:], r.Reason)
	return r, true
}

// fallback is the result of a declared test the output never names.
func (p *parsed) fallback(d, k, q string, opts Options) Result {
	var best *group
	for i := range p.groups {
		g := &p.groups[i]
		if (g.key == "*" || p.scheme.inGroup(k, q, g.key)) && (best == nil || groupRank(g.outcome) > groupRank(best.outcome)) {
			best = g
		}
	}
	if _, isGo := p.scheme.(goScheme); best == nil && q == "" && isGo {
		// A declared Go id without its package: when the output has only
		// one package, the id can only be in it. (A JavaScript or Python id
		// names its file; one that matches nothing is NOT_RUN, never
		// charged with another file's failure.)
		keys := map[string]bool{}
		for i := range p.groups {
			if p.groups[i].key != "*" {
				keys[p.groups[i].key] = true
			}
		}
		if len(keys) == 1 {
			for i := range p.groups {
				if best == nil || groupRank(p.groups[i].outcome) > groupRank(best.outcome) {
					best = &p.groups[i]
				}
			}
		}
	}
	if best != nil {
		return Result{ID: d, Declared: true, Outcome: best.outcome, Reason: best.reason, File: best.file, Line: best.line, crashed: best.crashed}
	}
	if opts.TimedOut {
		return Result{ID: d, Declared: true, Outcome: Timeout, Reason: "the run was killed at its deadline before this test reported"}
	}
	return Result{ID: d, Declared: true, Outcome: NotRun, Reason: "no event for this test in the output: not collected, filtered out by the selector, or misspelled"}
}

func verdict(tests []Result) (Verdict, string) {
	if len(tests) == 0 {
		return VerdictNoTests, "the output holds no test"
	}
	counts := map[Outcome]int{}
	bad := 0
	for _, t := range tests {
		counts[t.Outcome]++
		if t.Outcome != Pass && !(t.Outcome == Skip && !t.Declared) {
			bad++
		}
	}
	var parts []string
	for _, o := range Outcomes {
		if n := counts[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
	}
	summary := fmt.Sprintf("%d tests: %s", len(tests), strings.Join(parts, ", "))
	switch {
	case counts[Pass] == 0 && bad == 0:
		return VerdictNoTests, summary + " (nothing ran)"
	case bad > 0:
		return VerdictFail, summary
	}
	return VerdictPass, summary
}

// goScheme: ids are "import/path::TestName[/sub]"; a declared id may leave
// the package out ("TestName") when only one package has that test.
type goScheme struct{}

func (goScheme) split(id string) (string, string) {
	if i := strings.LastIndex(id, "::"); i >= 0 {
		return id[i+2:], id[:i]
	}
	return id, ""
}
func (goScheme) qualMatch(d, r string) bool { return d == "" || d == r }
func (goScheme) inGroup(_, q, g string) bool {
	return q == g
}

// pyScheme: pytest node ids ("tests/test_x.py::TestK::test_y[p]") and
// JUnit ids ("tests.test_x.TestK::test_y[p]") compare in the dotted form.
type pyScheme struct{}

func (pyScheme) split(id string) (string, string) { return pyCanon(id), "" }
func (pyScheme) qualMatch(string, string) bool    { return true }
func (pyScheme) inGroup(k, _, g string) bool {
	mod := k
	if i := strings.Index(k, "::"); i >= 0 {
		mod = k[:i]
	}
	return mod == g || strings.HasPrefix(mod, g+".")
}

// pyCanon turns a node id into "dotted.module.Class::name".
func pyCanon(id string) string {
	parts := strings.Split(id, "::")
	first := parts[0]
	first = strings.TrimSuffix(first, ".py")
	first = strings.NewReplacer("/", ".", "\\", ".").Replace(first)
	if len(parts) == 1 {
		return first
	}
	name := parts[len(parts)-1]
	mid := parts[1 : len(parts)-1]
	if len(mid) > 0 {
		first += "." + strings.Join(mid, ".")
	}
	return first + "::" + name
}

// jsScheme: ids are "file::describe > title" or "file > describe > title"
// (the first segment is the file when it ends in a JavaScript or
// TypeScript extension); titles compare with their separators (" > ",
// " › ", or jest's plain spaces) folded to one space, and files compare by
// path suffix, so "calc.test.js > calc > adds" and
// "calc.test.js::calc > adds" both match "/abs/src/calc.test.js::calc
// adds". A result without a file (jest-junit without addFileAttribute)
// matches on the title alone.
type jsScheme struct{}

func (jsScheme) split(id string) (string, string) {
	file, title := "", id
	if i := strings.Index(id, "::"); i >= 0 {
		file, title = id[:i], id[i+2:]
	} else {
		for _, sep := range []string{" > ", " › "} {
			if i := strings.Index(id, sep); i > 0 && jsFile(id[:i]) {
				file, title = id[:i], id[i+len(sep):]
				break
			}
		}
	}
	return jsTitle(title), file
}

// jsFile reports whether s names a JavaScript or TypeScript file.
func jsFile(s string) bool {
	switch path.Ext(strings.TrimSpace(s)) {
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return !strings.ContainsAny(s, " \t")
	}
	return false
}

func (jsScheme) qualMatch(d, r string) bool { return d == "" || r == "" || pathSuffix(d, r) }
func (jsScheme) inGroup(_, q, g string) bool {
	return q != "" && pathSuffix(q, g)
}

func jsTitle(t string) string {
	t = strings.ReplaceAll(t, " > ", " ")
	t = strings.ReplaceAll(t, " › ", " ")
	return strings.Join(strings.Fields(t), " ")
}

// pathSuffix reports whether one path ends with the other at a path
// boundary ("src/a.test.js" and "/x/src/a.test.js").
func pathSuffix(a, b string) bool {
	a, b = path.Clean(strings.ReplaceAll(a, "\\", "/")), path.Clean(strings.ReplaceAll(b, "\\", "/"))
	a, b = strings.TrimPrefix(a, "./"), strings.TrimPrefix(b, "./")
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || strings.HasSuffix(b, "/"+a)
}

// relPath cuts root from an absolute path.
func relPath(p, root string) string {
	if root == "" || p == "" {
		return p
	}
	root = strings.TrimSuffix(root, "/") + "/"
	if strings.HasPrefix(p, root) {
		return p[len(root):]
	}
	return p
}
