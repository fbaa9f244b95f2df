package scaffold

import (
	"context"
	"fmt"
	"go/format"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/symbols"
)

// The default markers: a RED shim carries ShimMarker in a comment (on the
// file's first line: the whole file is a shim; on the line just above a
// definition or on its first line: that definition is), and a stub's body
// fails with StubMarker.
const (
	DefaultShimMarker = "agentic:shim"
	DefaultStubMarker = "SUB-AGENT-TODO"
)

// The actions the scaffolder takes.
const (
	Create = "create" // a new file holding stubs
	Update = "update" // stubs appended to a file, or a shim definition cut from one
	Delete = "delete" // a shim file removed
)

// MaxSource caps a source file the scaffolder or a look-up reads.
const MaxSource = symbols.MaxFile

// Input is one scaffold run over a task's worktree.
type Input struct {
	Dir string // the task's worktree
	// Paths are the worktree's files (slash-separated, from Dir): what
	// is indexed.
	Paths []string
	// Declared is the plan's Symbols: line for the task (`pkg.Name`,
	// `pkg.Type.Method`); Files its Files: line (the stubs' home).
	Declared []string
	Files    []string
	// ShimMarker and StubMarker default to the constants above.
	ShimMarker string
	StubMarker string
	// LookPath finds a language's formatter (exec.LookPath when nil); one
	// that finds none leaves the files as written.
	LookPath func(string) (string, error)
}

// Action is one change the scaffolder made: Op on Path for Symbol (the
// qualified name).
type Action struct {
	Op     string `json:"op"`
	Path   string `json:"path"`
	Symbol string `json:"symbol"`
}

// Undecided is a symbol the scaffolder left to the post-planner, with why.
type Undecided struct {
	Symbol string `json:"symbol"`
	Reason string `json:"reason"`
}

// Result is what a run did and what it left.
type Result struct {
	Actions   []Action    `json:"actions"`
	Undecided []Undecided `json:"undecided"`
	// Weaker is set when a file the run read was read by the fallback
	// reader (a build without tree-sitter).
	Weaker bool `json:"weaker"`
	// Formatted are the runs of the languages' formatters found on PATH
	// over the files written (Go's is go/format, always).
	Formatted []Formatted `json:"formatted,omitempty"`
}

// shimDef is a definition the RED worker marked, with its source text.
type shimDef struct {
	sym  symbols.Symbol
	text string // the definition's text
	file string
}

