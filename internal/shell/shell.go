package shell

import (
	"bytes"
	"path"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A Script is what one command line runs.
type Script struct {
	// Commands are the simple commands, in the order they appear, with
	// the commands of substitutions, function bodies (at their calls),
	// `sh -c` texts and eval'd text among them. A redirection of a
	// compound command ({ …; } > f) is a Command without Args.
	Commands []Command
	// Unresolved says what of the line as a whole cannot be told (it
	// does not parse, it nests too deep).
	Unresolved []string
	// Err is set when the line itself does not parse as Bash (a shell
	// would refuse it too).
	Err error
}

// A Command is one simple command that will run.
type Command struct {
	// Args are the words with the quoting removed, the wrappers looked
	// through: Args[0] is the program. A word built by an expansion keeps
	// its source text and is not Exact.
	Args  []string
	Exact []bool
	// Words are the command as written, quoting removed: its prefix
	// assignments, wrappers and arguments.
	Words []string
	// Wrappers are the programs looked through to reach Args[0]
	// (timeout, env, sudo, …), outermost first.
	Wrappers []string
	// Env holds the NAME=value assignments in force for the command:
	// its prefixes, env's, and those made earlier on the line.
	Env    []string
	Redirs []Redirect
	// Dir is where the command runs, relative to where the line starts
	// ("." there) or absolute, as far as cd can be followed; DirKnown is
	// false once it cannot.
	Dir      string
	DirKnown bool
	// MoreArgs: the program gets further arguments from its input
	// (xargs, find -exec).
	MoreArgs bool
	// Unresolved says what of this command cannot be told from the text.
	Unresolved []string
}

// A Redirect is one redirection of a command.
type Redirect struct {
	Op    string // ">", ">>", ">|", "&>", "&>>", "<>", "<", ">&", "<&", "<<", "<<-", "<<<"
	Fd    string // the descriptor written before Op ("2" in 2>f), "" when none
	Path  string // the file, quoting removed; "" for a descriptor or here-document
	Exact bool   // Path is a literal
	Write bool   // Path is opened for writing
}

// Program is the base name of the program the command runs, "" when it
// has none.
func (c *Command) Program() string {
	if len(c.Args) == 0 {
		return ""
	}
	return path.Base(c.Args[0])
}

// Problems lists everything the script cannot resolve, its own and its
// commands', without repeats.
func (s *Script) Problems() []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range s.Unresolved {
		add(p)
	}
	for _, c := range s.Commands {
		for _, p := range c.Unresolved {
			add(p)
		}
	}
	return out
}

// maxDepth bounds the nesting of shells, eval and function calls.
const maxDepth = 6

// Read reads a Bash command line. It never fails: what it cannot read
// is in Script.Unresolved.
func Read(line string) *Script {
	s := &Script{}
	w := &walker{s: s, funcs: map[string]*syntax.Stmt{}, dir: ".", known: true}
	w.text(line, 0)
	return s
}

type walker struct {
	s     *Script
	funcs map[string]*syntax.Stmt
	env   []string
	dir   string
	known bool
}

func (w *walker) unresolved(why string) {
	w.s.Unresolved = append(w.s.Unresolved, why)
}

// text parses and walks shell text at a nesting depth.
func (w *walker) text(src string, depth int) {
	if depth > maxDepth {
		w.unresolved("shells, eval or functions nested too deep")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		if depth == 0 {
			w.s.Err = err
		}
		w.unresolved("the line does not parse as Bash: " + err.Error())
		return
	}
	w.stmts(f.Stmts, depth)
}

func (w *walker) stmts(list []*syntax.Stmt, depth int) {
	for _, st := range list {
		dir, known := w.dir, w.known
		w.stmt(st, depth)
		// After a && or || list that moved, whether it moved depends on
		// how its commands ended.
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) && (w.dir != dir || w.known != known) {
			w.known = false
		}
	}
}

// scoped walks fn in a copy of the shell state (a subshell, a pipeline's
// side): its cd and assignments do not outlive it.
func (w *walker) scoped(fn func()) {
	dir, known, env := w.dir, w.known, len(w.env)
	fn()
	w.dir, w.known, w.env = dir, known, w.env[:env]
}

