package gates

import (
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/shell"
)

// A Write is one target a shell command writes.
type Write struct {
	Path  string
	Dir   bool // a whole directory or tree (git checkout <branch>, rm -r, git restore .)
	Mkdir bool // only creates a directory
	// Repo: the repository of the working tree at Path, not its files: its
	// index, objects and refs (git add, git commit, git reset).
	Repo bool
}

// BashWrites reads a command line (shell.Read) and returns the files it
// writes, each relative to where the line starts or absolute. It is the
// guard's strict reading, used where no confinement holds the command:
// unknown is non-empty, and the line must be refused, when anything in
// it cannot be told — a part the reader cannot resolve (an expansion in
// a program name or a target, eval, source, an interpreter given code or
// a script), a program this reading does not know, a known program used
// in a way whose targets cannot be listed, an environment assignment
// that redirects git or the shell, or a relative target where cd cannot
// be followed. Programs that run the project's code (go test, pytest, …)
// are let through: what that code writes is beyond any reading of the
// line, which is why confinement is the strong mode.
func BashWrites(line string) (writes []Write, unknown string) {
	s := shell.Read(line)
	why := func(u string) {
		if unknown == "" {
			unknown = u
		}
	}
	if len(s.Unresolved) > 0 {
		why(s.Unresolved[0])
	}
	for _, c := range s.Commands {
		if len(c.Unresolved) > 0 && !isPytest(c) {
			why(c.Unresolved[0])
		}
		for _, e := range c.Env {
			name, _, _ := strings.Cut(e, "=")
			if !safeEnv(name) {
				why("an assignment to " + name + " changes what the command does in a way the guard cannot follow")
			}
		}
		var ws []Write
		for _, r := range c.Redirs {
			switch {
			case !r.Write || r.Path == "" || r.Exact && isDevice(r.Path):
			case !r.Exact:
				why("a write target built by an expansion (" + r.Path + ")")
			default:
				ws = append(ws, Write{Path: r.Path})
			}
		}
		if len(c.Args) > 0 {
			w, u := programWrites(c)
			if u != "" {
				why(u)
			}
			ws = append(ws, w...)
		}
		for _, w := range ws {
			if !filepath.IsAbs(w.Path) {
				if !c.DirKnown {
					why("a write after a cd the guard cannot follow (write with paths from the working directory)")
					continue
				}
				w.Path = filepath.Join(c.Dir, w.Path)
			}
			writes = append(writes, w)
		}
	}
	return writes, unknown
}

// isPytest: python -m pytest runs the test runner (as pytest does).
func isPytest(c shell.Command) bool {
	return strings.HasPrefix(c.Program(), "python") && len(c.Args) > 2 && c.Args[1] == "-m" && c.Args[2] == "pytest"
}

// safeEnv reports whether assigning name changes nothing about which
// program runs or where it writes.
func safeEnv(name string) bool {
	switch name {
	case "CGO_ENABLED", "GOOS", "GOARCH", "GOMAXPROCS", "GOTRACEBACK", "GODEBUG", "NO_COLOR", "FORCE_COLOR", "TERM",
		"LANG", "LANGUAGE", "TZ", "CI", "COLUMNS", "LINES", "NODE_ENV", "RUST_BACKTRACE", "PYTHONUNBUFFERED",
		"PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", OverrideVar:
		return true
	}
	// Tools read upper-case names; a lower-case one is a script's own
	// variable (a loop's, a function's).
	return strings.HasPrefix(name, "LC_") || strings.ToUpper(name) != name
}

func isDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-":
		return true
	}
	return false
}

// readOnly are programs that write no file whatever their arguments.
var readOnly = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true, "fgrep": true,
	"echo": true, "printf": true, "pwd": true, "true": true, "false": true, "test": true, "[": true, "diff": true, "cmp": true,
	"stat": true, "file": true, "basename": true, "dirname": true, "realpath": true, "readlink": true, "which": true,
	"type": true, "date": true, "sleep": true, "env": true, "printenv": true, "id": true, "whoami": true, "uname": true,
	"du": true, "df": true, "cut": true, "tr": true, "nl": true, "column": true, "jq": true,
	"sha256sum": true, "sha1sum": true, "md5sum": true, "cksum": true, "od": true, "hexdump": true,
	"strings": true, "seq": true, "expr": true, "wait": true, "exit": true, "return": true, "set": true, "shopt": true,
	"export": true, "unset": true, "local": true, "declare": true, "read": true, ":": true, "cd": true, "pushd": true,
	"popd": true, "comm": true, "paste": true, "fold": true, "fmt": true, "rev": true, "yes": true, "ps": true,
	"nproc": true, "hostname": true, "sh": true, "bash": true, "dash": true, "zsh": true, "eval": true, "trap": true, "watch": true, "less": true, "more": true, "tac": true, "join": true, "base64": true, "exec": true,
	// The test runners: they run the project's code, which no reading of
	// the line can follow (the weaker mode's known limit).
	"pytest": true, "py.test": true, "vitest": true, "jest": true, "mocha": true,
}

