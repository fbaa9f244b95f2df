package gates

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/symbols"
)

// The structure gate's reason classes.
const (
	ClassOrphan          = "orphan"           // a new symbol nothing reaches
	ClassNearCopy        = "near_copy"        // a new body that copies another under another name
	ClassDuplicateHelper = "duplicate_helper" // a new helper whose name and body exist elsewhere
	ClassParallelImpl    = "parallel_impl"    // a second definition of a role the plan gave one symbol
	ClassWeakerCheck     = "weaker_check"     // the fallback reader was used: the check was weaker
	ClassUnreadable      = "unreadable"       // a changed file its reader could not read whole: not judged
)

// The severities of a structural finding. Only a high one fails the gate.
const (
	SevHigh   = "high"
	SevMedium = "medium"
	SevInfo   = "info"
)

// StructureConfig holds the declared thresholds of the structural checks.
type StructureConfig struct {
	// MinCloneTokens is the smallest body, in tokens, whose normalized
	// copy under another name is a near_copy (high): identifiers and
	// literals are normalized, so a renamed copy hashes alike.
	MinCloneTokens int
	// MinHelperTokens is the smallest body whose copy under the same name
	// in another package or module is a duplicate_helper (high).
	MinHelperTokens int
	// Similarity is the share of two bodies' normalized tokens that match
	// in order, 2·LCS/(len a + len b), from which a body of at least
	// MinCloneTokens that is not equal to another is still a near_copy
	// of it (high): a renamed copy with a line added, removed or changed.
	// 1 finds equal bodies only.
	Similarity float64
}

// DefaultStructure is the thresholds the gate uses: 50 tokens for a near
// copy (about dupl's smallest useful clone; a short getter or a one-line
// delegation is not a clone worth failing a task for), 12 for a helper
// copied under its own name (a clamp or a min is about that size), and a
// similarity of 0.85 for a copy that is not equal (a 50-token body with
// one short line changed is about 0.9). Bodies of one shape that use
// different names are parallel functions, not copies (see parallel):
// with that, every pair over 0.85 in this repository was a copy (listed
// in its test), and GOROOT/src/net/http has none.
var DefaultStructure = StructureConfig{MinCloneTokens: 50, MinHelperTokens: 12, Similarity: 0.85}

// Finding is one structural fact about a symbol a task added.
type Finding struct {
	Class    string `json:"class"`
	Severity string `json:"severity"`
	Symbol   string `json:"symbol"` // the added symbol's qualified name
	File     string `json:"file"`
	Line     int    `json:"line"`
	Detail   string `json:"detail"`
	// Other is the symbol it duplicates or competes with (file:line name).
	Other string `json:"other,omitempty"`
	// Weaker is set when a symbol involved was read by the fallback reader.
	Weaker bool `json:"weaker,omitempty"`
}

// Reason is the finding as a verdict reason.
func (f Finding) Reason() Reason {
	return Reason{Class: f.Class, Severity: f.Severity, Detail: f.Detail, Paths: []string{fmt.Sprintf("%s:%d", f.File, f.Line)}}
}

// implicitNames are Go methods the language or the standard library calls
// by interface without naming them at a call site.
var implicitGo = []string{
	"String", "Error", "Format", "GoString", "Unwrap", "Is", "As", "MarshalJSON", "UnmarshalJSON",
	"MarshalText", "UnmarshalText", "MarshalBinary", "UnmarshalBinary", "Len", "Less", "Swap", "Read", "Write",
	"Close", "ServeHTTP", "Scan", "Value",
}

// exempt reports whether a symbol is reached by convention rather than by
// name: entry points, tests, dunder methods, framework registrations.
func exempt(s symbols.Symbol) bool {
	if s.Decorated || s.Test || s.Name == "_" {
		return true
	}
	switch s.Lang {
	case symbols.Go:
		return s.Name == "main" || s.Name == "init" || s.Kind == symbols.Method && slices.Contains(implicitGo, s.Name)
	case symbols.Python:
		return strings.HasPrefix(s.Name, "__") && strings.HasSuffix(s.Name, "__")
	case symbols.Rust:
		return s.Name == "main" || s.Name == "new" && s.Kind == symbols.Method
	case symbols.JavaScript, symbols.TypeScript:
		return s.Name == "constructor"
	}
	return false
}

