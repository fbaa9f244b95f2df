package gates

import (
	"bufio"
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/pathglob"
	"github.com/ideate/git-ideate/internal/shell"
)

// CostName is the bounded-cost gate: asked before a bound execution
// agent's Bash call, it denies an expensive command on a target wider
// than the agent's task, naming the smallest safe one.
const CostName Name = "cost"

// OverrideVar is the assignment that overrides the cost gate for one
// command: `IDEATE_COST_OVERRIDE="why" go test ./...`. The reason must not
// be empty; the verdict then passes with an "override" reason, which the
// hooks write to the execution log.
const OverrideVar = "IDEATE_COST_OVERRIDE"

// CostRules are the cost rules standards.md adds to the defaults (its
// `## Cost rules` section, and the `costly:` key of a runner). Each entry
// is a command prefix, compared word by word after wrappers are taken off
// (`docker compose up`, `make e2e`).
type CostRules struct {
	Costly []string `json:"costly,omitempty"` // denied from a task (unless overridden)
	Allow  []string `json:"allow,omitempty"`  // always passed, whatever the defaults say
}

// CostFacts is what the cost gate judges a Bash call against: the bound
// task, where the call runs, the task's scope and declared tests, and
// the rules. The hooks build it from the agent's binding and the task's
// contract; nil facts (an agent bound to no task) pass.
type CostFacts struct {
	Task  string
	Top   string   // the task's worktree: scope globs and targets are relative to it
	Cwd   string   // the call's directory
	Scope []string // the task's scope globs (git wildmatch, '!' negates)
	Tests []string // the task's declared test ids
	// TestGlobs tell test files among the scope (the runners' globs).
	TestGlobs []string
	Rules     CostRules
	// RulesErr, when set, says why the rules could not be read: every
	// Bash call is then denied with it.
	RulesErr string
	// Fingerprint is the state of the task's worktree now (HEAD, the
	// index, the files of the scope; see CostRun), "" when it could not
	// be read. Earlier is the newest remembered run of the same expensive
	// command (CostKey) in the task's worktree, nil when none is known.
	// The two make the same-unchanged-tree rule (see Cost).
	Fingerprint string
	Earlier     *CostRun
}

// Cost is the bounded-cost gate (CostName). It judges BeforeTool Bash
// calls with Input.Cost set and passes everything else. The line is read
// with the shell reader (internal/shell: the whole parse tree, `cd DIR`
// followed, `sh -c`/`eval` text and here-documents fed to a shell read
// too, wrappers looked through), then the runners uv run, poetry run,
// npx, pnpm exec and python -m are taken off. Opaque inline programs (python -c,
// node -e, …) and unknown commands pass. A simple command FAILs when it
// is
//
//   - go test|build|vet|install over a recursive pattern (./..., all, a
//     directory's /...) reaching beyond the task's scope;
//   - cargo test|build|check|clippy|bench|nextest run over a workspace (no
//     -p/--package/--manifest-path, --workspace/--all, or a workspace
//     manifest where it runs);
//   - pytest with no target, or a directory holding more than the task's
//     files, from outside the scope;
//   - npm/yarn/pnpm/bun test (npx jest, vitest, mocha) with no file and no
//     workspace named, from outside the scope;
//   - make with no target or an aggregate one (all, test, check, ci, …);
//   - docker build, buildx, compose build|up;
//   - any command standards.md marks costly;
//   - an expensive command (a test, build or vet run, see CostKey) whose
//     key equals Earlier's, run on a worktree whose Fingerprint equals
//     the one Earlier ran on: the same unchanged tree again (class
//     "rerun"; the reason names the earlier run and its result);
//
// unless standards.md allows it, or the command carries OverrideVar with
// a reason (PASS, with an "override" reason). The reason of a FAIL names
// the smallest safe target. Rules that could not be read (RulesErr) make
// every Bash call UNVERIFIABLE.
var Cost = Func(cost)

func cost(_ context.Context, in Input) (Verdict, error) {
	if in.Point != BeforeTool || in.Tool != "Bash" || in.Cost == nil {
		return Verdict{Result: PASS}, nil
	}
	return CostDecide(in.Cost, in.Command), nil
}

