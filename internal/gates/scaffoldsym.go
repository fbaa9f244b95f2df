package gates

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/symbols"
)

// The scaffold gate's symbol classes.
const (
	ClassStubMissing     = "stub_missing"     // a declared symbol is defined nowhere
	ClassStubDuplicate   = "stub_duplicate"   // a declared symbol is defined more than once
	ClassStubNoMarker    = "stub_no_marker"   // a new declared callable's body lacks the stub marker
	ClassBodyImplemented = "body_implemented" // the scaffold step wrote a real body
	ClassNotStub         = "not_stub"         // the scaffold step changed something that is not a stub
)

// ScaffoldSymbols is the scaffold gate's symbol check (Deps.Symbols),
// judged on the committed trees through the qualified index:
//   - every declared symbol is defined exactly once outside the tests,
//     and one the base did not have has a body carrying a stub marker;
//   - every callable the scaffold commits added or changed (RED → HEAD)
//     has a marker body: no body implemented;
//   - nothing else changed but source files the index reads (test files
//     are the gate's own test_changed check).
//
// When the fallback reader read a file it judged, a weaker_check reason
// (severity info, not a failure) says the check was weaker.
func ScaffoldSymbols(g *gitstore.Store) func(ctx context.Context, in SymbolInput) ([]Reason, error) {
	return func(ctx context.Context, in SymbolInput) ([]Reason, error) {
		head, err := commitTree(g, in.Commit)
		if err != nil {
			return nil, err
		}
		red, err := commitTree(g, in.Red)
		if err != nil {
			return nil, err
		}
		base, err := commitTree(g, in.Base)
		if err != nil {
			return nil, err
		}
		src, err := newTreeSource(g, head)
		if err != nil {
			return nil, err
		}
		x, err := symbols.Build(ctx, src)
		if err != nil {
			return nil, err
		}
		markers := StubMarkers(in.Standard, in.Runner)
		if len(markers) == 0 {
			markers = []string{"SUB-AGENT-TODO"}
		}
		weaker := false
		body := func(s symbols.Symbol) []byte {
			b, err := src.Read(s.File)
			if err != nil || s.BodyEnd > len(b) {
				return nil
			}
			return b[s.BodyStart:s.BodyEnd]
		}
		marked := func(b []byte) bool {
			for _, m := range markers {
				if bytes.Contains(b, []byte(m)) {
					return true
				}
			}
			return false
		}
		keysAt := map[gitstore.Hash]map[string]map[string]string{} // tree → file → key → body
		defsAt := func(tree gitstore.Hash, p string) (map[string]string, error) {
			if keysAt[tree] == nil {
				keysAt[tree] = map[string]map[string]string{}
			}
			if m, ok := keysAt[tree][p]; ok {
				return m, nil
			}
			m := map[string]string{}
			keysAt[tree][p] = m
			e, ok, err := g.Lookup(tree, strings.Split(p, "/"))
			if err != nil || !ok || e.IsDir() {
				return m, err
			}
			b, err := g.ReadBlob(e.Hash)
			if err != nil {
				return nil, err
			}
			f, err := symbols.Parse(ctx, p, b)
			if err != nil {
				return m, nil
			}
			for _, s := range f.Defs {
				m[s.Key()] = string(b[s.BodyStart:s.BodyEnd])
			}
			return m, nil
		}
		var out []Reason
		for _, d := range in.Declared {
			var defs []symbols.Symbol
			for _, s := range x.Find(d) {
				if !s.Test {
					defs = append(defs, s)
				}
			}
			switch {
			case len(defs) == 0:
				out = append(out, Reason{Class: ClassStubMissing, Detail: fmt.Sprintf("the plan declares %s and the scaffold commit defines it nowhere", d)})
				continue
			case len(defs) > 1:
				var at []string
				for _, s := range defs {
					at = append(at, fmt.Sprintf("%s:%d", s.File, s.Line))
				}
				out = append(out, Reason{Class: ClassStubDuplicate, Paths: at, Detail: fmt.Sprintf("the plan declares %s once and %d definitions answer to it", d, len(defs))})
				continue
			}
			s := defs[0]
			weaker = weaker || s.Weaker
			old, err := defsAt(base, s.File)
			if err != nil {
				return nil, err
			}
			if _, existed := old[s.Key()]; existed || !s.Kind.Callable() {
				continue
			}
			if !s.HasBody() || !marked(body(s)) {
				out = append(out, Reason{Class: ClassStubNoMarker, Paths: []string{fmt.Sprintf("%s:%d", s.File, s.Line)},
					Detail: fmt.Sprintf("%s is new and its body does not fail with the stub marker (%s)", s.QName(), strings.Join(markers, ", "))})
			}
		}
		// What the scaffold commits changed after RED.
		var changed []string
		err = g.DiffTrees(red, head, func(p string, _, n gitstore.TreeEntry) error {
			if n.Hash != gitstore.ZeroHash && !n.IsDir() {
				changed = append(changed, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(changed)
		var other []string
		for _, p := range changed {
			if symbols.IsTestFile(p) {
				continue
			}
			if symbols.LangOf(p) == "" {
				other = append(other, p)
				continue
			}
			f := x.File(p)
			if f == nil {
				continue
			}
			weaker = weaker || f.Weaker
			before, err := defsAt(red, p)
			if err != nil {
				return nil, err
			}
			for _, s := range f.Defs {
				if !s.Kind.Callable() || !s.HasBody() {
					continue
				}
				b := body(s)
				if prev, ok := before[s.Key()]; ok && prev == string(b) {
					continue
				}
				if !marked(b) {
					out = append(out, Reason{Class: ClassBodyImplemented, Paths: []string{fmt.Sprintf("%s:%d", s.File, s.Line)},
						Detail: fmt.Sprintf("%s got a body without the stub marker after RED: the scaffold step writes stubs, GREEN writes bodies", s.QName())})
				}
			}
		}
		if len(other) > 0 {
			out = append(out, Reason{Class: ClassNotStub, Paths: other,
				Detail: fmt.Sprintf("%d file(s) the symbol index does not read changed after RED: the scaffold step adds stubs only", len(other))})
		}
		if weaker {
			out = append(out, Reason{Class: ClassWeakerCheck, Severity: SevInfo,
				Detail: "this build has no tree-sitter (built without cgo): definitions outside Go were read by the fallback reader, so the check was weaker"})
		}
		return out, nil
	}
}

// commitTree is a commit's tree; "" is the zero hash.
func commitTree(g *gitstore.Store, c string) (gitstore.Hash, error) {
	if c == "" {
		return gitstore.ZeroHash, nil
	}
	h, err := gitstore.ParseHash(c)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	cm, err := g.ReadCommit(h)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return cm.Tree, nil
}
