package gates

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/pathglob"
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
	// Confined: a bound execution agent's Bash command will run under
	// operating-system confinement (the hook rewrites it), which holds
	// what it writes; the guard reads it only without confinement.
	Confined bool
	// ReadOnlyTool: the call's MCP tool is known to change nothing.
	ReadOnlyTool bool
	// Agent: the binding of an execution or reviewer role's sub-agent
	// and an execution role's task's contract (set for every such
	// sub-agent, bound or not).
	Agent *AgentFacts
	// Dispatch: an Agent call that would start an execution or reviewer
	// role.
	Dispatch *DispatchFacts
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
//   - a reviewer (structural-reviewer, final-gate, archivist) is bound
//     to the task or sprint its dispatch named, else refused every call,
//     and writes nothing;
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
// agent and ignored for anyone else. A bound execution agent's Bash
// command that will run confined (GuardFacts.Confined) passes: the
// confinement holds it.
var Guard = Func(guard)

// readsOnly are the host's tools that change no file and run nothing.
var readsOnly = map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true, "NotebookRead": true,
	"TodoWrite": true, "TaskCreate": true, "TaskGet": true, "TaskUpdate": true, "TaskList": true,
	"WebFetch": true, "WebSearch": true, "ToolSearch": true}

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
	if in.Tool == "Agent" || in.Tool == "Task" {
		switch {
		case f.Subagent && (IsExecutionRole(in.Role) || IsReviewerRole(in.Role)):
			return verdictOf(guardFail{class: "dispatch", detail: "a " + in.Role + " dispatches no agents; do the task's work yourself"}), nil
		case f.Dispatch != nil:
			return judgeDispatch(f.Dispatch), nil
		}
		return Verdict{Result: PASS}, nil
	}
	if f.Subagent && IsExecutionRole(in.Role) {
		if fail := judgeAgent(in.Role, f.Agent); fail != nil {
			return verdictOf(*fail), nil
		}
	}
	if f.Subagent && IsReviewerRole(in.Role) {
		if fail := judgeReviewer(in.Role, f.Agent); fail != nil {
			return verdictOf(*fail), nil
		}
	}
	exec := f.Bound && IsExecutionRole(in.Role)
	// A reviewer writes nothing; a sub-agent bound to no task writes
	// nothing in the repository while a sprint executes. Both are held
	// to commands whose writes can be told.
	readOnly := f.Subagent && (IsReviewerRole(in.Role) || f.Sprint && !IsExecutionRole(in.Role))
	strict := exec || readOnly
	var targets []writeTarget
	switch in.Tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		if len(in.Paths) == 0 && (exec || f.Subagent) {
			return verdictOf(guardFail{class: "unknown_target", detail: in.Tool + " names no file", unverifiable: true}), nil
		}
		for _, p := range in.Paths {
			if exec && hardLinked(f.Cwd, p) {
				return verdictOf(guardFail{class: "hard_link", detail: "this file has another name (a hard link): a write through it changes a file the guard cannot see; remove the link and write the file itself", path: p}), nil
			}
			targets = append(targets, writeTarget{path: p, content: in.Tool == "Write" && f.HasContent})
		}
	case "Bash", "Monitor":
		// Monitor runs its command as Bash does, and no confinement
		// holds it: an execution agent does not use it (below), anyone
		// else's command is read as a Bash command is.
		if exec && f.Confined && in.Tool == "Bash" {
			return Verdict{Result: PASS}, nil
		}
		if exec && in.Tool == "Monitor" {
			return verdictOf(guardFail{class: "unknown_tool", detail: "a " + in.Role + " runs commands through Bash, where they run confined; Monitor's are not", unverifiable: true}), nil
		}
		w, unknown := BashWrites(in.Command)
		if unknown != "" {
			if strict {
				return verdictOf(guardFail{class: "unknown_command", detail: "cannot tell what this command writes: " + unknown +
					"; no operating-system confinement holds commands here, so the guard reads them (the weaker mode) and runs only what it can read: use plain commands (Write/Edit for files)", unverifiable: true}), nil
			}
			// Outside an execution role the known targets still count.
		}
		for _, t := range w {
			targets = append(targets, writeTarget{path: t.Path, dir: t.Dir, mkdir: t.Mkdir, repo: t.Repo})
		}
	default:
		// An MCP tool runs in its server's process, where no confinement
		// holds it and no path of the call says what it changes.
		if strict && strings.HasPrefix(in.Tool, "mcp__") && !f.ReadOnlyTool {
			who := "a " + in.Role
			if in.Role == "" {
				who = "a sub-agent bound to no task, while a sprint executes,"
			}
			return verdictOf(guardFail{class: "mcp_tool", detail: who + " uses only MCP tools that change nothing; " + in.Tool + " is not one"}), nil
		}
		// Another host tool may run what no confinement holds or stop
		// a confined call before it puts back what it changed
		// (TaskStop): a bound execution agent uses only the tools
		// known to change nothing.
		if exec && !readsOnly[in.Tool] && !strings.HasPrefix(in.Tool, "mcp__") {
			return verdictOf(guardFail{class: "unknown_tool", detail: "a " + in.Role + " uses Bash, the file tools and tools that change nothing; " + in.Tool + " is not one the guard can judge", unverifiable: true}), nil
		}
		return Verdict{Result: PASS}, nil
	}
	for _, t := range targets {
		if readOnly {
			if fail := f.judgeReadOnly(in.Role, t); fail != nil {
				return verdictOf(*fail), nil
			}
			continue
		}
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
	repo    bool // the repository of the working tree at path (Write.Repo)
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
		if !t.repo && gitPath(rel) {
			// Git's own files: the .git file leads git (and the
			// confinement) to a git directory, and what lies under a
			// directory named .git git status never shows.
			return &guardFail{class: "git_file", detail: "a " + role + " writes no file of git's own (.git); git writes them", path: rel}
		}
		switch {
		case rel == AttemptInit || t.dir && (rel == path.Dir(AttemptInit) || rel == "." || rel == ""):
			return &guardFail{class: "init_read_only", detail: "init.md is written by git ideate only; write your report to " + AttemptOutput, path: rel}
		case rel == AttemptOutput && !t.dir:
			return nil // the worker's own report, whatever its role
		}
		if t.mkdir || t.repo {
			// Its own worktree's index and branch are the worker's to
			// commit to; the gates judge what it commits.
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
	if !f.Subagent && f.Sprint && !t.dir && !t.mkdir && !t.repo && f.Top != "" {
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
	// An existing shim: its first 64 KiB hold the marker. The worker makes
	// what sits at abs: a FIFO there would hold a plain open forever.
	fh, _, err := osproc.OpenRegular(abs)
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

// hardLinked reports whether p (against cwd, symlinks followed) is a
// regular file with more than one name.
func hardLinked(cwd, p string) bool {
	abs := resolve(cwd, p)
	if abs == "" {
		return false
	}
	fi, err := os.Stat(abs)
	return err == nil && fi.Mode().IsRegular() && linkCount(fi) > 1
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

// gitPath reports whether rel (slash form) names .git or lies under a
// directory so named (in any case: a case-insensitive file system
// takes .GIT for .git).
func gitPath(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}