// CostDecide is the cost gate's decision on one command line. It reads
// no repository beyond a few small manifests (Cargo.toml) and never runs
// anything; any input, however malformed, gets a verdict.
func CostDecide(f *CostFacts, line string) Verdict {
	if f.RulesErr != "" {
		return Verdict{Gate: CostName, Result: UNVERIFIABLE, Reasons: []Reason{{Class: "rules_unreadable",
			Detail: "the cost rules cannot be read, so no command is let through: " + f.RulesErr}}}
	}
	c := costCheck{f: f}
	c.cwd, c.known = relTo(f.Top, f.Cwd)
	c.line(line, c.cwd, c.known)
	if c.hit == nil {
		c.rerun()
	}
	v := Verdict{Gate: CostName, Result: PASS}
	switch {
	case c.hit != nil:
		v.Result = FAIL
		v.Reasons = []Reason{*c.hit}
	case len(c.overrides) > 0:
		v.Reasons = c.overrides
	}
	return v
}

type costCheck struct {
	f         *CostFacts
	cwd       string // the call's directory relative to Top ("." at the top)
	known     bool   // cwd is inside Top
	hit       *Reason
	overrides []Reason
	// The expensive simple commands of the line (CostKey): their keys,
	// whether one sits where its directory is unknown, and whether one
	// carries no override.
	keys      []string
	keyUnsure bool
	plainRun  bool
	override  string // the override of an expensive command, when one has it
	collect   bool   // only gather the keys (CostKey): judge nothing
}

// line reads one command line run from dir (shell.Read: wrappers,
// cd, sh -c, eval and substitutions followed).
func (c *costCheck) line(text, dir string, known bool) {
	// A line that does not parse runs nothing: the shell refuses it.
	for _, cmd := range shell.Read(text).Commands {
		if c.hit != nil {
			return
		}
		if len(cmd.Args) == 0 {
			continue
		}
		d, k := c.at(dir, known, cmd)
		words := unwrap(cmd.Args)
		override := ""
		for _, e := range cmd.Env {
			if v, ok := strings.CutPrefix(e, OverrideVar+"="); ok && strings.TrimSpace(v) != "" {
				override = strings.TrimSpace(v)
			}
		}
		if len(words) == 0 {
			continue
		}
		switch path.Base(words[0]) {
		case "cd", "pushd", "popd", "eval", "sh", "bash", "zsh", "dash", "ksh":
			continue // the reader followed them
		}
		c.note(cmd.Words, words, override, d, k)
		if c.collect {
			continue
		}
		hit := c.simple(words, d, k)
		if hit == nil {
			continue
		}
		if override != "" {
			c.overrides = append(c.overrides, Reason{Class: "override", Detail: "overridden (" + OverrideVar + "): " + override + "; the gate would have said: " + hit.Detail})
			continue
		}
		c.hit = hit
		return
	}
}

// at is where a command of the line runs, relative to Top.
func (c *costCheck) at(dir string, known bool, cmd shell.Command) (string, bool) {
	if !cmd.DirKnown {
		return dir, false
	}
	if cmd.Dir == "." {
		return dir, known
	}
	return c.move(dir, known, cmd.Dir)
}

// move is dir after `cd to`.
func (c *costCheck) move(dir string, known bool, to string) (string, bool) {
	if filepath.IsAbs(to) {
		return relTo(c.f.Top, to)
	}
	if !known {
		return dir, false
	}
	p := path.Clean(path.Join(dir, filepath.ToSlash(to)))
	if p == ".." || strings.HasPrefix(p, "../") {
		return p, false
	}
	return p, true
}

// relTo is p relative to top, slash-separated; ok is false when p is not
// inside top (or either is unknown).
func relTo(top, p string) (string, bool) {
	if top == "" {
		return ".", false
	}
	if p == "" {
		return ".", true
	}
	if !filepath.IsAbs(p) {
		return path.Clean(filepath.ToSlash(p)), true
	}
	rel, err := filepath.Rel(top, p)
	if err != nil {
		return ".", false
	}
	rel = filepath.ToSlash(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return ".", false
	}
	return rel, true
}