// programWrites is what one command's program writes.
func programWrites(c shell.Command) ([]Write, string) {
	prog := c.Program()
	args := c.Args[1:]
	for _, e := range c.Exact[1:] {
		if !e && writesArgs(prog) {
			return nil, "a write target built by an expansion (" + strings.Join(c.Args, " ") + ")"
		}
	}
	if c.MoreArgs && prog != "echo" && !readOnly[prog] {
		return nil, strings.Join(c.Wrappers, " ") + " runs " + prog + " on arguments the guard cannot see"
	}
	if readOnly[prog] || isPytest(c) {
		return nil, ""
	}
	ops := operandsOf(args)
	recursive := false
	for _, a := range args {
		if a == "--recursive" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR") {
			recursive = true
		}
	}
	files := func(ps []string, dir, mkdir bool) []Write {
		var out []Write
		for _, p := range ps {
			if !isDevice(p) {
				out = append(out, Write{Path: p, Dir: dir, Mkdir: mkdir})
			}
		}
		return out
	}
	switch prog {
	case "tee":
		return files(ops, false, false), ""
	case "rm", "unlink", "shred", "rmdir":
		return files(ops, recursive || prog == "rmdir", false), ""
	case "touch", "truncate":
		return files(ops, false, false), ""
	case "chmod", "chown", "chgrp":
		if len(ops) > 0 {
			ops = ops[1:]
		}
		return files(ops, recursive, false), ""
	case "mkdir":
		return files(ops, false, true), ""
	case "cp", "ln", "install", "mv":
		// mv writes its sources too (it removes them).
		moved := func(srcs []string) []Write {
			if prog == "mv" {
				return files(srcs, false, false)
			}
			return nil
		}
		for i, a := range args {
			dir, ok := strings.CutPrefix(a, "--target-directory=")
			if (a == "-t" || a == "--target-directory") && i+1 < len(args) {
				dir, ok = args[i+1], true
			}
			if ok {
				srcs := removeOne(ops, dir)
				out := append(moved(srcs), files([]string{dir}, true, false)...)
				for _, src := range srcs {
					out = append(out, files([]string{filepath.Join(dir, filepath.Base(src))}, recursive, false)...)
				}
				return out, ""
			}
		}
		if len(ops) > 0 {
			// Into a directory, each source lands under its own name
			// there: the target names a file only by where it lands.
			dest := ops[len(ops)-1]
			out := append(moved(ops[:len(ops)-1]), files([]string{dest}, recursive || prog == "ln", false)...)
			for _, src := range ops[:len(ops)-1] {
				out = append(out, files([]string{filepath.Join(dest, filepath.Base(src))}, recursive, false)...)
			}
			return out, ""
		}
		return nil, ""
	case "uniq", "xxd":
		// The operand after the input is the output file (an option's
		// value counts as an operand too: the reading errs towards more
		// targets).
		if len(ops) > 1 {
			return files(ops[1:], false, false), ""
		}
		return nil, ""
	case "tree":
		for i, a := range args {
			if a == "-o" && i+1 < len(args) {
				return files(args[i+1:i+2], false, false), ""
			}
		}
		return nil, ""
	case "rg":
		for _, a := range args {
			if a == "--pre" || strings.HasPrefix(a, "--pre=") {
				return nil, "rg --pre runs a program the guard cannot follow"
			}
		}
		return nil, ""
	case "sed", "gsed":
		return sedWrites(args)
	case "sort":
		for i, a := range args {
			if a == "-o" && i+1 < len(args) {
				return files(args[i+1:i+2], false, false), ""
			}
			if v, ok := strings.CutPrefix(a, "--output="); ok {
				return files([]string{v}, false, false), ""
			}
			if strings.HasPrefix(a, "-o") && len(a) > 2 {
				return files([]string{a[2:]}, false, false), ""
			}
		}
		return nil, ""
	case "find":
		for _, a := range args {
			switch a {
			case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return nil, "find " + a + " writes files the guard cannot list"
			}
		}
		return nil, ""
	case "gofmt":
		for _, a := range args {
			if a == "-w" {
				return files(ops, true, false), ""
			}
		}
		return nil, ""
	case "go":
		return goWrites(args)
	case "git":
		return gitWrites(args)
	case "git-ideate":
		return ideateWrites(args)
	case "npm", "pnpm", "yarn", "npx", "cargo":
		if len(args) > 0 && (args[0] == "test" || args[0] == "t" || prog == "npx" && len(args) > 0 && (args[0] == "vitest" || args[0] == "jest")) {
			return nil, ""
		}
	}
	return nil, prog + " is not a program the guard knows the writes of (without confinement only known commands run)"
}