// maybe walks fn as code that may or may not run (a branch, a loop
// body): a cd there leaves the directory unknown after it.
func (w *walker) maybe(fn func()) {
	dir, known := w.dir, w.known
	fn()
	if w.dir != dir || w.known != known {
		w.known = false
	}
}

func (w *walker) stmt(st *syntax.Stmt, depth int) {
	if st == nil {
		return
	}
	if st.Background {
		st2 := *st
		st2.Background = false
		w.scoped(func() { w.stmt(&st2, depth) })
		return
	}
	redirs := w.redirects(st.Redirs, depth)
	switch c := st.Cmd.(type) {
	case nil:
		if len(redirs) > 0 {
			w.emit(Command{Redirs: redirs})
		}
	case *syntax.CallExpr:
		w.call(c, redirs, st, depth)
	default:
		if len(redirs) > 0 {
			w.emit(Command{Redirs: redirs})
		}
		w.compound(st.Cmd, depth)
	}
}

func (w *walker) compound(cmd syntax.Command, depth int) {
	switch c := cmd.(type) {
	case *syntax.Block:
		w.stmts(c.Stmts, depth)
	case *syntax.Subshell:
		w.scoped(func() { w.stmts(c.Stmts, depth) })
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			w.scoped(func() { w.stmt(c.X, depth) })
			w.scoped(func() { w.stmt(c.Y, depth) })
		case syntax.AndStmt:
			w.stmt(c.X, depth)
			w.stmt(c.Y, depth)
		default: // ||: Y runs where X may have failed half-way
			dir, known := w.dir, w.known
			w.stmt(c.X, depth)
			if w.dir != dir || w.known != known {
				w.known = false
			}
			w.stmt(c.Y, depth)
		}
	case *syntax.IfClause:
		w.maybe(func() {
			for ic := c; ic != nil; ic = ic.Else {
				w.stmts(ic.Cond, depth)
				w.stmts(ic.Then, depth)
			}
		})
	case *syntax.WhileClause:
		w.maybe(func() {
			w.stmts(c.Cond, depth)
			w.stmts(c.Do, depth)
		})
	case *syntax.ForClause:
		w.maybe(func() {
			if it, ok := c.Loop.(*syntax.WordIter); ok {
				for _, wd := range it.Items {
					w.word(wd, depth)
				}
				if it.Name != nil {
					w.env = append(w.env, it.Name.Value+"=")
				}
			} else {
				w.nested(c.Loop, depth)
			}
			w.stmts(c.Do, depth)
		})
	case *syntax.CaseClause:
		w.word(c.Word, depth)
		w.maybe(func() {
			for _, it := range c.Items {
				for _, p := range it.Patterns {
					w.word(p, depth)
				}
				w.stmts(it.Stmts, depth)
			}
		})
	case *syntax.FuncDecl:
		// A function runs where it is called.
		if c.Name != nil {
			w.funcs[c.Name.Value] = c.Body
		} else {
			w.unresolved("an anonymous function")
		}
	case *syntax.DeclClause:
		for _, a := range c.Args {
			w.assign(a, depth)
		}
	case *syntax.TimeClause:
		w.stmt(c.Stmt, depth)
	case *syntax.CoprocClause:
		w.scoped(func() { w.stmt(c.Stmt, depth) })
	default: // (( )), [[ ]], let: only their substitutions run
		w.nested(c, depth)
	}
}

// nested walks the command and process substitutions inside a node that
// runs nothing else.
func (w *walker) nested(n syntax.Node, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			w.scoped(func() { w.stmts(x.Stmts, depth) })
			return false
		case *syntax.ProcSubst:
			w.scoped(func() { w.stmts(x.Stmts, depth) })
			return false
		}
		return true
	})
}

// assign records a shell assignment (it is in the environment of the
// commands after it, exported or not: a reader cannot tell) and walks
// its value.
func (w *walker) assign(a *syntax.Assign, depth int) string {
	if a.Name == nil {
		return ""
	}
	val := ""
	if a.Value != nil {
		val, _ = w.word(a.Value, depth)
	}
	if a.Array != nil {
		w.nested(a.Array, depth)
	}
	kv := a.Name.Value + "=" + val
	w.env = append(w.env, kv)
	return kv
}