// unwrap takes off the runners that run a test tool (uv run, npx,
// pnpm exec, python -m pytest); the shell's own wrappers are off already.
func unwrap(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case (w == "uv" || w == "poetry" || w == "pipenv" || w == "pdm" || w == "hatch" || w == "rye") && len(words) > 1 && words[1] == "run":
			words = skipOpts(words[2:], map[string]bool{"--with": true, "--python": true, "-p": true, "--env": true, "-e": true})
		case (w == "npx" || w == "bunx" || w == "pnpx"):
			words = skipOpts(words[1:], map[string]bool{"-p": true, "--package": true})
		case (w == "pnpm" || w == "yarn") && len(words) > 1 && (words[1] == "exec" || words[1] == "dlx"):
			words = words[2:]
		case (strings.HasPrefix(w, "python") || w == "py") && len(words) > 2 && words[1] == "-m" && words[2] == "pytest":
			words = words[2:]
		default:
			return words
		}
	}
	return words
}

// skipOpts drops leading options; those in valued take the next word.
func skipOpts(words []string, valued map[string]bool) []string {
	for len(words) > 0 && strings.HasPrefix(words[0], "-") && words[0] != "-" {
		if words[0] == "--" {
			return words[1:]
		}
		if valued[words[0]] {
			words = words[1:] // the option's value
		}
		if len(words) > 0 {
			words = words[1:]
		}
	}
	return words
}

// simple judges one unwrapped simple command run from dir.
func (c *costCheck) simple(words []string, dir string, known bool) *Reason {
	for _, a := range c.f.Rules.Allow {
		if hasPrefixWords(words, a) {
			return nil
		}
	}
	for _, a := range c.f.Rules.Costly {
		if hasPrefixWords(words, a) {
			return &Reason{Class: "costly", Detail: "standards.md marks `" + a + "` costly; " + c.safe("")}
		}
	}
	prog := path.Base(words[0])
	switch prog {
	case "go":
		return c.goCmd(words, dir, known)
	case "cargo":
		return c.cargo(words, dir, known)
	case "pytest", "py.test":
		return c.pytest(words, dir, known)
	case "npm", "yarn", "pnpm", "bun", "jest", "vitest", "mocha":
		return c.js(prog, words, dir, known)
	case "make", "gmake":
		return c.make(words, dir, known)
	case "docker", "docker-compose", "podman":
		return c.docker(prog, words)
	}
	return nil
}

func hasPrefixWords(words []string, prefix string) bool {
	p := strings.Fields(prefix)
	if len(p) == 0 || len(p) > len(words) {
		return false
	}
	for i, w := range p {
		if i == 0 {
			if path.Base(words[0]) != w && words[0] != w {
				return false
			}
			continue
		}
		if words[i] != w {
			return false
		}
	}
	return true
}

// ---- the task's scope

// scopeUnit is one positive scope glob read as a place: a directory
// subtree (a glob with wildcards: its literal directory), or one file.
type scopeUnit struct {
	dir  string // the directory ("." for the top)
	file string // the file, when the glob names one exactly
	tree bool   // everything under dir
}

func (c *costCheck) units() []scopeUnit {
	var out []scopeUnit
	for _, g := range c.f.Scope {
		g = strings.TrimPrefix(strings.TrimSpace(g), "./")
		if g == "" || strings.HasPrefix(g, "!") {
			continue
		}
		if i := strings.IndexAny(g, "*?["); i >= 0 {
			d := path.Dir(g[:i] + "x")
			out = append(out, scopeUnit{dir: d, tree: true})
			continue
		}
		g = strings.TrimSuffix(g, "/")
		out = append(out, scopeUnit{dir: path.Dir(g), file: g})
	}
	return out
}

// under reports whether p is d or below it.
func under(p, d string) bool {
	return d == "." || p == d || strings.HasPrefix(p, d+"/")
}

// treeInScope: is everything below dir the task's? (A scope without
// positive globs owns nothing we can tell: everything passes.)
func (c *costCheck) treeInScope(dir string) bool {
	us := c.units()
	if len(us) == 0 {
		return true
	}
	for _, u := range us {
		if u.tree && under(dir, u.dir) {
			return true
		}
	}
	return false
}