// Run scaffolds the task: every shim is deleted (a file whose first line
// carries the marker is removed; a marked definition is cut from its
// file), and every symbol the shims defined or the plan declares that is
// not defined outside a shim gets one canonical stub in the task's file
// for it: the shim's signature with a body that fails with the stub
// marker (Go panic, Python NotImplementedError, JavaScript/TypeScript
// throw, Rust todo!); a type, constant or variable keeps the shim's text.
// A symbol defined outside a shim, with a body or not, is never touched.
// A declared symbol with no shim to give its signature, a method of a
// class or impl outside Go, or a symbol with no file to go to, is left
// Undecided for the post-planner. Running it again changes nothing.
func Run(ctx context.Context, in Input) (*Result, error) {
	if in.ShimMarker == "" {
		in.ShimMarker = DefaultShimMarker
	}
	if in.StubMarker == "" {
		in.StubMarker = DefaultStubMarker
	}
	src := symbols.Dir{Root: in.Dir, List: in.Paths}
	x, err := symbols.Build(ctx, src)
	if err != nil {
		return nil, err
	}
	res := &Result{Actions: []Action{}, Undecided: []Undecided{}}
	read := map[string][]byte{}
	var shims []shimDef
	shimFiles := map[string]bool{}
	cuts := map[string][][2]int{} // file → byte ranges to cut
	for _, p := range x.Files() {
		f := x.File(p)
		if f.Test {
			continue
		}
		b, err := src.Read(p)
		if err != nil {
			return nil, err
		}
		read[p] = b
		res.Weaker = res.Weaker || f.Weaker
		whole := strings.Contains(firstLine(b), in.ShimMarker)
		for _, s := range f.Defs {
			from := docStart(b, s.Start)
			marked := whole || strings.Contains(string(b[from:s.Start]), in.ShimMarker) ||
				strings.Contains(firstLine(b[s.Start:]), in.ShimMarker)
			if !marked {
				continue
			}
			shims = append(shims, shimDef{sym: s, text: string(b[s.Start:s.End]), file: p})
			if !whole {
				cuts[p] = append(cuts[p], [2]int{from, lineEnd(b, s.End)})
			}
		}
		if whole {
			shimFiles[p] = true
		}
	}
	// What exists outside the shims.
	defined := func(match func(symbols.Symbol) bool) []symbols.Symbol {
		var out []symbols.Symbol
		for _, p := range x.Files() {
			f := x.File(p)
			if f.Test || shimFiles[p] {
				continue
			}
			for _, s := range f.Defs {
				if match(s) && !inCut(cuts[p], s.Start) {
					out = append(out, s)
				}
			}
		}
		return out
	}
	// moved is s as it will be in file: a module is its file outside Go.
	moved := func(s symbols.Symbol, file string) symbols.Symbol {
		if s.Lang != symbols.Go {
			s.Package = symbols.ModuleOf(s.Lang, file)
		}
		s.File, s.Dir = file, path.Dir(file)
		return s
	}
	type stub struct {
		file, text, qname string
		sym               symbols.Symbol
		imports           []string
	}
	var stubs []stub
	seen := map[string]bool{}
	plan := func(sh shimDef) {
		s := sh.sym
		if seen[s.Key()] {
			return
		}
		seen[s.Key()] = true
		if len(defined(func(o symbols.Symbol) bool { return o.Key() == s.Key() })) > 0 {
			return // defined elsewhere already: never touched
		}
		// Outside Go a module is its file, so the shim's copy of a symbol
		// implemented in another module has another key: a declared name
		// the shim's symbol answers to that is defined outside the shims
		// is that symbol, and is never stubbed a second time.
		if s.Lang != symbols.Go {
			for _, d := range in.Declared {
				if s.Matches(d) && len(defined(func(o symbols.Symbol) bool {
					return o.Lang == s.Lang && o.Name == s.Name && o.Receiver == s.Receiver && o.Matches(d)
				})) > 0 {
					return
				}
			}
		}
		if s.Receiver != "" && s.Lang != symbols.Go {
			res.Undecided = append(res.Undecided, Undecided{s.QName(), "a method inside a class, impl or trait body: the post-planner writes this stub"})
			return
		}
		file := homeOf(s, sh.file, in.Files, shimFiles)
		if file == "" {
			res.Undecided = append(res.Undecided, Undecided{s.QName(), "the task's Files: name no non-test file beside the shim for it"})
			return
		}
		text := sh.text
		if s.Kind.Callable() && s.HasBody() {
			text = strings.TrimRight(sh.text[:s.BodyStart-s.Start], " \t\n") + stubBody(moved(s, file), in.StubMarker)
		}
		var imps []string
		if s.Lang == symbols.Go {
			imps = goImportsUsed(read[sh.file], text)
		}
		stubs = append(stubs, stub{file: file, text: text, qname: moved(s, file).QName(), sym: moved(s, file), imports: imps})
	}
	for _, sh := range shims {
		plan(sh)
	}
	for _, d := range in.Declared {
		if len(defined(func(o symbols.Symbol) bool { return o.Matches(d) })) > 0 {
			continue
		}
		found := false
		for _, st := range stubs {
			if st.sym.Matches(d) {
				found = true
			}
		}
		for _, sh := range shims {
			if sh.sym.Matches(d) {
				found = true
			}
		}
		if !found {
			res.Undecided = append(res.Undecided, Undecided{d, "declared by the plan, defined nowhere, and no shim gives its signature: the post-planner writes this stub"})
		}
	}
	// Delete the shims, then write the stubs.
	for p := range shimFiles {
		if err := os.Remove(filepath.Join(in.Dir, filepath.FromSlash(p))); err != nil {
			return nil, apperr.Wrap(apperr.Write, err, "cannot delete the shim %s", p)
		}
		for _, sh := range shims {
			if sh.file == p {
				res.Actions = append(res.Actions, Action{Delete, p, sh.sym.QName()})
			}
		}
	}
	for p, rs := range cuts {
		b := read[p]
		sort.Slice(rs, func(i, j int) bool { return rs[i][0] > rs[j][0] })
		for _, r := range rs {
			b = append(b[:r[0]:r[0]], b[r[1]:]...)
		}
		if err := writeFile(in.Dir, p, b); err != nil {
			return nil, err
		}
		read[p] = b
		for _, sh := range shims {
			if sh.file == p {
				res.Actions = append(res.Actions, Action{Update, p, sh.sym.QName()})
			}
		}
	}
	byFile := map[string][]stub{}
	var order []string
	for _, s := range stubs {
		if byFile[s.file] == nil {
			order = append(order, s.file)
		}
		byFile[s.file] = append(byFile[s.file], s)
	}
	for _, p := range order {
		ss := byFile[p]
		b, exists := read[p]
		if !exists {
			if old, err := osproc.ReadRegular(filepath.Join(in.Dir, filepath.FromSlash(p)), MaxSource); err == nil && !shimFiles[p] {
				b, exists = old, true
			}
		}
		op := Update
		var out strings.Builder
		if exists {
			out.Write(b)
			if len(b) > 0 && b[len(b)-1] != '\n' {
				out.WriteByte('\n')
			}
		} else {
			op = Create
			out.WriteString(header(ss[0].sym))
			var imps []string
			for _, s := range ss {
				imps = append(imps, s.imports...)
			}
			out.WriteString(goImportBlock(imps))
		}
		for _, s := range ss {
			out.WriteString("\n" + s.text + "\n")
		}
		data := []byte(out.String())
		if exists && ss[0].sym.Lang == symbols.Go {
			// Appended to a Go file: the imports its signatures need.
			var imps []string
			for _, s := range ss {
				imps = append(imps, s.imports...)
			}
			data = addGoImports(data, imps)
		}
		if err := writeFile(in.Dir, p, data); err != nil {
			return nil, err
		}
		for _, s := range ss {
			res.Actions = append(res.Actions, Action{op, p, s.qname})
		}
	}
	// The files written, as the language's formatter writes them.
	var written []string
	seenW := map[string]bool{}
	for _, a := range res.Actions {
		if a.Op != Delete && !strings.HasSuffix(a.Path, ".go") && !seenW[a.Path] {
			seenW[a.Path] = true
			written = append(written, a.Path)
		}
	}
	res.Formatted = formatWritten(ctx, in.Dir, written, in.LookPath)
	// One action per (op, path, symbol): a symbol reached twice (a shim
	// and the plan) is one change, reported and logged once.
	once := map[Action]bool{}
	acts := res.Actions[:0]
	for _, a := range res.Actions {
		if !once[a] {
			once[a] = true
			acts = append(acts, a)
		}
	}
	res.Actions = acts
	return res, nil
}