// writesArgs: the program's operands are files it writes.
func writesArgs(prog string) bool {
	switch prog {
	case "tee", "rm", "unlink", "shred", "rmdir", "touch", "truncate", "chmod", "chown", "chgrp", "mkdir", "mv", "cp", "ln",
		"install", "sed", "gsed", "sort", "gofmt", "git", "uniq", "xxd", "tree":
		return true
	}
	return false
}

// operandsOf drops options (and everything up to "--" is options or
// operands as written).
func operandsOf(args []string) []string {
	var out []string
	dashdash := false
	for _, a := range args {
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

func sedWrites(args []string) ([]Write, string) {
	inPlace, script := false, false
	var fs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-i" || strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "-i") || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "i"):
			inPlace = true
			if strings.Contains(a, "e") && !strings.HasPrefix(a, "-i") {
				script = true
				i++
			}
		case a == "-e" || a == "--expression":
			script = true
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			fs = append(fs, a)
		}
	}
	if !inPlace {
		return nil, ""
	}
	if !script && len(fs) > 0 {
		fs = fs[1:]
	}
	var out []Write
	for _, f := range fs {
		out = append(out, Write{Path: f})
	}
	return out, ""
}

// goWrites: the go command's subcommands that write nothing but caches,
// or the files their flags name.
func goWrites(args []string) ([]Write, string) {
	if len(args) == 0 {
		return nil, ""
	}
	sub := args[0]
	switch sub {
	case "test", "vet", "build", "list", "version", "doc", "help":
		var out []Write
		for i, a := range args[1:] {
			name, val, has := strings.Cut(strings.TrimPrefix(a, "-"), "=")
			switch strings.TrimPrefix(name, "-") {
			case "o", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "json.out":
				if !has {
					if i+2 > len(args)-1 {
						continue
					}
					val = args[i+2]
				}
				if !isDevice(val) {
					out = append(out, Write{Path: val})
				}
			case "toolexec", "exec", "overlay", "modfile", "pgo":
				return nil, "go " + sub + " -" + name + " runs or reads what the guard cannot follow"
			}
		}
		return out, ""
	case "env":
		for _, a := range args[1:] {
			if a == "-w" || a == "-u" {
				return nil, "go env -w changes the go configuration"
			}
		}
		return nil, ""
	}
	return nil, "go " + sub + " writes or runs what the guard cannot list"
}