// pathWide reports whether the file or directory p holds more than the
// task's part of it: an ancestor of a scope unit that is not itself
// wholly in scope. A path beside the scope is not wide (it is another
// task's, and cheap to ask about).
func (c *costCheck) pathWide(p string) bool {
	us := c.units()
	if len(us) == 0 || c.treeInScope(p) {
		return false
	}
	for _, u := range us {
		if u.file == p {
			return false
		}
		if under(u.dir, p) {
			return true
		}
	}
	return false
}

// goDirs are the scope's Go package directories.
func (c *costCheck) scopeDirs(ext string) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range c.units() {
		if u.file != "" && ext != "" && !strings.HasSuffix(u.file, ext) {
			continue
		}
		if !seen[u.dir] {
			seen[u.dir] = true
			out = append(out, u.dir)
		}
	}
	return out
}

// testFiles are the scope's test files: scope globs naming one file that
// is a test file (TestGlobs, or the common test names).
func (c *costCheck) testFiles(exts ...string) []string {
	var out []string
	var tg *pathglob.Set
	if len(c.f.TestGlobs) > 0 {
		tg, _ = pathglob.Compile(c.f.TestGlobs)
	}
	for _, u := range c.units() {
		if u.file == "" {
			continue
		}
		ok := false
		for _, e := range exts {
			if strings.HasSuffix(u.file, e) {
				ok = true
			}
		}
		if !ok {
			continue
		}
		base := path.Base(u.file)
		if (tg != nil && tg.Match(u.file)) || strings.HasPrefix(base, "test_") || strings.Contains(base, "_test.") ||
			strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") {
			out = append(out, u.file)
		}
	}
	return out
}

// safe names the task's declared tests run through git ideate, the
// fallback smallest target.
func (c *costCheck) safe(alt string) string {
	if alt != "" {
		return "the smallest safe target is `" + alt + "`"
	}
	if c.f.Task != "" {
		return "run the task's declared tests instead: `git ideate test run --task " + c.f.Task + "`"
	}
	return "run the task's declared tests instead (`git ideate test run --task <task>`)"
}

func (c *costCheck) owns() string {
	var s []string
	for _, g := range c.f.Scope {
		s = append(s, g)
		if len(s) == 4 {
			s = append(s, "…")
			break
		}
	}
	t := c.f.Task
	if t == "" {
		t = "this task"
	} else {
		t = "task " + t
	}
	return t + " owns " + strings.Join(s, ", ")
}

// rel joins a target written in dir to a top-relative path.
func rel(dir, p string) (string, bool) {
	if filepath.IsAbs(p) {
		return "", false
	}
	q := path.Clean(path.Join(dir, p))
	if q == ".." || strings.HasPrefix(q, "../") {
		return "", false
	}
	return q, true
}

// ---- go

// goValueFlags are go test's flags that take a value. (This and the
// gates' other word sets are slices, laid out by the linker, not
// package-level maps, which every git-ideate process would build at
// init.)
var goValueFlags = []string{
	"run", "bench", "count", "timeout", "tags", "coverprofile", "o", "p", "parallel", "cpu", "benchtime",
	"covermode", "coverpkg", "exec", "ldflags", "gcflags", "asmflags", "mod", "modfile", "skip", "shuffle",
	"fuzz", "fuzztime", "fuzzminimizetime", "list", "outputdir", "blockprofile", "cpuprofile", "memprofile",
	"mutexprofile", "trace", "vet", "pkgdir", "toolexec", "overlay", "pgo", "C", "blockprofilerate",
	"memprofilerate", "mutexprofilefraction",
}