func (w *walker) emit(c Command) {
	if c.Dir == "" {
		c.Dir, c.DirKnown = w.dir, w.known
	}
	w.s.Commands = append(w.s.Commands, c)
}

var redirOps = map[syntax.RedirOperator]string{
	syntax.RdrOut: ">", syntax.AppOut: ">>", syntax.RdrIn: "<", syntax.RdrInOut: "<>",
	syntax.DplIn: "<&", syntax.DplOut: ">&", syntax.RdrClob: ">|", syntax.AppClob: ">>|",
	syntax.Hdoc: "<<", syntax.DashHdoc: "<<-", syntax.WordHdoc: "<<<",
	syntax.RdrAll: "&>", syntax.RdrAllClob: "&>|", syntax.AppAll: "&>>", syntax.AppAllClob: "&>>|",
}

func (w *walker) redirects(rs []*syntax.Redirect, depth int) []Redirect {
	var out []Redirect
	for _, r := range rs {
		op := redirOps[r.Op]
		x := Redirect{Op: op}
		if r.N != nil {
			x.Fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				w.word(r.Hdoc, depth) // an unquoted body's substitutions run
			}
		case syntax.WordHdoc:
			w.word(r.Word, depth)
		default:
			t, exact := w.word(r.Word, depth)
			if (r.Op == syntax.DplOut || r.Op == syntax.DplIn) && exact && (t == "-" || strings.Trim(t, "0123456789") == "") {
				break // a descriptor
			}
			x.Path, x.Exact = t, exact
			x.Write = r.Op != syntax.RdrIn && r.Op != syntax.DplIn
		}
		out = append(out, x)
	}
	return out
}