// stubBody is the canonical failing body of a callable.
func stubBody(s symbols.Symbol, marker string) string {
	msg := fmt.Sprintf("%s: implement %s", marker, s.QName())
	switch s.Lang {
	case symbols.Go:
		return fmt.Sprintf(" {\n\tpanic(%q)\n}", msg)
	case symbols.Python:
		return fmt.Sprintf("\n    raise NotImplementedError(%q)", msg)
	case symbols.JavaScript, symbols.TypeScript:
		return fmt.Sprintf(" {\n  throw new Error(%q);\n}", msg)
	case symbols.Rust:
		return fmt.Sprintf(" {\n    todo!(%q)\n}", msg)
	}
	return ""
}

// header starts a new file for s: Go's package clause.
func header(s symbols.Symbol) string {
	if s.Lang == symbols.Go {
		return "package " + s.Package + "\n"
	}
	return ""
}

// homeOf picks the file a stub goes to: a non-test file of the task's
// Files in the shim's directory and language, preferring one named after
// the symbol; without one, the shim file itself when only a definition in
// it was the shim.
func homeOf(s symbols.Symbol, shimFile string, files []string, shimFiles map[string]bool) string {
	var cands []string
	for _, f := range files {
		f = strings.Trim(f, "`")
		if strings.ContainsAny(f, "*?[") || symbols.IsTestFile(f) || symbols.LangOf(f) != s.Lang || path.Dir(f) != path.Dir(shimFile) || shimFiles[f] {
			continue
		}
		cands = append(cands, f)
	}
	want := strings.ToLower(s.Name)
	for _, f := range cands {
		base := strings.ToLower(strings.TrimSuffix(path.Base(f), path.Ext(f)))
		if base == want || strings.ReplaceAll(base, "_", "") == strings.ReplaceAll(want, "_", "") {
			return f
		}
	}
	if len(cands) > 0 {
		return cands[0]
	}
	if !shimFiles[shimFile] {
		return shimFile
	}
	return ""
}

func firstLine(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// docStart is the start of the comment lines (and decorators' lines are
// part of the definition already) just above off.
func docStart(b []byte, off int) int {
	start := off
	for {
		ls := strings.LastIndexByte(string(b[:start]), '\n')
		if ls < 0 {
			return start
		}
		prev := strings.LastIndexByte(string(b[:ls]), '\n') + 1
		line := strings.TrimSpace(string(b[prev:ls]))
		if strings.HasPrefix(line, "//") || strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "#[") || strings.HasPrefix(line, "/*") || strings.HasPrefix(line, "*") {
			start = prev
			continue
		}
		return start
	}
}

// lineEnd is just past the newline that ends the line holding off-1.
func lineEnd(b []byte, off int) int {
	for off < len(b) && b[off] != '\n' {
		off++
	}
	if off < len(b) {
		off++
	}
	return off
}

func inCut(rs [][2]int, off int) bool {
	for _, r := range rs {
		if off >= r[0] && off < r[1] {
			return true
		}
	}
	return false
}

// writeFile replaces a file of the worktree; Go source is written as
// gofmt writes it (go/format), so the scaffold never leaves the gate
// matrix's `gofmt -l` something to list. Source go/format cannot parse is
// written as it is, for the gates to judge.
func writeFile(dir, p string, b []byte) error {
	if strings.HasSuffix(p, ".go") {
		if f, err := format.Source(b); err == nil {
			b = f
		}
	}
	return atomicfile.Replace(filepath.Join(dir, filepath.FromSlash(p)), b, atomicfile.Options{})
}