func (c *costCheck) goCmd(words []string, dir string, known bool) *Reason {
	i := 1
	for i < len(words) && strings.HasPrefix(words[i], "-") {
		if words[i] == "-C" && i+1 < len(words) {
			if d, ok := rel(dir, words[i+1]); ok && known {
				dir = d
			} else {
				known = false
			}
			i++
		}
		i++
	}
	if i >= len(words) {
		return nil
	}
	sub := words[i]
	if sub != "test" && sub != "build" && sub != "vet" && sub != "install" {
		return nil
	}
	var pats []int
	for j := i + 1; j < len(words); j++ {
		w := words[j]
		if w == "-args" || w == "--args" {
			break
		}
		if strings.HasPrefix(w, "-") {
			name := strings.TrimLeft(w, "-")
			if k := strings.IndexByte(name, '='); k >= 0 {
				continue
			}
			if slices.Contains(goValueFlags, name) {
				j++
			}
			continue
		}
		pats = append(pats, j)
	}
	wide := ""
	for _, j := range pats {
		p := words[j]
		switch {
		case p == "all" || p == "..." || p == "std" || p == "cmd":
			wide = p
		case strings.HasPrefix(p, ".") || strings.HasPrefix(p, "/"):
			base, rec := strings.CutSuffix(p, "/...")
			if p == "..." {
				base, rec = ".", true
			}
			if !rec || !known {
				continue
			}
			r, ok := rel(dir, base)
			if !ok {
				continue
			}
			if !c.treeInScope(r) {
				wide = p
			}
		}
		if wide != "" {
			break
		}
	}
	if wide == "" {
		return nil
	}
	dirs := c.scopeDirs(".go")
	if len(dirs) == 0 {
		dirs = c.scopeDirs("")
	}
	alt := ""
	if len(dirs) > 0 {
		var out []string
		out = append(out, words[:i+1]...)
		for j := i + 1; j < len(words); j++ {
			isPat := false
			for _, k := range pats {
				if k == j {
					isPat = true
				}
			}
			if !isPat {
				out = append(out, words[j])
			}
		}
		for _, d := range dirs {
			out = append(out, "./"+strings.TrimPrefix(d+"/", "./"))
		}
		if known && dir != "." {
			out = append([]string{"cd", relBack(dir), "&&"}, out...)
		}
		alt = strings.Join(out, " ")
	}
	return &Reason{Class: "too_wide", Detail: "`go " + sub + " " + wide + "` builds and runs packages beyond the task (" + c.owns() + "); " + c.safe(alt)}
}

// relBack is how to get from dir back to the top.
func relBack(dir string) string {
	n := strings.Count(dir, "/") + 1
	return strings.TrimSuffix(strings.Repeat("../", n), "/")
}

// ---- cargo

var cargoSubs = []string{
	"test", "build", "check", "clippy", "bench", "nextest", "b", "t", "c",
}

func (c *costCheck) cargo(words []string, dir string, known bool) *Reason {
	i := 1
	for i < len(words) && strings.HasPrefix(words[i], "+") || i < len(words) && strings.HasPrefix(words[i], "-") {
		i++
	}
	if i >= len(words) || !slices.Contains(cargoSubs, words[i]) {
		return nil
	}
	sub := words[i]
	workspace := false
	for _, w := range words[i+1:] {
		if w == "--" {
			break
		}
		switch {
		case w == "-p" || w == "--package" || strings.HasPrefix(w, "--package=") || (strings.HasPrefix(w, "-p") && len(w) > 2) ||
			w == "--manifest-path" || strings.HasPrefix(w, "--manifest-path="):
			return nil
		case w == "--workspace" || w == "--all":
			workspace = true
		}
	}
	if !workspace {
		if !known || c.treeInScope(dir) {
			return nil
		}
		data, err := osproc.ReadRegular(filepath.Join(c.f.Top, filepath.FromSlash(dir), "Cargo.toml"), manifestMax)
		if err != nil || !strings.Contains(string(data), "[workspace]") {
			return nil // a crate of its own (or no manifest here): not the workspace
		}
	}
	var alt []string
	named := map[string]bool{}
	for _, d := range c.scopeDirs(".rs") {
		if name := c.crateOf(d); name != "" && !named[name] {
			named[name] = true
			alt = append(alt, "-p "+name)
		}
	}
	a := ""
	if len(alt) > 0 {
		a = "cargo " + sub + " " + strings.Join(alt, " ")
	}
	return &Reason{Class: "too_wide", Detail: "`cargo " + sub + "` over the whole workspace builds every member (" + c.owns() + "); " + c.safe(a)}
}

