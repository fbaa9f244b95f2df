package gates

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ideate/git-ideate/internal/pathglob"
	"github.com/ideate/git-ideate/internal/shellwords"
)

// GuardName is the role guard: asked before every tool call, it keeps each
// agent to what its role may write.
const GuardName Name = "guard"

// Execution roles: the agents that work a task in its worktree.
const (
	RoleRed      = "red-worker"
	RoleScaffold = "scaffolder"
	RoleGreen    = "green-worker"
)

// IsExecutionRole reports whether role works a task (red-worker,
// scaffolder, green-worker).
func IsExecutionRole(role string) bool {
	return role == RoleRed || role == RoleScaffold || role == RoleGreen
}

// AttemptInit and AttemptOutput are the attempt's files in a task's
// worktree (the revision loop's init.md, read-only to the worker, and
// the worker's own report).
const (
	AttemptInit   = ".ideate/init.md"
	AttemptOutput = ".ideate/output.md"
)

// PlanningGlob is where the planning artifacts live, relative to the top of
// a working tree; no sub-agent writes there.
const PlanningGlob = "docs/agents/**"

// DefaultSourceExtensions is what counts as production source for the main
// session when the standards name no runner extensions.
var DefaultSourceExtensions = []string{".go", ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rs", ".java", ".kt", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".scala"}

// GuardFacts is what the role guard judges a tool call against. The hooks
// build it from the agent's binding to its task and the task's contract:
// small files and one ref read, never a scan of the repository.
type GuardFacts struct {
	Subagent bool   // the call comes from a sub-agent (any role)
	Bound    bool   // Input.Role is an execution role bound to Input.Task
	Cwd      string // what relative paths in the call resolve against
	Top      string // the main working tree ("" when unknown)
	Worktree string // the task's worktree (bound agents)
	// TestGlobs are the runners' test globs (git wildmatch, relative to
	// a working tree's top); ShimMarker marks a shim file's content.
	TestGlobs  []string
	ShimMarker string
	// Frozen are test files the verified RED commit changed
	// (worktree-relative), when known.
	Frozen []string
	// Extensions are the source extensions ("production source" for the
	// main session); DefaultSourceExtensions when empty.
	Extensions []string
	// Sprint: a sprint executes (a task contract is open).
	Sprint bool
	// Content is a Write's new content (the shim marker is looked for in
	// it).
	Content    string
	HasContent bool
}

// Guard is the role guard gate (GuardName). It judges BeforeTool inputs
// and passes every other point. FAIL says what the role may not write;
// UNVERIFIABLE says what the guard could not tell (a command it cannot
// read, from an execution agent). Both deny.
//
//   - a sub-agent never writes planning artifacts (PlanningGlob);
//   - a bound execution agent never writes its attempt's init.md
//     (AttemptInit), and any role may write its report (AttemptOutput);
//   - a bound execution agent writes only inside its task's worktree and
//     dispatches no agents; a red-worker writes only test files (TestGlobs)
//     and shims (ShimMarker in a Write's content, or an existing file
//     holding it); a green-worker and a scaffolder never touch test files
//     or the files RED froze;
//   - while a sprint executes, the main session writes no production
//     source (Extensions, test files and planning artifacts aside).
//
// Bash counts as a write to every target it names (BashWrites); a
// command whose targets cannot be told is UNVERIFIABLE for an execution
// agent and ignored for anyone else.
var Guard = Func(guard)

type guardFail struct {
	class, detail, path string
	unverifiable        bool
}

func guard(_ context.Context, in Input) (Verdict, error) {
	if in.Point != BeforeTool {
		return Verdict{Result: PASS}, nil
	}
	f := in.Guard
	if f == nil {
		return Verdict{Result: UNVERIFIABLE, Reasons: []Reason{{Class: "no_facts", Detail: "the guard was asked without the agent's binding facts"}}}, nil
	}
	exec := f.Bound && IsExecutionRole(in.Role)
	var targets []writeTarget
	switch in.Tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		if len(in.Paths) == 0 && (exec || f.Subagent) {
			return verdictOf(guardFail{class: "unknown_target", detail: in.Tool + " names no file", unverifiable: true}), nil
		}
		for _, p := range in.Paths {
			targets = append(targets, writeTarget{path: p, content: in.Tool == "Write" && f.HasContent})
		}
	case "Bash":
		w, unknown := BashWrites(in.Command)
		if unknown != "" {
			if exec {
				return verdictOf(guardFail{class: "unknown_command", detail: "cannot tell what this command writes: " + unknown + "; use plain commands (Write/Edit for files)", unverifiable: true}), nil
			}
			// Outside an execution role the known targets still count.
		}
		for _, t := range w {
			targets = append(targets, writeTarget{path: t.Path, dir: t.Dir, mkdir: t.Mkdir})
		}
	case "Agent", "Task":
		if exec {
			return verdictOf(guardFail{class: "dispatch", detail: "a " + in.Role + " dispatches no agents; do the task's work yourself"}), nil
		}
		return Verdict{Result: PASS}, nil
	default:
		return Verdict{Result: PASS}, nil
	}
	for _, t := range targets {
		if fail := f.judge(in.Role, exec, t); fail != nil {
			return verdictOf(*fail), nil
		}
	}
	return Verdict{Result: PASS}, nil
}