// word resolves a word: its text with the quoting removed, and whether
// it is a literal. The substitutions inside it are walked as commands.
func (w *walker) word(wd *syntax.Word, depth int) (string, bool) {
	if wd == nil {
		return "", true
	}
	var b strings.Builder
	exact := true
	for i, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			v := x.Value
			if hasGlob(v) || i == 0 && strings.HasPrefix(v, "~") {
				exact = false
			}
			b.WriteString(unescape(v, false))
		case *syntax.SglQuoted:
			if x.Dollar && strings.Contains(x.Value, `\`) {
				exact = false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
					continue
				}
				exact = false
				b.WriteString(source(q))
				w.nested(q, depth)
			}
		default:
			exact = false
			b.WriteString(source(p))
			w.nested(p, depth)
		}
	}
	return b.String(), exact
}

// hasGlob reports an unquoted pattern or brace expansion in a literal.
func hasGlob(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(v[i:], ']') > 0 {
				return true
			}
		case '{':
			if j := strings.IndexByte(v[i:], '}'); j > 0 && (strings.Contains(v[i:i+j], ",") || strings.Contains(v[i:i+j], "..")) {
				return true
			}
		}
	}
	return false
}

// unescape removes the backslashes the shell removes: before any
// character outside quotes, before $ ` " \ and newline inside double
// quotes.
func unescape(v string, dq bool) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			n := v[i+1]
			if n == '\n' {
				i++
				continue
			}
			if !dq || strings.IndexByte("$`\"\\", n) >= 0 {
				i++
				b.WriteByte(n)
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func source(n syntax.Node) string {
	var buf bytes.Buffer
	if err := syntax.NewPrinter().Print(&buf, n); err != nil {
		return "$?"
	}
	return buf.String()
}

// call reads one simple command.
func (w *walker) call(ce *syntax.CallExpr, redirs []Redirect, st *syntax.Stmt, depth int) {
	if len(ce.Args) == 0 {
		for _, a := range ce.Assigns {
			w.assign(a, depth)
		}
		if len(redirs) > 0 {
			w.emit(Command{Redirs: redirs})
		}
		return
	}
	c := Command{Redirs: redirs, Env: append([]string(nil), w.env...), Dir: w.dir, DirKnown: w.known}
	for _, a := range ce.Assigns {
		if a.Name == nil {
			continue
		}
		val := ""
		if a.Value != nil {
			val, _ = w.word(a.Value, depth)
		}
		c.Env = append(c.Env, a.Name.Value+"="+val)
		c.Words = append(c.Words, a.Name.Value+"="+val)
	}
	for _, a := range ce.Args {
		t, exact := w.word(a, depth)
		c.Args = append(c.Args, t)
		c.Exact = append(c.Exact, exact)
	}
	c.Words = append(c.Words, c.Args...)
	w.run(c, st, depth)
}

// run looks through wrappers and the shell's own commands, then emits.
func (w *walker) run(c Command, st *syntax.Stmt, depth int) {
	for len(c.Args) > 0 {
		if !c.Exact[0] {
			c.Unresolved = append(c.Unresolved, "the program's name is built by an expansion ("+c.Args[0]+")")
			w.emit(c)
			return
		}
		name := path.Base(c.Args[0])
		if _, isFunc := w.funcs[c.Args[0]]; isFunc && len(c.Wrappers) == 0 {
			body := w.funcs[c.Args[0]]
			if len(c.Redirs) > 0 {
				w.emit(Command{Redirs: c.Redirs})
			}
			if depth >= maxDepth {
				w.unresolved("a function calls itself too deep (" + c.Args[0] + ")")
				return
			}
			w.stmt(body, depth+1)
			return
		}
		rest, ok := w.unwrap(&c, name, depth)
		if !ok {
			break
		}
		if rest < 0 {
			return // the wrapper ran nothing further, or w.unwrap emitted
		}
		c.Wrappers = append(c.Wrappers, name)
		c.Args, c.Exact = c.Args[rest:], c.Exact[rest:]
	}
	if len(c.Args) == 0 {
		w.emit(c)
		return
	}
	w.builtin(c, st, depth)
}

// builtin handles the shell's own commands and the programs that run
// shell text, and emits everything else as it is.
func (w *walker) builtin(c Command, st *syntax.Stmt, depth int) {
	name := c.Program()
	switch name {
	case "cd", "pushd", "popd":
		w.emit(c)
		w.cd(c)
		return
	case "eval":
		w.emit(c)
		if allExact(c.Exact[1:]) {
			w.text(strings.Join(c.Args[1:], " "), depth+1)
		} else {
			w.unresolved("eval of text built by an expansion")
		}
		return
	case "source", ".":
		c.Unresolved = append(c.Unresolved, name+" runs a script file the reader does not follow")
	case "exec":
		if len(c.Args) == 1 {
			w.emit(Command{Redirs: c.Redirs}) // redirects the shell itself
			return
		}
	case "trap":
		if len(c.Args) > 2 {
			w.emit(c)
			if c.Exact[1] {
				w.text(c.Args[1], depth+1)
			} else {
				w.unresolved("a trap with text built by an expansion")
			}
			return
		}
	case "find":
		w.find(c, depth)
		return
	case "watch":
		w.emit(c)
		if i := operands(c.Args, map[string]bool{"-n": true, "--interval": true, "-d": false}); i < len(c.Args) {
			w.shellText(c, strings.Join(c.Args[i:], " "), c.Exact[i:], depth)
		}
		return
	}
	if isShell(name) {
		w.shell(c, st, depth)
		return
	}
	if why := interpreter(name, c.Args); why != "" {
		c.Unresolved = append(c.Unresolved, why)
	}
	w.emit(c)
}

func allExact(ex []bool) bool {
	for _, e := range ex {
		if !e {
			return false
		}
	}
	return true
}

func (w *walker) shellText(c Command, text string, exact []bool, depth int) {
	if !allExact(exact) {
		w.unresolved(c.Program() + " runs shell text built by an expansion")
		return
	}
	w.text(text, depth+1)
}

// cd follows a change of directory.
func (w *walker) cd(c Command) {
	var args []string
	exact := true
	for i, a := range c.Args[1:] {
		if a == "-L" || a == "-P" || a == "-e" || a == "-@" || a == "--" {
			continue
		}
		args = append(args, a)
		exact = exact && c.Exact[i+1]
	}
	if c.Program() == "popd" || len(args) != 1 || !exact || args[0] == "-" || strings.HasPrefix(args[0], "+") {
		w.known = false
		return
	}
	if filepath.IsAbs(args[0]) {
		w.dir = filepath.Clean(args[0])
		return
	}
	w.dir = filepath.Join(w.dir, args[0])
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash":
		return true
	}
	return false
}

// shell reads what a shell program runs: its -c text, a here-document
// or here-string on its input; a script file or other input is
// unresolved.
func (w *walker) shell(c Command, st *syntax.Stmt, depth int) {
	name := c.Program()
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		if a == "--" || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") || a == "-" {
			c.Unresolved = append(c.Unresolved, name+" runs a script file the reader does not follow ("+a+")")
			w.emit(c)
			return
		}
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(a, "--") {
			continue
		}
		if strings.ContainsRune(a, 'c') {
			w.emit(c)
			if i+1 >= len(c.Args) {
				w.unresolved(name + " -c without its text")
				return
			}
			if name == "fish" || name == "csh" || name == "tcsh" {
				w.unresolved(name + " -c runs text in a language other than Bash")
				return
			}
			w.shellText(c, c.Args[i+1], c.Exact[i+1:i+2], depth)
			return
		}
	}
	// Commands from the input: a here-document or here-string is text.
	w.emit(c)
	if st != nil {
		for _, r := range st.Redirs {
			if (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Hdoc != nil || r.Op == syntax.WordHdoc {
				body := r.Hdoc
				if r.Op == syntax.WordHdoc {
					body = r.Word
				}
				t, exact := w.word(body, depth)
				w.shellText(c, t, []bool{exact}, depth)
				return
			}
		}
	}
	w.unresolved(name + " reads commands from its input")
}

// find: its -exec commands run too, with file names as arguments.
func (w *walker) find(c Command, depth int) {
	w.emit(c)
	for i := 1; i < len(c.Args); i++ {
		switch c.Args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(c.Args) && c.Args[j] != ";" && c.Args[j] != "+" {
				j++
			}
			if j > i+1 {
				sub := Command{Args: c.Args[i+1 : j], Exact: c.Exact[i+1 : j], Words: c.Args[i+1 : j], Env: c.Env, Dir: c.Dir, DirKnown: c.DirKnown, MoreArgs: true, Wrappers: append(append([]string(nil), c.Wrappers...), "find")}
				if c.Args[i] == "-execdir" || c.Args[i] == "-okdir" {
					sub.Unresolved = append(sub.Unresolved, "find "+c.Args[i]+" runs its command in directories the reader cannot list")
				}
				w.run(sub, nil, depth+1)
			}
			i = j
		}
	}
}