// crateOf is the name of the crate holding dir: the nearest Cargo.toml
// with a [package] name, not above Top.
func (c *costCheck) crateOf(dir string) string {
	for d := dir; ; d = path.Dir(d) {
		// A worker writes the manifests of its scope: a FIFO there would
		// hold a plain open (and the hook) forever.
		f, _, err := osproc.OpenRegular(filepath.Join(c.f.Top, filepath.FromSlash(d), "Cargo.toml"))
		if err == nil {
			sc := bufio.NewScanner(f)
			inPkg := false
			name := ""
			for sc.Scan() {
				l := strings.TrimSpace(sc.Text())
				if strings.HasPrefix(l, "[") {
					inPkg = l == "[package]"
					continue
				}
				if k, v, ok := strings.Cut(l, "="); ok && inPkg && strings.TrimSpace(k) == "name" {
					name = strings.Trim(strings.TrimSpace(v), `"'`)
					break
				}
			}
			f.Close()
			if name != "" {
				return name
			}
		}
		if d == "." || d == "/" || d == "" {
			return ""
		}
	}
}

// ---- pytest

var pytestValueFlags = []string{
	"-k", "-m", "-c", "-p", "-o", "-n", "-W", "--rootdir", "--junitxml", "--junit-xml", "--maxfail", "--tb",
	"--basetemp", "--durations", "--confcutdir", "--ignore", "--deselect", "--log-level", "--cov-report",
	"--dist", "--numprocesses", "--timeout", "--override-ini", "--import-mode", "-r",
}

func (c *costCheck) pytest(words []string, dir string, known bool) *Reason {
	var targets []string
	for j := 1; j < len(words); j++ {
		w := words[j]
		if strings.HasPrefix(w, "-") {
			if slices.Contains(pytestValueFlags, w) {
				j++
			}
			continue
		}
		targets = append(targets, w)
	}
	return c.fileTargets("pytest", words, targets, dir, known, []string{".py"}, "pytest")
}

// fileTargets judges a runner whose targets are files or directories
// (pytest, jest, vitest): none means the whole tree below dir.
func (c *costCheck) fileTargets(what string, words, targets []string, dir string, known bool, exts []string, runner string) *Reason {
	if !known {
		return nil
	}
	wide := ""
	if len(targets) == 0 {
		if c.pathWide(dir) {
			wide = "with no target"
		}
	}
	for _, t := range targets {
		p, _, _ := strings.Cut(t, "::")
		if strings.ContainsAny(p, "*?[$") {
			continue
		}
		r, ok := rel(dir, p)
		if !ok {
			continue
		}
		if c.pathWide(r) {
			wide = "on " + t
			break
		}
	}
	if wide == "" {
		return nil
	}
	var alt []string
	for _, id := range c.f.Tests {
		if strings.Contains(id, "::") && runner == "pytest" {
			alt = append(alt, id)
		}
	}
	if len(alt) == 0 {
		alt = c.testFiles(exts...)
	}
	a := ""
	if len(alt) > 0 {
		a = runner + " " + strings.Join(alt, " ")
		if known && dir != "." {
			a = "cd " + relBack(dir) + " && " + a
		}
	}
	return &Reason{Class: "too_wide", Detail: "`" + what + "` " + wide + " runs the whole suite (" + c.owns() + "); " + c.safe(a)}
}

// ---- npm, yarn, pnpm, bun, jest, vitest, mocha

var jsExts = []string{".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts"}