func verdictOf(g guardFail) Verdict {
	r := Reason{Class: g.class, Detail: g.detail}
	if g.path != "" {
		r.Paths = []string{g.path}
	}
	res := FAIL
	if g.unverifiable {
		res = UNVERIFIABLE
	}
	return Verdict{Result: res, Reasons: []Reason{r}}
}

type writeTarget struct {
	path    string
	dir     bool // the command acts on a whole directory (git checkout <branch>, rm -r …)
	mkdir   bool // only creates a directory
	content bool // a Write whose content is in GuardFacts.Content
}

// judge checks one write target.
func (f *GuardFacts) judge(role string, exec bool, t writeTarget) *guardFail {
	if strings.ContainsAny(t.path, "\x00") {
		if !exec && !f.Subagent {
			return nil
		}
		return &guardFail{class: "unknown_target", detail: "a file path holds a NUL byte", unverifiable: true}
	}
	abs := resolve(f.Cwd, t.path)
	if abs == "" {
		if exec || f.Subagent {
			return &guardFail{class: "unknown_target", detail: "cannot resolve " + t.path + " (no working directory)", path: t.path, unverifiable: true}
		}
		return nil
	}
	if f.Subagent {
		for _, root := range []string{f.Top, f.Worktree} {
			if rel, ok := within(resolve("", root), abs); ok && (pathglob.Match(PlanningGlob, rel) || rel == "docs/agents" || t.dir && strings.HasPrefix("docs/agents/", rel+"/")) {
				return &guardFail{class: "planning_artifact", detail: "sub-agents do not edit planning artifacts (" + PlanningGlob + ")", path: rel}
			}
		}
	}
	if exec {
		wt := resolve("", f.Worktree)
		rel, ok := within(wt, abs)
		if wt == "" || !ok {
			return &guardFail{class: "outside_worktree", detail: "a " + role + " writes only inside its task's worktree " + f.Worktree, path: abs}
		}
		switch {
		case rel == AttemptInit || t.dir && (rel == path.Dir(AttemptInit) || rel == "." || rel == ""):
			return &guardFail{class: "init_read_only", detail: "init.md is written by git ideate only; write your report to " + AttemptOutput, path: rel}
		case rel == AttemptOutput && !t.dir:
			return nil // the worker's own report, whatever its role
		}
		if t.mkdir {
			return nil
		}
		isTest := f.isTest(rel)
		switch role {
		case RoleRed:
			if t.dir {
				return &guardFail{class: "not_a_test", detail: "a red-worker writes only test files and shims; this command changes a whole directory", path: rel}
			}
			if !isTest && !f.isShim(abs, t.content) {
				return &guardFail{class: "not_a_test", detail: "a red-worker writes only test files (" + strings.Join(f.TestGlobs, ", ") + ") and shims (marked " + f.ShimMarker + ")", path: rel}
			}
		case RoleGreen, RoleScaffold:
			if t.dir {
				return &guardFail{class: "test_changed", detail: "a " + role + " never touches the test files; this command changes a whole directory", path: rel}
			}
			if isTest || f.frozen(rel) {
				return &guardFail{class: "test_changed", detail: "a " + role + " never touches the test files RED wrote", path: rel}
			}
		}
		return nil
	}
	if !f.Subagent && f.Sprint && !t.dir && !t.mkdir && f.Top != "" {
		rel, ok := within(resolve("", f.Top), abs)
		if ok && f.isSource(rel) && !f.isTest(rel) && !pathglob.Match(PlanningGlob, rel) {
			return &guardFail{class: "production_source", detail: "a sprint is executing: the main session does not write production source; dispatch a worker for the task", path: rel}
		}
	}
	return nil
}

