package scaffold

import (
	"context"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/symbols"
)

// WorkTreeFiles lists the files of the working tree at dir that the
// symbol index reads: tracked and untracked, ignored ones left out (the
// git CLI's own view, in its own process group).
func WorkTreeFiles(ctx context.Context, g *gitstore.Store, dir string) ([]string, error) {
	out, err := g.RunGit(ctx, dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate")
	if err != nil {
		return nil, err
	}
	var list []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" && symbols.LangOf(p) != "" && !skipped(p) {
			list = append(list, p)
		}
	}
	sort.Strings(list)
	return list, nil
}

// IndexWorkTree indexes the working tree at dir as it is on disk.
func IndexWorkTree(ctx context.Context, g *gitstore.Store, dir string) (*symbols.Index, error) {
	list, err := WorkTreeFiles(ctx, g, dir)
	if err != nil {
		return nil, err
	}
	return symbols.Build(ctx, symbols.Dir{Root: dir, List: list})
}

// skipped reports whether p lies under a directory of code that is not
// the project's own.
func skipped(p string) bool {
	for _, d := range strings.Split(p, "/") {
		switch d {
		case "vendor", "node_modules", "testdata", "third_party", "target", "__pycache__":
			return true
		}
	}
	return false
}

// goImportsUsed is the import specs of a Go file whose package name the
// text uses (`name.`).
func goImportsUsed(file []byte, text string) []string {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, "", file, parser.ImportsOnly)
	if err != nil || af == nil {
		return nil
	}
	var out []string
	for _, im := range af.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		name := p[strings.LastIndexByte(p, '/')+1:]
		spec := strconv.Quote(p)
		if im.Name != nil {
			name = im.Name.Name
			spec = name + " " + spec
		}
		if strings.Contains(text, name+".") {
			out = append(out, spec)
		}
	}
	return out
}

// goImportBlock writes the import declaration for specs ("" for none).
func goImportBlock(specs []string) string {
	seen := map[string]bool{}
	var uniq []string
	for _, s := range specs {
		if !seen[s] {
			seen[s] = true
			uniq = append(uniq, s)
		}
	}
	sort.Strings(uniq)
	switch len(uniq) {
	case 0:
		return ""
	case 1:
		return "\nimport " + uniq[0] + "\n"
	}
	return "\nimport (\n\t" + strings.Join(uniq, "\n\t") + "\n)\n"
}

// addGoImports adds to a Go file the import specs (as goImportsUsed
// gives them: `"path"` or `name "path"`) it does not have yet: into its
// first parenthesized import block, else after its last single import,
// else after the package clause; then formats the file (go/format, which
// also sorts the block). A spec whose name the file already gives to
// another path is left out (the stub would then not build, and says so
// to the compiler rather than importing the wrong package silently).
// A file that does not parse is returned as it was.
func addGoImports(src []byte, specs []string) []byte {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil || af == nil {
		return src
	}
	have := map[string]string{} // local name → path
	for _, im := range af.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		name := p[strings.LastIndexByte(p, '/')+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		have[name] = p
	}
	var add []string
	seen := map[string]bool{}
	for _, spec := range specs {
		name, quoted, ok := strings.Cut(spec, " ")
		if !ok {
			quoted, name = spec, ""
		}
		p, err := strconv.Unquote(quoted)
		if err != nil || seen[spec] {
			continue
		}
		seen[spec] = true
		if name == "" {
			name = p[strings.LastIndexByte(p, '/')+1:]
		}
		if _, ok := have[name]; ok {
			continue // the same package already, or another one under this name
		}
		have[name] = p
		add = append(add, spec)
	}
	if len(add) == 0 {
		return src
	}
	sort.Strings(add)
	tf := fset.File(af.Package)
	var at int
	var text string
	var block, single *ast.GenDecl
	for _, d := range af.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		if g.Lparen.IsValid() && block == nil {
			block = g
		} else if !g.Lparen.IsValid() {
			single = g
		}
	}
	switch {
	case block != nil:
		at = tf.Offset(block.Lparen) + 1
		text = "\n\t" + strings.Join(add, "\n\t")
	case single != nil:
		at = tf.Offset(single.End())
		text = "\n\nimport (\n\t" + strings.Join(add, "\n\t") + "\n)"
	default:
		at = tf.Offset(af.Name.End())
		text = "\n" + goImportBlock(add)
		text = strings.TrimSuffix(text, "\n")
	}
	out := make([]byte, 0, len(src)+len(text))
	out = append(append(append(out, src[:at]...), text...), src[at:]...)
	if f, err := format.Source(out); err == nil {
		return f
	}
	return out
}