func (c *costCheck) js(prog string, words []string, dir string, known bool) *Reason {
	args := words[1:]
	direct := prog == "jest" || prog == "vitest" || prog == "mocha"
	if !direct {
		// The package manager's test script: npm test, npm t, npm run test,
		// yarn test, pnpm test, bun test.
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			a := args[0]
			if a == "-w" || a == "--workspace" || a == "--filter" || a == "-F" || a == "--prefix" || a == "-C" || a == "--dir" || a == "--cwd" ||
				strings.HasPrefix(a, "--workspace=") || strings.HasPrefix(a, "--filter=") || strings.HasPrefix(a, "--prefix=") {
				return nil // one workspace or package named
			}
			args = args[1:]
		}
		if len(args) == 0 {
			return nil
		}
		s := args[0]
		if (s == "run" || s == "run-script") && len(args) > 1 {
			args = args[1:]
			s = args[0]
		}
		if s != "test" && s != "t" && s != "tst" && !strings.HasPrefix(s, "test:") {
			return nil
		}
		args = args[1:]
	} else if prog == "vitest" && len(args) > 0 && (args[0] == "run" || args[0] == "related") {
		args = args[1:]
	}
	var targets []string
	for j := 0; j < len(args); j++ {
		a := args[j]
		if a == "--" {
			continue
		}
		if a == "-w" || a == "--workspace" || a == "--filter" || a == "--project" || a == "--selectProjects" ||
			strings.HasPrefix(a, "--workspace=") || strings.HasPrefix(a, "--filter=") || strings.HasPrefix(a, "--project=") {
			return nil
		}
		if strings.HasPrefix(a, "-") {
			if a == "-t" || a == "--testNamePattern" || a == "-c" || a == "--config" || a == "--reporter" || a == "--grep" || a == "-g" {
				j++
			}
			continue
		}
		targets = append(targets, a)
	}
	what := strings.Join(words[:len(words)-len(args)], " ")
	runner := "npx " + prog
	if !direct {
		runner = strings.TrimSpace(what) + " --"
	}
	if prog == "vitest" {
		runner = "npx vitest run"
	}
	return c.fileTargets(what, words, targets, dir, known, jsExts, runner)
}

// ---- make

var makeAggregates = []string{
	"", "all", "test", "tests", "check", "ci", "build", "e2e", "integration", "test-all", "coverage", "verify",
	"release",
}

func (c *costCheck) make(words []string, dir string, known bool) *Reason {
	var targets []string
	for j := 1; j < len(words); j++ {
		w := words[j]
		switch {
		case w == "-C" || w == "--directory" || w == "-f" || w == "--file" || w == "--makefile" || w == "-j" && j+1 < len(words) && isNumber(words[j+1]) || w == "-I" || w == "-o" || w == "-W":
			if (w == "-C" || w == "--directory") && j+1 < len(words) {
				if d, ok := rel(dir, words[j+1]); ok && known {
					dir = d
				} else {
					known = false
				}
			}
			j++
		case strings.HasPrefix(w, "-"):
			if strings.HasPrefix(w, "-C") && len(w) > 2 {
				if d, ok := rel(dir, w[2:]); ok && known {
					dir = d
				} else {
					known = false
				}
			}
		case shell.IsAssignment(w):
		default:
			targets = append(targets, w)
		}
	}
	if known && dir != "." && c.treeInScope(dir) {
		return nil
	}
	if len(targets) == 0 {
		targets = []string{""}
	}
	for _, t := range targets {
		if slices.Contains(makeAggregates, t) {
			name := "`make`"
			if t != "" {
				name = "`make " + t + "`"
			}
			return &Reason{Class: "too_wide", Detail: name + " runs the project's whole build or suite (" + c.owns() + "); " + c.safe("")}
		}
	}
	return nil
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ---- docker

func (c *costCheck) docker(prog string, words []string) *Reason {
	args := skipOpts(words[1:], map[string]bool{"-H": true, "--host": true, "--context": true, "-c": true, "--config": true, "-f": true, "--file": true, "-p": true, "--project-name": true, "--log-level": true, "-l": true})
	if prog == "docker" && len(args) > 0 && args[0] == "compose" {
		args = skipOpts(args[1:], map[string]bool{"-f": true, "--file": true, "-p": true, "--project-name": true, "--profile": true, "--env-file": true})
		prog = "docker compose"
	} else if prog == "docker-compose" {
		prog = "docker compose"
	}
	if len(args) == 0 {
		return nil
	}
	sub := args[0]
	costly := false
	switch prog {
	case "docker compose":
		costly = sub == "build" || sub == "up" || sub == "run" && containsWord(args, "--build")
	default:
		costly = sub == "build" || sub == "buildx" || sub == "image" && len(args) > 1 && args[1] == "build" || sub == "bake"
	}
	if !costly {
		return nil
	}
	return &Reason{Class: "costly", Detail: "`" + prog + " " + sub + "` builds images, which no task's tests need (" + c.owns() + "); " + c.safe("")}
}

func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// manifestMax bounds a Cargo.toml read whole.
const manifestMax = 1 << 20