func (f *GuardFacts) isTest(rel string) bool {
	for _, g := range f.TestGlobs {
		if pathglob.Match(g, rel) || !strings.Contains(g, "/") && pathglob.Match(g, path.Base(rel)) {
			return true
		}
	}
	return false
}

func (f *GuardFacts) frozen(rel string) bool {
	for _, p := range f.Frozen {
		if p == rel {
			return true
		}
	}
	return false
}

func (f *GuardFacts) isShim(abs string, content bool) bool {
	if f.ShimMarker == "" {
		return false
	}
	if content {
		return strings.Contains(f.Content, f.ShimMarker)
	}
	// An existing shim: its first 64 KiB hold the marker.
	fh, err := os.Open(abs)
	if err != nil {
		return false
	}
	defer fh.Close()
	buf := make([]byte, 64<<10)
	n, _ := fh.Read(buf)
	return strings.Contains(string(buf[:n]), f.ShimMarker)
}

func (f *GuardFacts) isSource(rel string) bool {
	exts := f.Extensions
	if len(exts) == 0 {
		exts = DefaultSourceExtensions
	}
	for _, e := range exts {
		if strings.HasSuffix(rel, e) {
			return true
		}
	}
	return false
}

// resolve makes p absolute against cwd, cleans it (so "a/../b" is "b")
// and follows the symlinks of its longest existing prefix, so a link
// cannot lead a write out of where it seems to go. "" when p is relative
// and there is no cwd.
func resolve(cwd, p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		if cwd == "" || !filepath.IsAbs(cwd) {
			return ""
		}
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether abs lies inside root (or is root), with the path
// relative to root in slash form.
func within(root, abs string) (string, bool) {
	if root == "" {
		return "", false
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// A Write is one target a shell command writes.
type Write struct {
	Path  string
	Dir   bool // a whole directory or tree (git checkout <branch>, rm -r, git restore .)
	Mkdir bool // only creates a directory
}

// BashWrites reads a shell command line (shellwords) and returns the files
// it writes: redirection targets (> >> &> 2>), tee, sed -i, cp, mv, rm,
// touch, mkdir, ln, install, truncate, dd of=, git checkout|restore|rm|mv
// and sh -c / bash -c (read recursively). unknown is non-empty when the
// line does something whose targets cannot be told: eval, source, a
// target built by an expansion ($VAR, $(…), `…`, ~), an interpreter
// with inline code (python -c, node -e, perl -e, …), git apply|am|stash|
// reset --hard|clean|merge|rebase|pull, find -delete|-exec, xargs with a
// writing command. Read-only commands (go test, ls, cat, grep, git
// status|diff|log) write nothing.
func BashWrites(line string) (writes []Write, unknown string) {
	return bashWrites(line, 0)
}

func bashWrites(line string, depth int) (writes []Write, unknown string) {
	if depth > 3 {
		return nil, "shells nested too deep"
	}
	if strings.ContainsRune(line, '`') {
		return nil, "a backquoted command substitution"
	}
	line, err := stripHeredocs(line)
	if err != "" {
		return nil, err
	}
	w, u := redirections(line)
	if u != "" {
		return nil, u
	}
	writes = append(writes, w...)
	cmds := shellwords.Split(line)
	moves := false
	for _, words := range cmds {
		if ws := shellwords.TrimPrefixes(words); len(ws) > 0 && (ws[0] == "cd" || ws[0] == "pushd" || ws[0] == "popd") {
			moves = true
		}
	}
	if moves && (len(writes) > 0 || strings.ContainsAny(line, "()")) {
		return nil, "a cd together with redirections or subshells (write with paths from the working directory, without cd)"
	}
	dir := "" // where cd moved to, relative to the call's directory (or absolute)
	for _, words := range cmds {
		if ws := shellwords.TrimPrefixes(words); len(ws) > 0 && (ws[0] == "cd" || ws[0] == "pushd" || ws[0] == "popd") {
			var args []string
			for _, a := range ws[1:] {
				if a != "-L" && a != "-P" && a != "--" {
					args = append(args, a)
				}
			}
			if ws[0] == "popd" || len(args) != 1 || args[0] == "-" {
				return nil, ws[0] + " to a directory the guard cannot tell"
			}
			t, u := literalTarget(args[0])
			if u != "" || t == "" {
				return nil, ws[0] + " to a directory the guard cannot tell"
			}
			if filepath.IsAbs(t) {
				dir = t
			} else {
				dir = filepath.Join(dir, t)
			}
			continue
		}
		w, u := commandWrites(words, depth)
		for _, x := range w {
			if dir != "" && !filepath.IsAbs(x.Path) {
				x.Path = filepath.Join(dir, x.Path)
			}
			writes = append(writes, x)
		}
		if u != "" && unknown == "" {
			unknown = u
		}
	}
	return writes, unknown
}

// stripHeredocs drops the bodies of here-documents (the lines after a
// line holding <<WORD, up to the line WORD), keeping the line that
// starts them.
func stripHeredocs(line string) (string, string) {
	if !strings.Contains(line, "<<") {
		return line, ""
	}
	lines := strings.Split(line, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out = append(out, l)
		j := strings.Index(l, "<<")
		if j < 0 || strings.HasPrefix(l[j:], "<<<") {
			continue
		}
		rest := strings.TrimLeft(l[j+2:], "-")
		rest = strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(rest, " \t;|&<>)")
		if end < 0 {
			end = len(rest)
		}
		delim := strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(rest[:end])
		if delim == "" {
			return "", "a here-document without a delimiter"
		}
		// Cut the heredoc operator and its word from the starting line.
		out[len(out)-1] = l[:j] + " " + rest[end:]
		found := false
		for i++; i < len(lines); i++ {
			if strings.TrimLeft(lines[i], "\t") == delim {
				found = true
				break
			}
		}
		if !found {
			return "", "a here-document that does not end"
		}
	}
	return strings.Join(out, "\n"), ""
}

// writers are the programs that write the files they are given.
var writers = []string{
	"rm", "unlink", "shred", "rmdir", "touch", "truncate", "chmod", "chown", "chgrp", "mv", "cp", "ln",
	"install", "tee", "sed", "gsed", "dd", "mkdir", "git", "perl",
}

// interpreters are the programs that run code given on their command
// line, with the flag that takes it ("" when the first operand is the code).
func interpreters(prog string) (flag string, ok bool) {
	switch prog {
	case "python", "python2", "python3":
		return "-c", true
	case "node", "nodejs", "bun", "ruby", "perl", "lua", "Rscript", "osascript":
		return "-e", true
	case "deno":
		return "eval", true
	case "php":
		return "-r", true
	case "awk", "gawk", "jq":
		return "", true
	}
	return "", false
}

// commandWrites reads one simple command.
func commandWrites(words []string, depth int) (writes []Write, unknown string) {
	for _, w := range words {
		if w == "-C" || w == "--chdir" || strings.HasPrefix(w, "--chdir=") {
			if len(words) > 0 && (words[0] == "env" || words[0] == "sudo") {
				return nil, words[0] + " " + w + " moves to a directory the guard cannot follow"
			}
		}
	}
	words = shellwords.TrimPrefixes(words)
	// Redirection words (their targets were read from the line by
	// redirections) are not the program's arguments.
	var args []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if k := redirect(w); k >= 0 {
			if k == len(w) && i+1 < len(words) {
				i++
			}
			continue
		}
		args = append(args, w)
	}
	if len(args) == 0 {
		return writes, ""
	}
	prog := path.Base(args[0])
	ops := args[1:]
	files := func(from []string) []string {
		var out []string
		dashdash := false
		for _, a := range from {
			if !dashdash && a == "--" {
				dashdash = true
				continue
			}
			if !dashdash && strings.HasPrefix(a, "-") && a != "-" {
				continue
			}
			out = append(out, a)
		}
		return out
	}
	add := func(paths []string, dir, mkdir bool) string {
		for _, p := range paths {
			t, u := literalTarget(p)
			if u != "" {
				return u
			}
			if t != "" {
				writes = append(writes, Write{Path: t, Dir: dir, Mkdir: mkdir})
			}
		}
		return ""
	}
	recursive := false
	for _, a := range ops {
		if a == "-r" || a == "-R" || a == "-rf" || a == "-fr" || a == "--recursive" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR") {
			recursive = true
		}
	}
	switch prog {
	case "eval", "source", ".", "exec":
		if prog == "exec" && len(ops) == 0 {
			return writes, ""
		}
		return nil, prog + " runs code the guard cannot read"
	case "tee":
		unknown = add(files(ops), false, false)
	case "rm", "unlink", "shred", "rmdir":
		unknown = add(files(ops), recursive || prog == "rmdir", false)
	case "touch", "truncate", "chmod", "chown", "chgrp":
		fs := files(ops)
		if (prog == "chmod" || prog == "chown" || prog == "chgrp") && len(fs) > 0 {
			fs = fs[1:]
		}
		unknown = add(fs, recursive, false)
	case "mkdir":
		unknown = add(files(ops), false, true)
	case "mv":
		unknown = add(files(ops), false, false)
	case "cp", "ln", "install", "rsync":
		fs := files(ops)
		for i, a := range ops {
			if (a == "-t" || a == "--target-directory") && i+1 < len(ops) {
				return writes, add([]string{ops[i+1]}, true, false)
			} else if strings.HasPrefix(a, "--target-directory=") {
				return writes, add([]string{strings.TrimPrefix(a, "--target-directory=")}, true, false)
			}
		}
		if len(fs) > 0 {
			unknown = add(fs[len(fs)-1:], recursive, false)
		}
	case "dd":
		for _, a := range ops {
			if strings.HasPrefix(a, "of=") {
				unknown = add([]string{a[3:]}, false, false)
			}
		}
	case "sed", "gsed":
		inPlace, script := false, false
		var fs []string
		for i := 0; i < len(ops); i++ {
			a := ops[i]
			switch {
			case a == "-i" || strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "-i") || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "i"):
				inPlace = true
				if strings.Contains(a, "e") && !strings.HasPrefix(a, "-i") {
					script = true
					i++
				}
			case a == "-e" || a == "--expression" || a == "-f" || a == "--file":
				script = true
				i++
			case strings.HasPrefix(a, "-") && a != "-":
			default:
				fs = append(fs, a)
			}
		}
		if !inPlace {
			break
		}
		if !script && len(fs) > 0 {
			fs = fs[1:]
		}
		unknown = add(fs, false, false)
	case "git":
		return gitWrites(ops, writes)
	case "sh", "bash", "zsh", "dash", "ksh":
		for i, a := range ops {
			if a == "-c" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "c") {
				if i+1 >= len(ops) {
					return nil, prog + " -c without a command"
				}
				w, u := bashWrites(ops[i+1], depth+1)
				return append(writes, w...), u
			}
		}
		if len(files(ops)) > 0 {
			return nil, prog + " runs a script the guard cannot read"
		}
		return nil, prog + " reads commands from its input"
	case "xargs", "parallel":
		// The command it runs, with arguments from its input.
		rest := files(ops)
		if len(rest) > 0 {
			if w, u := commandWrites(rest, depth+1); len(w) > 0 || u != "" || slices.Contains(writers, path.Base(rest[0])) {
				return nil, prog + " runs a writing command on arguments the guard cannot see"
			}
		}
	case "find":
		for i, a := range ops {
			switch a {
			case "-delete", "-fprint", "-fprintf", "-fls":
				return nil, "find " + a + " writes files the guard cannot list"
			case "-exec", "-execdir", "-ok", "-okdir":
				if w, u := commandWrites(ops[i+1:], depth+1); len(w) > 0 || u != "" || i+1 < len(ops) && slices.Contains(writers, path.Base(ops[i+1])) {
					return nil, "find " + a + " runs a writing command on files the guard cannot list"
				}
			}
		}
	default:
		if flag, ok := interpreters(prog); ok || strings.HasPrefix(prog, "python") {
			if prog == "awk" || prog == "gawk" {
				for _, a := range ops {
					if a == "-i" || strings.HasPrefix(a, "inplace") {
						return nil, "awk -i inplace rewrites files the guard cannot list"
					}
				}
				for _, a := range ops {
					if strings.Contains(a, ">") || strings.Contains(a, "system(") {
						return nil, "an awk program that writes or runs commands"
					}
				}
				break
			}
			if prog == "jq" {
				break
			}
			for _, a := range ops {
				if a == flag || flag == "" || a == "--eval" || a == "-p" || a == "--print" || strings.HasPrefix(a, flag) && len(flag) == 2 && a[0] == '-' && a[1] != '-' {
					return nil, prog + " with inline code the guard cannot read"
				}
			}
			if fs := files(ops); len(fs) == 0 || fs[0] == "-" {
				return nil, prog + " reads a program from its input"
			}
		}
	}
	return writes, unknown
}