// privateTo reports whether nothing outside the indexed files can reach s:
// unexported (Go lower case, Python `_`, no `export`/`pub`), or exported
// from a Go main package.
func privateTo(s symbols.Symbol) bool {
	if !s.Exported {
		return true
	}
	return s.Lang == symbols.Go && s.Package == "main"
}

// analyze is AnalyzeStructure over files whose body facts are known
// (facts, by path; a file's tokens need not be there).
func analyze(x *symbols.Index, facts map[string]*fileFacts, added []symbols.Symbol, declared []string, cfg StructureConfig) []Finding {
	if cfg.MinCloneTokens <= 0 {
		cfg.MinCloneTokens = DefaultStructure.MinCloneTokens
	}
	if cfg.MinHelperTokens <= 0 {
		cfg.MinHelperTokens = DefaultStructure.MinHelperTokens
	}
	if cfg.Similarity <= 0 {
		cfg.Similarity = DefaultStructure.Similarity
	}
	minTok := cfg.MinHelperTokens
	if cfg.MinCloneTokens < minTok {
		minTok = cfg.MinCloneTokens
	}
	// Every comparable body of the index, by fingerprint.
	type body struct {
		s symbols.Symbol
		n int
	}
	bodies := map[uint64][]body{}
	judged := func(f *symbols.File) bool { return f != nil && !f.Test && !f.Generated }
	for _, p := range x.Files() {
		f := x.File(p)
		if !judged(f) {
			continue
		}
		for _, s := range f.Defs {
			if !s.Kind.Callable() {
				continue
			}
			fp := facts[p].body(s)
			if fp.N >= minTok {
				bodies[fp.Hash] = append(bodies[fp.Hash], body{s, fp.N})
			}
		}
	}
	defs := map[string]int{}
	for _, p := range x.Files() {
		for _, s := range x.File(p).Defs {
			defs[s.Key()]++
		}
	}
	addedKey := map[string]bool{}
	for _, s := range added {
		addedKey[s.Key()] = true
	}
	where := func(s symbols.Symbol) string { return fmt.Sprintf("%s:%d %s", s.File, s.Line, s.QName()) }
	skipPair := func(s, o symbols.Symbol) bool {
		// Only a function against a function and a method against a
		// method; two methods of one name are two types' answers to one
		// interface, not a copy.
		if o.Key() == s.Key() || o.Kind != s.Kind || o.Kind == symbols.Method && o.Name == s.Name {
			return true
		}
		// Among added symbols, report a pair once: on the later one.
		return addedKey[o.Key()] && (o.File > s.File || o.File == s.File && o.Start > s.Start)
	}
	var out []Finding
	var fuzzy []simBody // added bodies with no equal: the similarity check's
	for _, s := range added {
		f := x.File(s.File)
		if !judged(f) {
			continue
		}
		base := Finding{Symbol: s.QName(), File: s.File, Line: s.Line, Weaker: s.Weaker}
		// Orphan. A key defined twice is a build variant (files for other
		// platforms or tags): one of them is reached where it is built.
		if !exempt(s) && x.Uses(s.Name) == 0 && defs[s.Key()] < 2 {
			fd := base
			fd.Class = ClassOrphan
			// A variable's initializer can do its work (register a flag,
			// a handler) and a constant can name a protocol's value: only
			// callables and types are high.
			if privateTo(s) && s.Kind != symbols.Var && s.Kind != symbols.Const {
				fd.Severity = SevHigh
				fd.Detail = fmt.Sprintf("%s %s is new and nothing in the repository uses it, and nothing outside can: wire it in or remove it", s.Kind, s.QName())
			} else {
				fd.Severity = SevMedium
				fd.Detail = fmt.Sprintf("%s %s is new and nothing in the repository uses it (it is exported, so something outside may)", s.Kind, s.QName())
			}
			out = append(out, fd)
		}
		// Copies.
		if s.Kind.Callable() {
			fp := facts[s.File].body(s)
			var same, other *symbols.Symbol
			for i := range bodies[fp.Hash] {
				o := bodies[fp.Hash][i].s
				if skipPair(s, o) {
					continue
				}
				if o.Name == s.Name && same == nil {
					same = &o
				} else if o.Name != s.Name && other == nil {
					other = &o
				}
			}
			switch {
			case same != nil && fp.N >= cfg.MinHelperTokens:
				fd := base
				fd.Class, fd.Severity, fd.Other, fd.Weaker = ClassDuplicateHelper, SevHigh, where(*same), s.Weaker || same.Weaker
				fd.Detail = fmt.Sprintf("%s repeats %s (%d tokens, equal after normalizing names and literals): use the one that exists", s.QName(), where(*same), fp.N)
				out = append(out, fd)
			case other != nil && fp.N >= cfg.MinCloneTokens:
				fd := base
				fd.Class, fd.Severity, fd.Other, fd.Weaker = ClassNearCopy, SevHigh, where(*other), s.Weaker || other.Weaker
				fd.Detail = fmt.Sprintf("the body of %s copies %s under another name (%d tokens, equal after normalizing names and literals, threshold %d)", s.QName(), where(*other), fp.N, cfg.MinCloneTokens)
				out = append(out, fd)
			case fp.N >= cfg.MinCloneTokens && cfg.Similarity < 1:
				fuzzy = append(fuzzy, simBody{s: s, norm: fp.Norm, idents: fp.Idents, grams: kgrams(fp.Norm)})
			}
		}
	}
	// Near copies that are not equal, among bodies whose lengths could
	// reach the threshold.
	if len(fuzzy) > 0 {
		lo, hi := int(^uint(0)>>1), 0
		for _, b := range fuzzy {
			// 2·min/(a+b) ≥ t bounds the other's length.
			lo = min(lo, int(float64(len(b.norm))*cfg.Similarity/(2-cfg.Similarity)))
			hi = max(hi, int(float64(len(b.norm))*(2-cfg.Similarity)/cfg.Similarity)+1)
		}
		var all []simBody
		global := map[uint32]bool{}
		for _, p := range x.Files() {
			ff := facts[p]
			for _, o := range ff.File.Defs {
				if o.Receiver == "" {
					global[identID(o.Name)] = true
				}
			}
			if !judged(ff.File) {
				continue
			}
			for i, o := range ff.File.Defs {
				if !o.Kind.Callable() || i >= len(ff.Bodies) {
					continue
				}
				if n := len(ff.Bodies[i].Norm); n >= cfg.MinCloneTokens && n >= lo && n <= hi {
					all = append(all, simBody{s: o, norm: ff.Bodies[i].Norm, idents: ff.Bodies[i].Idents, grams: kgrams(ff.Bodies[i].Norm)})
				}
			}
		}
		for i, m := range nearCopies(fuzzy, all, cfg.Similarity, global, skipPair) {
			s := fuzzy[i].s
			fd := Finding{Class: ClassNearCopy, Severity: SevHigh, Symbol: s.QName(), File: s.File, Line: s.Line,
				Other: where(m.other), Weaker: s.Weaker || m.other.Weaker}
			fd.Detail = fmt.Sprintf("the body of %s is a near copy of %s: %.0f%% of their normalized tokens match in order (%d and %d tokens; threshold %.0f%%)",
				s.QName(), where(m.other), 100*m.sim, len(fuzzy[i].norm), facts[m.other.File].body(m.other).N, 100*cfg.Similarity)
			out = append(out, fd)
		}
	}
	// Parallel implementations of declared roles.
	for _, decl := range declared {
		name := declName(decl)
		if name == "" {
			continue
		}
		var owners []symbols.Symbol
		for _, s := range x.Find(name) {
			if !s.Test && s.Matches(decl) {
				owners = append(owners, s)
			}
		}
		for _, s := range added {
			if s.Test || s.Name != name || s.Matches(decl) || !judged(x.File(s.File)) {
				continue
			}
			fd := Finding{Class: ClassParallelImpl, Severity: SevHigh, Symbol: s.QName(), File: s.File, Line: s.Line, Weaker: s.Weaker}
			fd.Detail = fmt.Sprintf("the plan gives the role %s to one symbol; %s is a second definition of it", decl, s.QName())
			if len(owners) > 0 {
				fd.Other = where(owners[0])
			}
			out = append(out, fd)
		}
		if len(owners) > 1 {
			for _, s := range owners[1:] {
				if !addedKey[s.Key()] {
					continue
				}
				out = append(out, Finding{Class: ClassParallelImpl, Severity: SevHigh, Symbol: s.QName(), File: s.File, Line: s.Line,
					Other: where(owners[0]), Weaker: s.Weaker,
					Detail: fmt.Sprintf("the plan names %s once; %d definitions answer to it", decl, len(owners))})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Severity != out[j].Severity {
			return out[i].Severity == SevHigh
		}
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// declName is the bare name a declared symbol ends in.
func declName(decl string) string {
	decl = strings.TrimSuffix(strings.TrimSpace(strings.Trim(decl, "`")), "()")
	if i := strings.LastIndexAny(decl, ".:/"); i >= 0 {
		decl = decl[i+1:]
	}
	return decl
}

// skippedDir reports whether a path lies under a directory whose code is
// not the project's own: vendored, installed or test data.
func skippedDir(p string) bool {
	for _, d := range strings.Split(path.Dir(p), "/") {
		switch d {
		case "vendor", "node_modules", "testdata", "third_party", ".git", "target", "dist", "build", "__pycache__":
			return true
		}
	}
	return false
}

// treeSource is a symbols.Source over a git tree: the files in a language
// the index reads, outside skipped directories.
type treeSource struct {
	git   *gitstore.Store
	paths []string
	blobs map[string]gitstore.Hash
}

func newTreeSource(g *gitstore.Store, tree gitstore.Hash) (*treeSource, error) {
	ts := &treeSource{git: g, blobs: map[string]gitstore.Hash{}}
	var walk func(h gitstore.Hash, prefix string) error
	walk = func(h gitstore.Hash, prefix string) error {
		es, err := g.ReadTree(h)
		if err != nil {
			return err
		}
		for _, e := range es {
			p := prefix + e.Name
			if e.IsDir() {
				switch e.Name {
				case "vendor", "node_modules", "testdata", "third_party", ".git", "target", "dist", "build", "__pycache__":
					continue
				}
				if err := walk(e.Hash, p+"/"); err != nil {
					return err
				}
				continue
			}
			if e.Mode == "160000" || e.Mode == "120000" || symbols.LangOf(p) == "" {
				continue
			}
			ts.paths = append(ts.paths, p)
			ts.blobs[p] = e.Hash
		}
		return nil
	}
	if err := walk(tree, ""); err != nil {
		return nil, err
	}
	sort.Strings(ts.paths)
	return ts, nil
}

func (t *treeSource) Paths() []string { return t.paths }

func (t *treeSource) Read(p string) ([]byte, error) { return t.git.ReadBlob(t.blobs[p]) }

// StructureFacts is what the structural check judges: the whole tree at
// the judged commit and the base, and the paths the task changed.
type StructureFacts struct {
	Git      *gitstore.Store
	Base     gitstore.Hash // the base commit's tree
	Head     gitstore.Hash // the judged commit's tree
	Changed  []string      // the paths the task changed
	Declared []string      // the plan's symbols for the task
	Config   StructureConfig
	// NoCache reads and parses every file, neither reading nor writing
	// the per-blob facts cache (<common git dir>/ideate/cache/structure).
	NoCache bool
}

// StructureResult is the check's findings with what they rest on.
type StructureResult struct {
	Findings []Finding        `json:"findings"`
	Added    []symbols.Symbol `json:"added"`
	Files    int              `json:"files"`
	Weaker   bool             `json:"weaker"`
	// Unreadable names the changed files the reader could not read whole
	// ("path: complaint"): what they define was not all seen.
	Unreadable []string `json:"unreadable,omitempty"`
}

// CheckStructure indexes the tree at Head, finds the symbols the changed
// files define that the base did not (by qualified identity, so a symbol
// moved between files of one package is not new) and analyses them.
//
// A file's facts (definitions, uses, normalized bodies) are a function of
// its path and blob, so they are cached per blob under the repository's
// git directory and a task's check parses only the blobs it has not seen:
// what changed. The verdict with a cold cache and a warm one is the same.
func CheckStructure(ctx context.Context, sf StructureFacts) (*StructureResult, error) {
	src, err := newTreeSource(sf.Git, sf.Head)
	if err != nil {
		return nil, err
	}
	cache := defaultFactsCache(sf.Git)
	if sf.NoCache {
		cache = factsCache{}
	}
	// The head tree's files, then the changed files' base versions.
	files := make([]blobFile, 0, len(src.paths)+len(sf.Changed))
	for _, p := range src.paths {
		files = append(files, blobFile{p, src.blobs[p]})
	}
	var changed []string
	for _, p := range sf.Changed {
		if symbols.LangOf(p) == "" || skippedDir(p) {
			continue
		}
		changed = append(changed, p)
		if sf.Base == gitstore.ZeroHash {
			continue
		}
		e, ok, err := sf.Git.Lookup(sf.Base, strings.Split(p, "/"))
		if err != nil {
			return nil, err
		}
		if !ok || e.IsDir() || e.Mode == "160000" || e.Mode == "120000" {
			continue
		}
		files = append(files, blobFile{p, e.Hash})
	}
	all, err := loadFacts(ctx, sf.Git, cache, files)
	if err != nil {
		return nil, err
	}
	x := symbols.NewIndex()
	facts := make(map[string]*fileFacts, len(src.paths))
	for i := range src.paths {
		x.Add(all[i].File)
		facts[src.paths[i]] = all[i]
	}
	old := map[string]bool{}
	for _, ff := range all[len(src.paths):] {
		for _, s := range ff.File.Defs {
			old[s.Key()] = true
		}
	}
	// A symbol whose file was renamed or moved keeps its key when its
	// package does not change; a definition elsewhere in the base tree
	// under the same key is not new either, but reading the whole base
	// costs a second index, so only the changed files' base versions are
	// read: a key the task moved from an unchanged file cannot exist (the
	// file would have changed).
	res := &StructureResult{Files: len(x.Files()), Weaker: false}
	for _, p := range changed {
		f := x.File(p)
		if f == nil {
			continue
		}
		if f.ParseError != "" {
			res.Unreadable = append(res.Unreadable, p+": "+f.ParseError)
		}
		for _, s := range f.Defs {
			if !old[s.Key()] {
				res.Added = append(res.Added, s)
				if s.Weaker {
					res.Weaker = true
				}
			}
		}
	}
	res.Findings = analyze(x, facts, res.Added, sf.Declared, sf.Config)
	for _, f := range res.Findings {
		res.Weaker = res.Weaker || f.Weaker
	}
	if res.Findings == nil {
		res.Findings = []Finding{}
	}
	return res, nil
}

// declaredSymbols is the plan's Symbols: line of the task.
func declaredSymbols(sp *plan.Sprint, task string) []string {
	story, tk, _ := strings.Cut(task, "/")
	num := 0
	fmt.Sscanf(strings.TrimPrefix(tk, "T"), "%d", &num)
	for _, sd := range sp.StoryDirs {
		if sd.Story != story || sd.Tasks == nil {
			continue
		}
		for _, t := range sd.Tasks.Tasks {
			if t.Num == num {
				return t.Symbols
			}
		}
	}
	return nil
}

// Structure is the structural-integrity gate, asked after GREEN: at the
// task's committed HEAD, the symbols the task's diff added (judged by
// qualified identity against the base) are checked for orphans, near
// copies, duplicated helpers and parallel implementations of a declared
// role (AnalyzeStructure). A high finding FAILs; a medium one is a reason
// on a PASS. Pre-existing code never blocks a task. A changed file its
// reader could not read whole (a syntax error) is an unreadable reason
// and never a PASS: UNVERIFIABLE unless a finding already FAILs. When the
// fallback reader read an added symbol, a weaker_check reason says so.
func Structure(d Deps) Gate {
	return Func(func(ctx context.Context, in Input) (Verdict, error) {
		s, stop, err := d.openTask(ctx, "structure", in)
		if stop != nil || err != nil {
			return verdictOr(stop), err
		}
		bc, err := d.Git.ReadCommit(s.ct.BaseHash())
		if err != nil {
			return Verdict{}, err
		}
		res, err := CheckStructure(ctx, StructureFacts{Git: d.Git, Base: bc.Tree, Head: s.tree, Changed: s.committedPaths(),
			Declared: declaredSymbols(s.sprint, s.ct.Task), Config: DefaultStructure})
		if err != nil {
			return Verdict{}, err
		}
		v := s.v
		v.Result = PASS
		v.Reasons = []Reason{}
		for _, f := range res.Findings {
			v.Reasons = append(v.Reasons, f.Reason())
			if f.Severity == SevHigh {
				v.Result = FAIL
			}
		}
		// A changed file the reader could not read whole was not judged:
		// never a pass.
		for _, u := range res.Unreadable {
			p, why, _ := strings.Cut(u, ": ")
			v.Reasons = append(v.Reasons, Reason{Class: ClassUnreadable, Severity: SevHigh, Paths: []string{p},
				Detail: "could not read " + p + " whole (" + why + "), so what it defines was not judged"})
			if v.Result == PASS {
				v.Result = UNVERIFIABLE
			}
		}
		if res.Weaker {
			v.Reasons = append(v.Reasons, Reason{Class: ClassWeakerCheck, Severity: SevInfo,
				Detail: "this build has no tree-sitter (built without cgo): definitions outside Go were read by the fallback reader, so the check was weaker"})
		}
		return v, nil
	})
}