// gitWrites reads a git command line (after "git"): the subcommands that
// write the working tree.
func gitWrites(ops []string) ([]Write, string) {
	i := 0
	for i < len(ops) && strings.HasPrefix(ops[i], "-") {
		switch o, _, _ := strings.Cut(ops[i], "="); o {
		case "-C", "-c", "--git-dir", "--work-tree", "--exec-path", "--config-env", "--namespace", "--super-prefix", "--attr-source":
			return nil, "git " + o + " points git or its configuration elsewhere"
		}
		i++
	}
	if i >= len(ops) {
		return nil, ""
	}
	sub, rest := ops[i], ops[i+1:]
	pathspecs := func() ([]string, bool) {
		for j, a := range rest {
			if a == "--" {
				return rest[j+1:], true
			}
		}
		return operandsOf(rest), false
	}
	addAll := func(ps []string) ([]Write, string) {
		var writes []Write
		for _, p := range ps {
			d := p == "." || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "*?[") || strings.HasPrefix(p, ":")
			writes = append(writes, Write{Path: p, Dir: d})
		}
		return writes, ""
	}
	repo := []Write{{Path: ".", Repo: true}}
	switch sub {
	case "status", "log", "show", "rev-parse", "ls-files", "ls-tree", "cat-file", "grep", "blame", "describe", "shortlog",
		"rev-list", "merge-base", "name-rev", "for-each-ref", "show-ref", "var", "version", "help", "whatchanged":
		return nil, ""
	case "ideate":
		return ideateWrites(rest)
	case "add", "commit":
		return repo, ""
	case "diff":
		for j, a := range rest {
			if v, ok := strings.CutPrefix(a, "--output="); ok {
				return []Write{{Path: v}}, ""
			}
			if a == "--output" && j+1 < len(rest) {
				return []Write{{Path: rest[j+1]}}, ""
			}
			if a == "--ext-diff" {
				return nil, "git diff --ext-diff runs a program the guard cannot follow"
			}
		}
		return nil, ""
	case "branch", "tag", "stash":
		if len(rest) == 0 || rest[0] == "--list" || rest[0] == "-l" || rest[0] == "-a" || rest[0] == "-v" || sub == "stash" && rest[0] == "list" {
			return nil, ""
		}
		return nil, "git " + sub + " changes refs or files the guard cannot list"
	case "checkout":
		ps, dashed := pathspecs()
		if dashed {
			return addAll(ps)
		}
		return []Write{{Path: ".", Dir: true}}, ""
	case "restore", "rm", "mv":
		ps, _ := pathspecs()
		if sub == "restore" {
			staged, worktree := false, false
			for _, a := range rest {
				staged = staged || a == "--staged" || a == "-S"
				worktree = worktree || a == "--worktree" || a == "-W"
			}
			if staged && !worktree {
				return repo, ""
			}
			for j, a := range rest {
				if (a == "-s" || a == "--source") && j+1 < len(rest) {
					ps = removeOne(ps, rest[j+1])
				}
			}
		}
		if len(ps) == 0 {
			return []Write{{Path: ".", Dir: true}}, ""
		}
		return addAll(ps)
	case "reset":
		for _, a := range rest {
			if a == "--hard" || a == "--merge" || a == "--keep" {
				return nil, "git reset " + a + " changes files the guard cannot list"
			}
		}
		return repo, ""
	}
	return nil, "git " + sub + " changes files the guard cannot list"
}

// ideateVerbs are git ideate's verbs that write nothing the guard
// counts: they read, or they judge (a gate's verdict, a test run's
// outcomes, a plan check: what the reviewers and workers are there for).
var ideateVerbs = map[string]bool{
	"record read": true, "record prime": true, "work get": true, "work list": true, "work ready": true, "work events": true,
	"steering read": true, "telemetry": true, "test classify": true, "test run": true, "plan show": true, "plan check": true,
	"task list": true, "task scope": true, "task show": true, "exec log": true, "escalations": true, "symbols find": true,
	"symbols defs": true, "gate": true, "memory list": true, "memory check": true, "transcripts du": true, "retro": true,
	"doctor": true, "help": true,
}

// ideateWrites reads a git ideate command line (after "ideate"): a verb
// of ideateVerbs writes nothing; any other (record append, work create,
// task start, sync, …, and work ready --claim, escalations --check-wave)
// writes the repository of the directory it runs in (-C), refs/ideate/*.
func ideateWrites(args []string) ([]Write, string) {
	dir := "."
	var words []string
	writes := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "--chdir":
			if i+1 < len(args) {
				dir = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--chdir="):
			dir = strings.TrimPrefix(a, "--chdir=")
		case a == "--claim" || strings.HasPrefix(a, "--claim=") || a == "--check-wave" || strings.HasPrefix(a, "--check-wave="):
			writes = true
		case !strings.HasPrefix(a, "-") && len(words) < 2:
			words = append(words, a)
		}
	}
	verb := strings.Join(words, " ")
	if !writes && (len(words) == 0 || ideateVerbs[verb] || ideateVerbs[words[0]]) {
		return nil, ""
	}
	return []Write{{Path: dir, Repo: true}}, ""
}

func removeOne(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return append(append([]string(nil), list[:i]...), list[i+1:]...)
		}
	}
	return list
}