// gitWrites reads a git command line (after "git"): the subcommands that
// write the working tree.
func gitWrites(ops []string, writes []Write) ([]Write, string) {
	i := 0
	for i < len(ops) && strings.HasPrefix(ops[i], "-") {
		if ops[i] == "-C" || ops[i] == "-c" || ops[i] == "--git-dir" || ops[i] == "--work-tree" {
			if ops[i] == "-C" || ops[i] == "--work-tree" || ops[i] == "--git-dir" {
				return nil, "git " + ops[i] + " points git elsewhere"
			}
			i++
		}
		i++
	}
	if i >= len(ops) {
		return writes, ""
	}
	sub, rest := ops[i], ops[i+1:]
	pathspecs := func() ([]string, bool) {
		for j, a := range rest {
			if a == "--" {
				return rest[j+1:], true
			}
		}
		var out []string
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") {
				out = append(out, a)
			}
		}
		return out, false
	}
	addAll := func(ps []string) ([]Write, string) {
		for _, p := range ps {
			t, u := literalTarget(p)
			if u != "" {
				return nil, u
			}
			d := p == "." || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "*?[")
			writes = append(writes, Write{Path: t, Dir: d})
		}
		return writes, ""
	}
	switch sub {
	case "checkout":
		ps, dashed := pathspecs()
		if dashed {
			return addAll(ps)
		}
		// `git checkout <branch>` (or with paths git guesses): the whole tree.
		return append(writes, Write{Path: ".", Dir: true}), ""
	case "restore", "rm", "mv":
		ps, _ := pathspecs()
		if sub == "restore" {
			for _, a := range rest {
				if a == "--staged" || a == "-S" {
					staged := true
					for _, b := range rest {
						if b == "--worktree" || b == "-W" {
							staged = false
						}
					}
					if staged {
						return writes, ""
					}
				}
			}
			// --source takes a value.
			var keep []string
			for j := 0; j < len(ps); j++ {
				keep = append(keep, ps[j])
			}
			ps = keep
			for j, a := range rest {
				if (a == "-s" || a == "--source") && j+1 < len(rest) {
					ps = removeOne(ps, rest[j+1])
				}
			}
		}
		if len(ps) == 0 {
			return append(writes, Write{Path: ".", Dir: true}), ""
		}
		return addAll(ps)
	case "apply", "am", "stash", "clean", "merge", "rebase", "pull", "cherry-pick", "revert", "switch", "read-tree", "checkout-index", "update-index", "worktree", "submodule", "filter-branch", "lfs":
		return nil, "git " + sub + " changes files the guard cannot list"
	case "reset":
		for _, a := range rest {
			if a == "--hard" || a == "--merge" || a == "--keep" {
				return nil, "git reset " + a + " changes files the guard cannot list"
			}
		}
	}
	return writes, ""
}

