package main

import (
	"strings"
	"unsafe"

	"github.com/ideate/git-ideate/internal/symbols"
	ts "github.com/tree-sitter/go-tree-sitter"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspy "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// language is the grammar for a file; built on first use, not at init.
func language(lang symbols.Lang, p string) *ts.Language {
	var ptr unsafe.Pointer
	switch lang {
	case symbols.Python:
		ptr = tspy.Language()
	case symbols.JavaScript:
		ptr = tsjs.Language()
	case symbols.TypeScript:
		if strings.HasSuffix(p, ".tsx") {
			ptr = tsts.LanguageTSX()
		} else {
			ptr = tsts.LanguageTypescript()
		}
	case symbols.Rust:
		ptr = tsrust.Language()
	default:
		return nil
	}
	return ts.NewLanguage(ptr)
}

// readDefs parses src with tree-sitter and walks the root's named
// children (and class, impl and trait bodies for methods). Parser and
// tree are closed here: the binding has no finalizers.
func readDefs(req symbols.HelperRequest) symbols.HelperReply {
	lang, src := req.Lang, req.Src
	rep := symbols.HelperReply{V: symbols.HelperProtocol}
	l := language(lang, req.Path)
	if l == nil {
		rep.Error = "no grammar for " + string(lang)
		return rep
	}
	parser := ts.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(l); err != nil {
		rep.Error = err.Error()
		return rep
	}
	tree := parser.Parse(src, nil)
	if tree == nil {
		rep.Error = "tree-sitter returned no tree"
		return rep
	}
	defer tree.Close()
	root := tree.RootNode()
	w := &tsWalker{lang: lang, src: src}
	w.container(root, "", false)
	if root.HasError() {
		rep.ParseError = "the file has syntax errors; definitions around them may be missing"
	}
	rep.Defs = w.out
	if rep.Defs == nil {
		rep.Defs = []symbols.HelperDef{}
	}
	return rep
}

type tsWalker struct {
	lang symbols.Lang
	src  []byte
	out  []symbols.HelperDef
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
	add := func(nameNode *ts.Node, kind symbols.Kind, body *ts.Node) {
		if nameNode == nil {
			return
		}
		name := w.text(nameNode)
		d := symbols.HelperDef{Name: name, Recv: recv, Kind: kind, Start: int(outer.StartByte()), End: int(outer.EndByte()),
			NameOff: int(nameNode.StartByte()), Exported: exported, Decorated: decorated}
		if body != nil {
			d.BodyStart, d.BodyEnd = int(body.StartByte()), int(body.EndByte())
		}
		switch w.lang {
		case symbols.Python:
			d.Exported = !strings.HasPrefix(name, "_")
		case symbols.Rust:
			d.Exported = exported || hasChildKind(c, "visibility_modifier")
		case symbols.JavaScript, symbols.TypeScript:
			if inClass {
				d.Exported = !strings.HasPrefix(name, "#") && !hasChildKind(c, "accessibility_modifier") ||
					strings.Contains(w.text(firstChildKind(c, "accessibility_modifier")), "public")
			}
		}
		w.out = append(w.out, d)
	}
	fn := symbols.Func
	if recv != "" {
		fn = symbols.Method
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
		add(name, symbols.Class, nil)
		if b := c.ChildByFieldName("body"); b != nil && name != nil {
			w.container(b, w.text(name), true)
		}
	case "decorated_definition":
		if d := c.ChildByFieldName("definition"); d != nil {
			w.item(d, outer, recv, inClass, exported, true)
		}
	case "expression_statement":
		if w.lang != symbols.Python || inClass {
			return
		}
		for _, a := range named(c) {
			if a.Kind() != "assignment" {
				continue
			}
			if l := a.ChildByFieldName("left"); l != nil && l.Kind() == "identifier" {
				k := symbols.Var
				if t := w.text(l); strings.ToUpper(t) == t {
					k = symbols.Const
				}
				add(l, k, nil)
			}
		}
	// JavaScript and TypeScript
	case "function_declaration", "generator_function_declaration":
		add(c.ChildByFieldName("name"), symbols.Func, c.ChildByFieldName("body"))
	case "class_declaration", "abstract_class_declaration", "class":
		if inClass {
			return
		}
		name := c.ChildByFieldName("name")
		if hasChildKind(c, "decorator") {
			decorated = true
		}
		add(name, symbols.Class, nil)
		if b := c.ChildByFieldName("body"); b != nil && name != nil {
			w.container(b, w.text(name), true)
		}
	case "method_definition":
		if inClass {
			add(c.ChildByFieldName("name"), symbols.Method, c.ChildByFieldName("body"))
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
			add(name, symbols.Method, v.ChildByFieldName("body"))
		}
	case "interface_declaration":
		add(c.ChildByFieldName("name"), symbols.Interface, nil)
	case "type_alias_declaration":
		add(c.ChildByFieldName("name"), symbols.Type, nil)
	case "enum_declaration":
		add(c.ChildByFieldName("name"), symbols.Enum, nil)
	case "lexical_declaration", "variable_declaration":
		if inClass {
			return
		}
		kind := symbols.Var
		if strings.HasPrefix(w.text(c), "const") {
			kind = symbols.Const
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
				add(name, symbols.Func, val.ChildByFieldName("body"))
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
			add(c.ChildByFieldName("name"), symbols.Method, nil)
		}
	case "struct_item", "union_item":
		add(c.ChildByFieldName("name"), symbols.Type, nil)
	case "enum_item":
		add(c.ChildByFieldName("name"), symbols.Enum, nil)
	case "type_item":
		add(c.ChildByFieldName("name"), symbols.Type, nil)
	case "const_item":
		add(c.ChildByFieldName("name"), symbols.Const, nil)
	case "static_item":
		add(c.ChildByFieldName("name"), symbols.Var, nil)
	case "trait_item":
		if inClass {
			return
		}
		name := c.ChildByFieldName("name")
		add(name, symbols.Trait, nil)
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
