package gates

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/symbols"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// MutantEnv is the environment variable that switches one mutant of a
// schema copy on: its value is the mutant's number. Unset, the copy
// behaves as the commit it was made from.
const MutantEnv = "IDEATE_MUTANT"

// bodyTarget is one body of a file to guard: the symbol whose body it is
// and the number of the mutant that replaces it with a zero-value return.
type bodyTarget struct {
	Sym symbols.Symbol
	ID  int
	// Zero is the value the guard returns outside Go (zeroValues); Go
	// reads its own from the result types.
	Zero string
}

// zeroValues lists the zero values a symbol's mutants return, one mutant
// each: Go's is exact (one, read from the result types by goSchema); an
// annotated Python or TypeScript return type gives one; without an
// annotation a dynamic language leaves None/undefined and 0 open.
func zeroValues(s symbols.Symbol) []string {
	switch s.Lang {
	case symbols.Go:
		return []string{""}
	case symbols.Python:
		if z, ok := pyZero(s.Sig); ok {
			return []string{z}
		}
		return []string{"None", "0"}
	case symbols.TypeScript:
		if z, ok := tsZero(s.Sig); ok {
			return []string{z}
		}
		return []string{"undefined as any", "0 as any"}
	}
	return []string{"undefined", "0"}
}

// mutantSchema rewrites src so that the body of each target starts with a
// guard returning its zero value when MutantEnv holds the target's number:
// every mutant of a file lives in one copy (a mutant schema), so a
// compiled language builds once for all of them. It returns the new text
// and the targets it could not guard, with why.
func mutantSchema(p string, src []byte, targets []bodyTarget) ([]byte, map[int]string, error) {
	if symbols.LangOf(p) == symbols.Go {
		return goSchema(p, src, targets)
	}
	return textSchema(p, src, targets)
}

type insertion struct {
	off  int
	text string
}

func applyInsertions(src []byte, ins []insertion) []byte {
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].off < ins[j].off })
	var b bytes.Buffer
	last := 0
	for _, x := range ins {
		b.Write(src[last:x.off])
		b.WriteString(x.text)
		last = x.off
	}
	b.Write(src[last:])
	return b.Bytes()
}

// goMutantImport is the name the guard's import of package os takes in a
// rewritten Go file: one no program uses, so it clashes with nothing.
const goMutantImport = "ideatemutantos"

// goSchema guards Go function and method bodies. The standard parser
// finds each body (the declaration whose opening brace is the symbol's
// BodyStart) and its result types; the guard returns the zero value of
// each result, written from the result's own type text (`0`, `""`,
// `false`, `nil`, else `*new(T)`, which is the zero value of any T,
// generic parameters included). The file gains an import of os under a
// name of its own; go/format then checks and formats the result.
func goSchema(p string, src []byte, targets []bodyTarget) ([]byte, map[int]string, error) {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", p, err)
	}
	tf := fset.File(af.Package)
	off := func(pos token.Pos) int { return tf.Offset(pos) }
	byBody := map[int]*ast.FuncDecl{}
	for _, d := range af.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			byBody[off(fd.Body.Lbrace)] = fd
		}
	}
	skipped := map[int]string{}
	var ins []insertion
	for _, t := range targets {
		fd := byBody[t.Sym.BodyStart]
		if fd == nil {
			skipped[t.ID] = "its body was not found by the Go parser"
			continue
		}
		var zeros []string
		if fd.Type.Results != nil {
			for _, f := range fd.Type.Results.List {
				z := goZero(string(src[off(f.Type.Pos()):off(f.Type.End())]), f.Type)
				n := len(f.Names)
				if n == 0 {
					n = 1
				}
				for i := 0; i < n; i++ {
					zeros = append(zeros, z)
				}
			}
		}
		guard := fmt.Sprintf("\n\tif %s.Getenv(%q) == %q {\n\t\treturn %s\n\t}\n", goMutantImport, MutantEnv, strconv.Itoa(t.ID), strings.Join(zeros, ", "))
		ins = append(ins, insertion{off: off(fd.Body.Lbrace) + 1, text: guard})
	}
	if len(ins) == 0 {
		return src, skipped, nil
	}
	// The import goes right after the package clause: imports precede
	// every other declaration, and a file may hold several import decls.
	ins = append(ins, insertion{off: off(af.Name.End()), text: fmt.Sprintf("\n\nimport %s %q\n", goMutantImport, "os")})
	out := applyInsertions(src, ins)
	formatted, err := format.Source(out)
	if err != nil {
		return nil, nil, fmt.Errorf("rewrite %s: %w", p, err)
	}
	return formatted, skipped, nil
}