func removeOne(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return append(append([]string(nil), list[:i]...), list[i+1:]...)
		}
	}
	return list
}

// redirect reports whether w is a redirection word (">", ">>", "2>",
// "&>", ">|", "<", "2>f"): the index just past its operator, else -1.
func redirect(w string) int {
	i := 0
	for i < len(w) && w[i] >= '0' && w[i] <= '9' {
		i++
	}
	if i < len(w) && w[i] == '&' {
		i++
	}
	if i >= len(w) || w[i] != '>' && w[i] != '<' {
		return -1
	}
	i++
	for i < len(w) && (w[i] == '>' || w[i] == '|' || w[i] == '&') {
		i++
	}
	return i
}

// redirections reads the output redirections of a line from its text
// (quotes respected; shellwords keeps "x>f" as one word): the target of
// every unquoted '>' that does not duplicate a descriptor (">&2", "2>&1").
func redirections(line string) (writes []Write, unknown string) {
	inSingle, inDouble := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && !inSingle:
			i++
			continue
		case c == '\'' && !inDouble:
			inSingle = !inSingle
			continue
		case c == '"' && !inSingle:
			inDouble = !inDouble
			continue
		}
		if inSingle || inDouble || c != '>' {
			continue
		}
		j := i + 1
		if j < len(line) && (line[j] == '>' || line[j] == '|') {
			j++
		}
		if j < len(line) && line[j] == '&' {
			if j+1 >= len(line) || line[j+1] >= '0' && line[j+1] <= '9' || line[j+1] == '-' {
				i = j
				continue // a descriptor
			}
			j++
		}
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		word, end := readWord(line, j)
		i = end - 1
		if word == "" {
			return nil, "a redirection without a target"
		}
		t, u := literalTarget(word)
		if u != "" {
			return nil, u
		}
		if t != "" {
			writes = append(writes, Write{Path: t})
		}
	}
	return writes, ""
}

// readWord reads one shell word of line from i (quotes removed), up to an
// unquoted blank or operator; it returns the word and where it ended.
// A "$(" or "`" inside comes back as written, for literalTarget to refuse.
func readWord(line string, i int) (string, int) {
	var b strings.Builder
	for ; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			i++
			b.WriteByte(line[i])
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				b.WriteString(line[i+1:])
				return b.String(), len(line)
			}
			b.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				b.WriteByte(line[i])
			}
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			b.WriteString("$(")
			return b.String(), len(line)
		case strings.IndexByte(" \t\n;|&<>()", c) >= 0:
			return b.String(), i
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), i
}

// literalTarget is a target word as a path: "" for the devices that are
// not files; unknown when an expansion builds it.
func literalTarget(w string) (string, string) {
	switch w {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-":
		return "", ""
	}
	if strings.HasPrefix(w, "&") || w != "" && strings.Trim(w, "0123456789") == "" {
		return "", "" // a descriptor (">&2" kept whole, or the "1" of "2>&1" split at the '&')
	}
	if strings.ContainsAny(w, "$`") || strings.HasPrefix(w, "~") {
		return "", "a write target built by an expansion (" + w + ")"
	}
	return w, ""
}
