//go:build cgo

package symbols

import (
	"strings"
	"unsafe"

	ts "github.com/tree-sitter/go-tree-sitter"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspy "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// treeSitter is true: Python, JavaScript, TypeScript and Rust are read
// through tree-sitter's grammars.
const treeSitter = true

// language is the grammar for a file; built on first use, not at init.
func language(lang Lang, p string) *ts.Language {
	var ptr unsafe.Pointer
	switch lang {
	case Python:
		ptr = tspy.Language()
	case JavaScript:
		ptr = tsjs.Language()
	case TypeScript:
		if strings.HasSuffix(p, ".tsx") {
			ptr = tsts.LanguageTSX()
		} else {
			ptr = tsts.LanguageTypescript()
		}
	case Rust:
		ptr = tsrust.Language()
	default:
		return nil
	}
	return ts.NewLanguage(ptr)
}

// readDefs parses src with tree-sitter and walks the root's named
// children (and class, impl and trait bodies for methods). Parser and
// tree are closed here: the binding has no finalizers.
func readDefs(lang Lang, p string, src []byte, _ []Token) ([]def, bool, string) {
	l := language(lang, p)
	if l == nil {
		return nil, true, "no grammar"
	}
	parser := ts.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(l); err != nil {
		return nil, true, err.Error()
	}
	tree := parser.Parse(src, nil)
	if tree == nil {
		return nil, true, "tree-sitter returned no tree"
	}
	defer tree.Close()
	root := tree.RootNode()
	w := &tsWalker{lang: lang, src: src}
	w.container(root, "", false)
	perr := ""
	if root.HasError() {
		perr = "the file has syntax errors; definitions around them may be missing"
	}
	return w.out, false, perr
}

type tsWalker struct {
	lang Lang
	src  []byte
	out  []def
}

func (w *tsWalker) text(n *ts.Node) string {
	if n == nil {
		return ""
	}
	return n.Utf8Text(w.src)
}

func named(n *ts.Node) []*ts.Node {
	c := n.NamedChildCount()
	out := make([]*ts.Node, 0, c)
	for i := uint(0); i < c; i++ {
		out = append(out, n.NamedChild(i))
	}
	return out
}

// container walks the definitions directly in n: a module's top level,
// or a class, impl or trait body (recv names the type; inClass is set).
func (w *tsWalker) container(n *ts.Node, recv string, inClass bool) {
	decorated := false
	for _, c := range named(n) {
		switch c.Kind() {
		case "attribute_item", "decorator":
			decorated = true
			continue
		case "comment", "line_comment", "block_comment":
			continue
		}
		w.item(c, c, recv, inClass, false, decorated)
		decorated = false
	}
}

// item reads one definition node; outer is the node whose range the
// definition takes (an export or decorated wrapper).
func (w *tsWalker) item(c, outer *ts.Node, recv string, inClass, exported, decorated bool) {
	add := func(nameNode *ts.Node, kind Kind, body *ts.Node) {
		if nameNode == nil {
			return
		}
		name := w.text(nameNode)
		d := def{name: name, recv: recv, kind: kind, start: int(outer.StartByte()), end: int(outer.EndByte()),
			nameOff: int(nameNode.StartByte()), exported: exported, decorated: decorated}
		if body != nil {
			d.bodyStart, d.bodyEnd = int(body.StartByte()), int(body.EndByte())
		}
		switch w.lang {
		case Python:
			d.exported = !strings.HasPrefix(name, "_")
		case Rust:
			d.exported = exported || hasChildKind(c, "visibility_modifier")
		case JavaScript, TypeScript:
			if inClass {
				d.exported = !strings.HasPrefix(name, "#") && !hasChildKind(c, "accessibility_modifier") ||
					strings.Contains(w.text(firstChildKind(c, "accessibility_modifier")), "public")
			}
		}
		w.out = append(w.out, d)
	}
	fn := Func
	if recv != "" {
		fn = Method
	}
	switch c.Kind() {
	// Python
	case "function_definition":
		if inClass || recv == "" {
			add(c.ChildByFieldName("name"), fn, c.ChildByFieldName("body"))
		}
	case "class_definition":
		if inClass {
			return
		}
		name := c.ChildByFieldName("name")
		add(name, Class, nil)
		if b := c.ChildByFieldName("body"); b != nil && name != nil {
			w.container(b, w.text(name), true)
		}
	case "decorated_definition":
		if d := c.ChildByFieldName("definition"); d != nil {
			w.item(d, outer, recv, inClass, exported, true)
		}
	case "expression_statement":
		if w.lang != Python || inClass {
			return
		}
		for _, a := range named(c) {
			if a.Kind() != "assignment" {
				continue
			}
			if l := a.ChildByFieldName("left"); l != nil && l.Kind() == "identifier" {
				k := Var
				if t := w.text(l); strings.ToUpper(t) == t {
					k = Const
				}
				add(l, k, nil)
			}
		}
	// JavaScript and TypeScript
	case "function_declaration", "generator_function_declaration":
		add(c.ChildByFieldName("name"), Func, c.ChildByFieldName("body"))
	case "class_declaration", "abstract_class_declaration", "class":
		if inClass {
			return
		}
		name := c.ChildByFieldName("name")
		if hasChildKind(c, "decorator") {
			decorated = true
		}
		add(name, Class, nil)
		if b := c.ChildByFieldName("body"); b != nil && name != nil {
			w.container(b, w.text(name), true)
		}
	case "method_definition":
		if inClass {
			add(c.ChildByFieldName("name"), Method, c.ChildByFieldName("body"))
		}
	case "public_field_definition", "field_definition":
		if !inClass {
			return
		}
		v := c.ChildByFieldName("value")
		name := c.ChildByFieldName("name")
		if name == nil {
			name = c.ChildByFieldName("property")
		}
		if v != nil && (v.Kind() == "arrow_function" || v.Kind() == "function_expression") {
			add(name, Method, v.ChildByFieldName("body"))
		}
	case "interface_declaration":
		add(c.ChildByFieldName("name"), Interface, nil)
	case "type_alias_declaration":
		add(c.ChildByFieldName("name"), Type, nil)
	case "enum_declaration":
		add(c.ChildByFieldName("name"), Enum, nil)
	case "lexical_declaration", "variable_declaration":
		if inClass {
			return
		}
		kind := Var
		if strings.HasPrefix(w.text(c), "const") {
			kind = Const
		}
		for _, v := range named(c) {
			if v.Kind() != "variable_declarator" {
				continue
			}
			name := v.ChildByFieldName("name")
			if name == nil || name.Kind() != "identifier" {
				continue
			}
			if val := v.ChildByFieldName("value"); val != nil && (val.Kind() == "arrow_function" || val.Kind() == "function_expression" || val.Kind() == "function") {
				add(name, Func, val.ChildByFieldName("body"))
				continue
			}
			add(name, kind, nil)
		}
	case "export_statement":
		if hasChildKind(c, "decorator") {
			decorated = true
		}
		if d := c.ChildByFieldName("declaration"); d != nil {
			w.item(d, outer, recv, inClass, true, decorated)
			return
		}
		for _, d := range named(c) {
			switch d.Kind() {
			case "function_declaration", "generator_function_declaration", "class_declaration", "class",
				"abstract_class_declaration", "lexical_declaration", "variable_declaration":
				w.item(d, outer, recv, inClass, true, decorated)
			}
		}
	// Rust
	case "function_item":
		add(c.ChildByFieldName("name"), fn, c.ChildByFieldName("body"))
	case "function_signature_item":
		if recv != "" {
			add(c.ChildByFieldName("name"), Method, nil)
		}
	case "struct_item", "union_item":
		add(c.ChildByFieldName("name"), Type, nil)
	case "enum_item":
		add(c.ChildByFieldName("name"), Enum, nil)
	case "type_item":
		add(c.ChildByFieldName("name"), Type, nil)
	case "const_item":
		add(c.ChildByFieldName("name"), Const, nil)
	case "static_item":
		add(c.ChildByFieldName("name"), Var, nil)
	case "trait_item":
		if inClass {
			return
		}
		name := c.ChildByFieldName("name")
		add(name, Trait, nil)
		if b := c.ChildByFieldName("body"); b != nil && name != nil {
			w.container(b, w.text(name), true)
		}
	case "impl_item":
		if inClass {
			return
		}
		t := c.ChildByFieldName("type")
		name := rustTypeName(w, t)
		if b := c.ChildByFieldName("body"); b != nil && name != "" {
			w.container(b, name, true)
		}
	}
}

// rustTypeName is an impl's self type without generics or a path.
func rustTypeName(w *tsWalker, t *ts.Node) string {
	for t != nil {
		switch t.Kind() {
		case "generic_type":
			t = t.ChildByFieldName("type")
		case "scoped_type_identifier":
			t = t.ChildByFieldName("name")
		case "reference_type", "pointer_type":
			t = t.ChildByFieldName("type")
		default:
			return w.text(t)
		}
	}
	return ""
}

func hasChildKind(n *ts.Node, kind string) bool { return firstChildKind(n, kind) != nil }

func firstChildKind(n *ts.Node, kind string) *ts.Node {
	c := n.ChildCount()
	for i := uint(0); i < c; i++ {
		if ch := n.Child(i); ch != nil && ch.Kind() == kind {
			return ch
		}
	}
	return nil
}