// goZero is the zero value of a Go result type, from its text.
func goZero(text string, t ast.Expr) string {
	switch x := t.(type) {
	case *ast.Ident:
		switch x.Name {
		case "string":
			return `""`
		case "bool":
			return "false"
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
			"float32", "float64", "complex64", "complex128", "byte", "rune":
			return "0"
		case "error", "any":
			return "nil"
		}
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType:
		return "nil"
	case *ast.ArrayType:
		if x.Len == nil {
			return "nil"
		}
	}
	return "*new(" + text + ")"
}

var (
	pyReturnType = textfmt.Regexp(`->\s*([A-Za-z_][\w.]*)(\[.*\])?\s*:?\s*$`)
	tsReturnType = textfmt.Regexp(`\)\s*:\s*([^={]+?)\s*(=>)?\s*$`)
)

// textSchema guards the bodies of Python, JavaScript and TypeScript
// callables at the byte ranges the symbol index gives (tree-sitter's
// where the build has it): Python gets `if __import__("os").environ…:
// return <zero>` as the block's first statement, the brace languages
// `if (globalThis.process?.env?.…) return <zero>;` after the opening
// brace, each returning its target's Zero (zeroValues).
func textSchema(p string, src []byte, targets []bodyTarget) ([]byte, map[int]string, error) {
	lang := symbols.LangOf(p)
	skipped := map[int]string{}
	var ins []insertion
	for _, t := range targets {
		s := t.Sym
		if !s.HasBody() || s.BodyEnd > len(src) {
			skipped[t.ID] = "the symbol index gives it no body"
			continue
		}
		id := strconv.Itoa(t.ID)
		switch lang {
		case symbols.Python:
			// The block's first statement starts a line of its own:
			// the guard goes before it with the same indentation.
			ls := bytes.LastIndexByte(src[:s.BodyStart], '\n') + 1
			indent := src[ls:s.BodyStart]
			if len(bytes.TrimLeft(indent, " \t")) != 0 {
				skipped[t.ID] = "its body is on the line of its def"
				continue
			}
			ins = append(ins, insertion{off: s.BodyStart, text: fmt.Sprintf("if __import__(\"os\").environ.get(%q) == %q:\n%s    return %s\n%s",
				MutantEnv, id, indent, t.Zero, indent)})
		case symbols.JavaScript, symbols.TypeScript:
			if src[s.BodyStart] != '{' {
				skipped[t.ID] = "its body is an expression, not a block"
				continue
			}
			ins = append(ins, insertion{off: s.BodyStart + 1, text: fmt.Sprintf(" if (globalThis.process?.env?.%s === %q) return %s;",
				MutantEnv, id, t.Zero)})
		default:
			skipped[t.ID] = "no zero-value rewrite for " + string(lang)
		}
	}
	return applyInsertions(src, ins), skipped, nil
}

// pyZero is the zero value of an annotated Python return type; false
// when there is no annotation.
func pyZero(sig string) (string, bool) {
	m := pyReturnType().FindStringSubmatch(strings.TrimSpace(sig))
	if m == nil {
		return "", false
	}
	switch m[1] {
	case "int":
		return "0", true
	case "float":
		return "0.0", true
	case "str":
		return `""`, true
	case "bool":
		return "False", true
	case "bytes":
		return `b""`, true
	case "list", "List":
		return "[]", true
	case "dict", "Dict":
		return "{}", true
	case "set", "Set":
		return "set()", true
	case "tuple", "Tuple":
		return "()", true
	}
	return "None", true
}

// tsZero is the zero value of an annotated TypeScript return type; false
// when there is no annotation.
func tsZero(sig string) (string, bool) {
	m := tsReturnType().FindStringSubmatch(strings.TrimSpace(sig))
	if m == nil {
		return "", false
	}
	t := strings.TrimSpace(m[1])
	switch {
	case t == "number":
		return "0", true
	case t == "string":
		return `""`, true
	case t == "boolean":
		return "false", true
	case t == "bigint":
		return "0n", true
	case strings.HasSuffix(t, "[]"), strings.HasPrefix(t, "Array<"):
		return "[] as any", true
	case t == "void":
		return "", true
	}
	return "undefined as any", true
}