// interpreter says why a program that runs code given to it cannot be
// followed, "" when it is not one.
func interpreter(name string, args []string) string {
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"),
		name == "node", name == "nodejs", name == "deno", name == "bun", name == "perl", name == "ruby",
		name == "php", strings.HasPrefix(name, "lua"), name == "Rscript", name == "tclsh", name == "pwsh",
		name == "osascript", name == "awk", name == "gawk", name == "mawk", name == "nawk", name == "busybox",
		name == "make", name == "gmake", name == "just", name == "expect", name == "sed" && hasScriptFile(args):
		return name + " runs code the reader does not follow"
	}
	return ""
}

func hasScriptFile(args []string) bool {
	for _, a := range args[1:] {
		if a == "-f" || strings.HasPrefix(a, "--file") || a == "e" {
			return true
		}
	}
	return false
}

// operands is the index of the first operand of args (args[0] the
// program): options are skipped, those in valued with their value.
func operands(args []string, valued map[string]bool) int {
	i := 1
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return i + 1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return i
		}
		if valued[a] {
			i++
		}
		i++
	}
	return i
}

// Fields reads a line that is one simple command: its words with the
// quoting removed, as written (no wrapper looked through). ok is false
// when the line is anything else (a list, a pipe, a redirection, an
// assignment, or it does not parse); literal is false when a word is
// built by an expansion.
func Fields(line string) (words []string, literal, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false, false
	}
	st := f.Stmts[0]
	ce, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(st.Redirs) > 0 || st.Negated || st.Background || len(ce.Assigns) > 0 || len(ce.Args) == 0 {
		return nil, false, false
	}
	w := &walker{s: &Script{}, funcs: map[string]*syntax.Stmt{}, dir: ".", known: true}
	literal = true
	for _, a := range ce.Args {
		t, exact := w.word(a, 0)
		words = append(words, t)
		literal = literal && exact
	}
	return words, literal && len(w.s.Commands) == 0, true
}
