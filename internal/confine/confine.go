package confine

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/pathglob"
	"github.com/pjbgf/sha1cd"
)

// Roles whose file classes Run holds.
const (
	RoleRed      = "red-worker"
	RoleGreen    = "green-worker"
	RoleScaffold = "scaffolder"
)

// The attempt's files: init.md no role changes, output.md every role may.
const (
	initFile   = ".ideate/init.md"
	outputFile = ".ideate/output.md"
)

// A Spec is one confined run.
type Spec struct {
	Worktree   string   // the task's worktree (absolute)
	Role       string   // RoleRed, RoleGreen or RoleScaffold
	TestGlobs  []string // the runners' test globs (git wildmatch, worktree-relative)
	ShimMarker string   // marks a shim, which a red-worker may write
	Extensions []string // source extensions: a shim is a source file (DefaultExtensions when empty)
	Frozen     []string // worktree-relative files a green-worker or scaffolder may not change
	StateDir   string   // the task's own directory for temporary files (made when missing)
	// CacheDir holds the workers' caches (GOCACHE, XDG_CACHE_HOME): one
	// for the repository's workers, apart from the caches the gates'
	// own runs read. StateDir/cache when empty.
	CacheDir string
	// Enter is the argv that enters confinement and runs the argv after
	// it: this binary's hidden entry (see Enter), used where a thread
	// cannot restrict itself and start the command (not on Linux).
	Enter []string
	Shell string // the shell that runs the command ("bash" when empty)
	// Dir is where the command starts: inside the worktree, else the
	// worktree's top.
	Dir string
	// GitDir is the repository's common git directory, found apart from
	// the worktree: the worktree's .git file must lead to it.
	GitDir string
}

// maxSaved caps the bytes of forbidden files Run keeps copies of (dirty
// or untracked ones: the others are in the index).
const maxSaved = 64 << 20

// A Result is how a confined run ended.
type Result struct {
	Code    int      // the exit status (1 when something was put back and the command said 0)
	Refused []string // what was put back, as reported on stderr
	// Changed are the worktree's paths (slash-separated, relative) whose
	// content, kind or mode the call changed, what was put back aside:
	// what the caller logs as the worker's writes (see changedPaths).
	Changed []string
	// Unlisted says why Changed could not be listed (it is then empty);
	// the command's outcome stands.
	Unlisted error
}

// changes is what changedPaths found.
type changes struct {
	paths []string
	err   error
}

// Run runs command (shell text) confined by spec, with the given
// standard streams. What the role may not change is undone when it
// returns and reported on stderr. An error means the command did not run,
// or its outcome could not be fully checked (err says what).
func Run(ctx context.Context, spec Spec, command string, stdin io.Reader, stdout, stderr io.Writer) (Result, error) {
	var res Result
	code, refused, ch, err := run(ctx, spec, command, stdin, stdout, stderr)
	res.Code, res.Refused = code, refused
	if ch != nil {
		res.Changed, res.Unlisted = ch.paths, ch.err
	}
	return res, err
}

func run(ctx context.Context, spec Spec, command string, stdin io.Reader, stdout, stderr io.Writer) (int, []string, *changes, error) {
	if !Available() {
		return -1, nil, nil, apperr.New(apperr.Unverifiable, "no operating-system confinement here (%s)", Mode())
	}
	if spec.Role != RoleRed && spec.Role != RoleGreen && spec.Role != RoleScaffold {
		return -1, nil, nil, apperr.New(apperr.Schema, "role %q is not an execution role", spec.Role)
	}
	wt, err := filepath.EvalSymlinks(spec.Worktree)
	if err != nil {
		return -1, nil, nil, apperr.Wrap(apperr.NotFound, err, "the task's worktree %s", spec.Worktree)
	}
	spec.Worktree = wt
	lay, err := layoutOf(wt, spec.GitDir)
	if err != nil {
		return -1, nil, nil, err
	}
	tmp, cache := filepath.Join(spec.StateDir, "tmp"), spec.CacheDir
	if cache == "" {
		cache = filepath.Join(spec.StateDir, "cache")
	}
	for _, d := range []string{tmp, cache, lay.logDir} {
		if d != "" {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return -1, nil, nil, apperr.Wrap(apperr.Write, err, "cannot make %s", d)
			}
		}
	}
	before, err := snapshot(ctx, &spec, lay)
	if err != nil {
		return -1, nil, nil, err
	}
	defer os.Remove(before.indexCopy)
	// The repository's object store is read-only to the command: with
	// write access, a loose object written under the name of an existing
	// one (git never checks a loose object's name against its content
	// when it reads it) would change what a later checkout of a frozen
	// file gives. The command's git writes its objects into a directory
	// of its own, which is imported by content afterwards (importObjects).
	objDir, err := os.MkdirTemp(tmp, "objects-")
	if err != nil {
		return -1, nil, nil, apperr.Wrap(apperr.Write, err, "cannot make an object directory in %s", tmp)
	}
	defer os.RemoveAll(objDir)
	writable := []string{wt, lay.admin, tmp, cache}
	if lay.refDir != "" {
		writable = append(writable, lay.refDir, lay.logDir)
	}
	shell := spec.Shell
	if shell == "" {
		shell = "bash"
	}
	// Where a thread can restrict itself (Landlock), the shell is started
	// from such a thread; elsewhere through this binary's entry.
	argv := []string{shell, "-c", command}
	if !threadConfines {
		argv = append(append(append([]string(nil), spec.Enter...), rulesArgs(writable)...), append([]string{"--"}, argv...)...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	osproc.Group(cmd)
	cmd.Dir = wt
	if d, err := filepath.EvalSymlinks(spec.Dir); err == nil && d != "" {
		if rel, err := filepath.Rel(wt, d); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			cmd.Dir = d
		}
	}
	cmd.Env = append(childEnv(os.Environ(), tmp, cache),
		"GIT_OBJECT_DIRECTORY="+objDir, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+lay.objects)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	becomeReaper()
	var runErr error
	if threadConfines {
		if err := startRestricted(cmd, writable); err != nil {
			if cmd.Process != nil {
				osproc.KillGroup(cmd.Process)
				cmd.Wait()
			}
			return -1, nil, nil, err
		}
		runErr = cmd.Wait()
	} else {
		runErr = cmd.Run()
	}
	// What the command left running in its group would write after the
	// check: it ends with the command.
	if cmd.Process != nil {
		osproc.KillGroup(cmd.Process)
	}
	reapOrphans()
	code := 0
	if runErr != nil {
		if ee, ok := runErr.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			code = -1
		}
	}
	undone, changed, err := restore(context.WithoutCancel(ctx), &spec, lay, before, objDir)
	if len(undone) > 0 {
		fmt.Fprintf(stderr, "git ideate confine: a %s may not change these, so they were put back:\n", spec.Role)
		for _, u := range undone {
			fmt.Fprintf(stderr, "  %s\n", u)
		}
		if code == 0 {
			code = 1
		}
	}
	if err != nil {
		return code, undone, changed, err
	}
	if runErr != nil && code == -1 {
		return code, undone, changed, apperr.Wrap(apperr.Internal, runErr, "the confined command could not run")
	}
	return code, undone, changed, nil
}

// Start starts cmd where it and everything it starts can write only into
// writable, the node_modules each holds (a JavaScript runner keeps its
// cache there; followed where it links), and the device files, as Run
// holds a worker's command. Where no thread of this process can confine a
// process it starts, cmd starts as it is: the weaker mode, where the
// guard reads a worker's commands instead.
func Start(cmd *exec.Cmd, writable []string) error {
	var w []string
	for _, d := range writable {
		if d == "" {
			continue
		}
		w = append(w, d)
		if nm, err := filepath.EvalSymlinks(filepath.Join(d, "node_modules")); err == nil {
			w = append(w, nm)
		}
	}
	if !threadConfines || !Available() {
		return cmd.Start()
	}
	return startRestricted(cmd, w)
}

// childEnv is the command's environment: nothing that points git
// elsewhere or loads code into every program, and the task's own
// temporary and cache directories.
func childEnv(env []string, tmp, cache string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "GIT_") && !keptGitVar(name):
		case name == "LD_PRELOAD", name == "LD_LIBRARY_PATH", name == "LD_AUDIT", name == "BASH_ENV", name == "ENV",
			name == "TMPDIR", name == "GOCACHE", name == "GOTMPDIR", name == "XDG_CACHE_HOME", name == "npm_config_cache":
		default:
			out = append(out, kv)
		}
	}
	return append(out,
		"TMPDIR="+tmp, "GOTMPDIR="+tmp, "GOCACHE="+filepath.Join(cache, "go-build"),
		"XDG_CACHE_HOME="+cache, "npm_config_cache="+filepath.Join(cache, "npm"),
		"GIT_TERMINAL_PROMPT=0",
		// No background maintenance: it would write where the command may not.
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
		"GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false",
		"IDEATE_CONFINED=1")
}

// keptGitVar: the git variables the command keeps, those that say who
// commits and which configuration files the user chose; the others point
// git at another repository, index, object store or configuration.
func keptGitVar(name string) bool {
	return strings.HasPrefix(name, "GIT_AUTHOR_") || strings.HasPrefix(name, "GIT_COMMITTER_") ||
		name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_CONFIG_NOSYSTEM"
}

// layout is where a linked worktree's git files are.
type layout struct {
	admin   string // .git/worktrees/<name>
	common  string // .git
	objects string
	branch  string // refs/heads/… the worktree's HEAD names ("" when detached)
	refDir  string // the directory holding the branch's ref file
	logDir  string // the directory holding the branch's reflog
}

// layoutOf reads the worktree's .git file, its admin directory's
// commondir and HEAD: a task worktree is always a linked worktree.
//
// The worktree's .git file and what it leads to are files the worker
// can reach (a file tool writes the .git file unconfined; a call still
// running in the background changes it while the next one starts), and
// the directories found from them are opened for writing and cleaned up
// outside confinement. So they must be the repository's own: the admin
// directory one of gitDir's worktrees/ whose gitdir file names this
// worktree, the common directory gitDir (when given), and the ref and
// log directories free of symbolic links.
func layoutOf(wt, gitDir string) (*layout, error) {
	gf, err := osproc.ReadRegular(filepath.Join(wt, ".git"), maxSmall)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "%s is not a linked worktree (no .git file)", wt)
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(gf)), "gitdir: ")
	if !ok {
		return nil, apperr.New(apperr.NotARepo, "%s/.git does not name a git directory", wt)
	}
	if !filepath.IsAbs(admin) {
		admin = filepath.Join(wt, admin)
	}
	admin, err = filepath.EvalSymlinks(admin)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "the admin directory of %s", wt)
	}
	cd, err := osproc.ReadRegular(filepath.Join(admin, "commondir"), maxSmall)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "%s is not a linked worktree's admin directory", admin)
	}
	common := strings.TrimSpace(string(cd))
	if !filepath.IsAbs(common) {
		common = filepath.Join(admin, common)
	}
	common, err = filepath.EvalSymlinks(common)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "the git directory of %s", wt)
	}
	if gitDir != "" {
		if gd, err := filepath.EvalSymlinks(gitDir); err != nil || gd != common {
			return nil, apperr.New(apperr.NotARepo, "%s/.git leads to the git directory %s, not the repository's %s", wt, common, gitDir)
		}
	}
	back, _ := osproc.ReadRegular(filepath.Join(admin, "gitdir"), maxSmall)
	backDir, _ := filepath.EvalSymlinks(filepath.Dir(strings.TrimSpace(string(back))))
	if filepath.Dir(admin) != filepath.Join(common, "worktrees") || backDir != wt {
		return nil, apperr.New(apperr.NotARepo, "%s/.git leads to %s, which is not this worktree's admin directory", wt, admin)
	}
	l := &layout{admin: admin, common: common, objects: filepath.Join(common, "objects")}
	head, err := osproc.ReadRegular(filepath.Join(admin, "HEAD"), maxSmall)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "the HEAD of %s", wt)
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok && strings.HasPrefix(ref, "refs/heads/") && !strings.Contains(ref, "..") {
		l.branch = ref
		l.refDir = filepath.Dir(filepath.Join(common, filepath.FromSlash(ref)))
		l.logDir = filepath.Dir(filepath.Join(common, "logs", filepath.FromSlash(ref)))
		if l.refDir == filepath.Join(common, "refs", "heads") {
			// A branch at the top of refs/heads shares its directory with
			// every branch: no ref directory is opened for it.
			return nil, apperr.New(apperr.Schema, "the worktree's branch %s is not a task branch", ref)
		}
		for _, d := range []string{l.refDir, l.logDir} {
			// Each existing part of the path is what it says (a link
			// would open another directory for writing).
			for p := d; p != common && p != filepath.Dir(p); p = filepath.Dir(p) {
				if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					return nil, apperr.New(apperr.NotARepo, "%s is a symbolic link: the worktree's branch %s leads out of the repository's refs", p, ref)
				}
			}
		}
	}
	return l, nil
}

// maxSmall caps what Run reads of a git file it holds (HEAD, a ref, a
// pointer): the command may have made it a FIFO or a huge file.
const maxSmall = 1 << 20

// maxIndex caps the worktree's index the entry keeps a copy of.
const maxIndex = 1 << 30

// isTest reports whether rel is a test file by the runners' globs.
func (s *Spec) isTest(rel string) bool {
	for _, g := range s.TestGlobs {
		if pathglob.Match(g, rel) || !strings.Contains(g, "/") && pathglob.Match(g, path.Base(rel)) {
			return true
		}
	}
	return false
}

// DefaultExtensions are the source extensions when the standards name
// none.
var DefaultExtensions = []string{".go", ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rs", ".java", ".kt", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".scala"}

func (s *Spec) isSource(rel string) bool {
	exts := s.Extensions
	if len(exts) == 0 {
		exts = DefaultExtensions
	}
	for _, e := range exts {
		if strings.HasSuffix(rel, e) {
			return true
		}
	}
	return false
}

// guarded reports whether rel is of a class the role may not change
// (a red-worker's shims aside, see forbidden).
func (s *Spec) guarded(rel string) bool {
	switch rel {
	case initFile:
		return true
	case outputFile:
		return false
	}
	if strings.HasSuffix(rel, "/") {
		// An untracked directory git status lists whole is a repository
		// of its own inside the worktree, whose files git does not look
		// into: what it holds would be out of the check.
		return true
	}
	if path.Base(rel) == ".gitignore" {
		// Ignored files are out of git status's sight, so out of the
		// check: a .gitignore written in the call would hide what the
		// call wrote next to it.
		return true
	}
	if s.Role == RoleRed {
		return !s.isTest(rel)
	}
	if s.isTest(rel) {
		return true
	}
	for _, f := range s.Frozen {
		if f == rel {
			return true
		}
	}
	return false
}

// forbidden reports whether the role may not make rel hold after: before
// and after are its content then and now (nil when absent), for a shim
// (marked content, which a red-worker may write).
func (s *Spec) forbidden(rel string, before, after []byte) bool {
	if !s.guarded(rel) {
		return false
	}
	if s.Role == RoleRed && rel != initFile {
		if s.ShimMarker == "" || !s.isSource(rel) {
			return true
		}
		// A shim: what it holds now (or held, when it is gone) is marked.
		mark := []byte(s.ShimMarker)
		if after != nil {
			return !bytes.Contains(after, mark)
		}
		return before == nil || !bytes.Contains(before, mark)
	}
	return true
}

// git runs git in dir with a clean environment and returns its output.
func git(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	return gitIn(ctx, dir, env, in, args...)
}

// gitIn is git with a reader for its standard input.
func gitIn(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"}, args...)...)
	osproc.Group(cmd)
	cmd.Dir = dir
	cmd.Env = append(childEnvBase(), env...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), apperr.Wrap(apperr.Internal, err, "git %s: %s", strings.Join(args, " "), strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// childEnvBase is our own git calls' environment: the inherited one
// without GIT_* (which could point them elsewhere).
func childEnvBase() []string {
	var out []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "GIT_") || keptGitVar(name) {
			out = append(out, kv)
		}
	}
	return append(out, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
}

// entry is one path of git status.
type entry struct {
	untracked bool
}

// status lists the paths that differ between HEAD, the index and the
// worktree, untracked ones included, and the HEAD commit ("" unborn).
// An ignored .gitignore is listed too, as untracked: one that ignores
// itself would otherwise hide, with itself, what it ignores.
func status(ctx context.Context, wt string) (map[string]entry, string, error) {
	out, err := git(ctx, wt, nil, nil, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignored=matching", "--no-renames", "--ignore-submodules=all")
	if err != nil {
		return nil, "", err
	}
	paths := map[string]entry{}
	head := ""
	for _, rec := range bytes.Split(out, []byte{0}) {
		r := string(rec)
		switch {
		case strings.HasPrefix(r, "# branch.oid "):
			if h := strings.TrimPrefix(r, "# branch.oid "); h != "(initial)" {
				head = h
			}
		case strings.HasPrefix(r, "1 "):
			if f := strings.SplitN(r, " ", 9); len(f) == 9 {
				paths[f[8]] = entry{}
			}
		case strings.HasPrefix(r, "u "):
			if f := strings.SplitN(r, " ", 11); len(f) == 11 {
				paths[f[10]] = entry{}
			}
		case strings.HasPrefix(r, "? "):
			paths[r[2:]] = entry{untracked: true}
		case strings.HasPrefix(r, "! ") && path.Base(r[2:]) == ".gitignore":
			paths[r[2:]] = entry{untracked: true} // a directory ends in "/"
		}
	}
	return paths, head, nil
}

// saved is a file's state before the command.
type saved struct {
	exists bool
	mode   os.FileMode
	data   []byte // content, or a symlink's target
	// big: too large to keep a copy of (maxKept); size and mtime stand
	// for its content.
	big         bool
	size, mtime int64
}

// maxKept is the largest file Run keeps a copy of.
const maxKept = 8 << 20

// before is what Run notes before the command runs.
type before struct {
	head      string
	headFile  []byte
	indexCopy string
	dirty     map[string]entry
	sums      map[string]string // the dirty paths' fingerprints
	files     map[string]saved  // forbidden paths that were dirty or untracked
	protected map[string]saved  // files no command may change (admin files, .git file)
	refs      map[string][]byte
}

func snapshot(ctx context.Context, spec *Spec, lay *layout) (*before, error) {
	b := &before{files: map[string]saved{}, protected: map[string]saved{}, refs: map[string][]byte{}, sums: map[string]string{}}
	for _, p := range protectedFiles(spec, lay) {
		b.protected[p] = readState(p)
	}
	var err error
	if b.headFile, err = osproc.ReadRegular(filepath.Join(lay.admin, "HEAD"), maxSmall); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot read the worktree's HEAD")
	}
	// The copy is this call's own: a call still running in the
	// background is judged against the index it started from, not the
	// one a later call of the same worker found (which holds what the
	// first staged).
	fh, err := os.CreateTemp(spec.StateDir, "index.before-")
	if err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot make a copy of the index in %s", spec.StateDir)
	}
	fh.Close()
	b.indexCopy = fh.Name()
	if err := copyFile(filepath.Join(lay.admin, "index"), b.indexCopy); err != nil {
		os.Remove(b.indexCopy)
		return nil, err
	}
	if b.dirty, b.head, err = status(ctx, spec.Worktree); err != nil {
		return nil, err
	}
	for p := range b.dirty {
		b.sums[p] = fingerprint(filepath.Join(spec.Worktree, filepath.FromSlash(p)))
	}
	total := 0
	for p := range b.dirty {
		if !spec.guarded(p) {
			continue
		}
		s := readState(filepath.Join(spec.Worktree, filepath.FromSlash(p)))
		total += len(s.data)
		if total > maxSaved {
			return nil, apperr.New(apperr.Unverifiable, "more than %d MiB of uncommitted files the %s may not change; commit or remove them first", maxSaved>>20, spec.Role)
		}
		b.files[p] = s
	}
	if lay.refDir != "" {
		ents, _ := os.ReadDir(lay.refDir)
		for _, e := range ents {
			if data, err := osproc.ReadRegular(filepath.Join(lay.refDir, e.Name()), maxSmall); err == nil {
				b.refs[e.Name()] = data
			}
		}
	}
	return b, nil
}

// protectedFiles are the files no command changes: the worktree's .git
// file and init.md (git status may not show them: ignored), and its admin
// directory's pointers and config.
func protectedFiles(spec *Spec, lay *layout) []string {
	out := []string{filepath.Join(spec.Worktree, ".git"), filepath.Join(spec.Worktree, filepath.FromSlash(initFile))}
	for _, n := range []string{"commondir", "gitdir", "config.worktree", "locked", "info/sparse-checkout", "info/exclude"} {
		out = append(out, filepath.Join(lay.admin, filepath.FromSlash(n)))
	}
	return append(out, filepath.Join(lay.objects, "info", "alternates"), filepath.Join(lay.objects, "info", "http-alternates"))
}

// readState reads what p is now: content and mode, a symlink's target,
// or absent. A file too large to keep reads as present without content.
func readState(p string) saved {
	fi, err := os.Lstat(p)
	if err != nil {
		return saved{}
	}
	s := saved{exists: true, mode: fi.Mode()}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, _ := os.Readlink(p)
		s.data = []byte(t)
	case fi.Mode().IsRegular():
		s.size, s.mtime = fi.Size(), fi.ModTime().UnixNano()
		if fi.Size() > maxKept {
			s.big = true
		} else {
			s.data, _ = os.ReadFile(p)
		}
	}
	return s
}

func copyFile(from, to string) error {
	data, err := osproc.ReadRegular(from, maxIndex)
	if os.IsNotExist(err) {
		os.Remove(to)
		return nil
	}
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot read %s", from)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s", to)
	}
	return nil
}

// cutLinks removes the first symbolic link among the directories
// between root and p (both absolute, root resolved), so that what is
// written at p afterwards stays under root. Nothing when p is not under
// root.
func cutLinks(root, p string) {
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			os.Remove(cur)
			return
		}
	}
}

// put makes p hold s (a new inode, so no hard link carries it along).
func put(p string, s saved) error {
	if !s.exists || s.big { // a file too large to keep a copy of goes
		if err := os.RemoveAll(p); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".ideate-restore"
	os.Remove(tmp)
	if s.mode&os.ModeSymlink != 0 {
		if err := os.Symlink(string(s.data), tmp); err != nil {
			return err
		}
	} else if err := os.WriteFile(tmp, s.data, s.mode.Perm()); err != nil {
		return err
	} else if err := os.Chmod(tmp, s.mode.Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

func same(a, b saved) bool {
	if a.big || b.big {
		return a.big == b.big && a.size == b.size && a.mtime == b.mtime && a.mode == b.mode
	}
	return a.exists == b.exists && (!a.exists || a.mode == b.mode && bytes.Equal(a.data, b.data))
}

// restore undoes what the role may not change and says what it undid.
//
// It also says which paths the call changed (changedPaths), once nothing
// is left to put back.
func restore(ctx context.Context, spec *Spec, lay *layout, b *before, objDir string) ([]string, *changes, error) {
	var undone []string
	// First what points git elsewhere, before git is asked anything.
	for p, s := range b.protected {
		// A directory on the way that the command made a link would
		// lead this unconfined write out of the worktree: the link goes.
		for _, root := range []string{spec.Worktree, lay.admin} {
			cutLinks(root, p)
		}
		if now := readState(p); !same(now, s) {
			if err := put(p, s); err != nil {
				return undone, nil, apperr.Wrap(apperr.Write, err, "cannot put back %s", p)
			}
			undone = append(undone, "git file "+p)
		}
	}
	// Then the objects the command wrote, which what follows reads.
	undone = append(undone, importObjects(ctx, lay, objDir)...)
	headPath := filepath.Join(lay.admin, "HEAD")
	if now, _ := osproc.ReadRegular(headPath, maxSmall); !bytes.Equal(now, b.headFile) {
		if err := put(headPath, saved{exists: true, mode: 0o644, data: b.headFile}); err != nil {
			return undone, nil, apperr.Wrap(apperr.Write, err, "cannot put back the worktree's HEAD")
		}
		undone = append(undone, "the worktree's HEAD (it stays on its task branch)")
	}
	// Its own branch is the command's to move, through git: a ref file
	// that holds no object name (garbage, a symbolic ref, a link) would
	// stop the git below, or lead its update-ref to another branch, so
	// it goes back to what it was.
	if lay.refDir != "" && lay.branch != "" {
		own := filepath.Join(lay.refDir, path.Base(lay.branch))
		if _, err := os.Lstat(own); err == nil {
			if now, err := osproc.ReadRegular(own, maxSmall); err != nil || !objectName(strings.TrimSuffix(string(now), "\n")) || isLink(own) {
				old, had := b.refs[path.Base(lay.branch)]
				if err := put(own, saved{exists: had, mode: 0o644, data: old}); err != nil {
					return undone, nil, apperr.Wrap(apperr.Write, err, "cannot put back %s", own)
				}
				undone = append(undone, "ref "+lay.branch+" (git could not read it)")
			}
		}
	}
	// Other task branches.
	if lay.refDir != "" {
		own := path.Base(lay.branch)
		ents, _ := os.ReadDir(lay.refDir)
		seen := map[string]bool{}
		for _, e := range ents {
			n := e.Name()
			seen[n] = true
			if n == own {
				continue
			}
			p := filepath.Join(lay.refDir, n)
			old, had := b.refs[n]
			if now, err := osproc.ReadRegular(p, maxSmall); had && err == nil && bytes.Equal(now, old) {
				continue
			}
			if err := put(p, saved{exists: had, mode: 0o644, data: old}); err != nil {
				return undone, nil, apperr.Wrap(apperr.Write, err, "cannot put back %s", p)
			}
			undone = append(undone, "ref "+filepath.ToSlash(strings.TrimPrefix(p, lay.common+string(filepath.Separator))))
		}
		for n, old := range b.refs {
			if !seen[n] && n != own {
				if err := put(filepath.Join(lay.refDir, n), saved{exists: true, mode: 0o644, data: old}); err == nil {
					undone = append(undone, "ref "+n+" (deleted)")
				}
			}
		}
	}
	// The command may leave an index git cannot read (garbage, a link,
	// a directory): the index from before the command comes back, so
	// that what it changed can still be told and put back. Anything but
	// a regular file goes before git opens it (a link to a FIFO would
	// hold git forever).
	idxPath := filepath.Join(lay.admin, "index")
	var after map[string]entry
	var head string
	fi, err := os.Lstat(idxPath)
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	} else {
		after, head, err = status(ctx, spec.Worktree)
	}
	if err != nil {
		idx, _ := osproc.ReadRegular(b.indexCopy, maxIndex)
		if perr := put(idxPath, saved{exists: idx != nil, mode: 0o644, data: idx}); perr != nil {
			return undone, nil, apperr.Wrap(apperr.Write, perr, "cannot put back the worktree's index")
		}
		undone = append(undone, "the worktree's index (git could not read it)")
		if after, head, err = status(ctx, spec.Worktree); err != nil {
			return undone, nil, err
		}
	}
	// Commits that change a forbidden path come off the branch; the
	// index and the worktree keep what the command left, and are judged
	// below like any uncommitted change. What a commit holds is judged,
	// not the file beside it: the two may differ.
	if head != b.head && lay.branch != "" {
		changed, err := committedChanges(ctx, spec.Worktree, b.head, head)
		if err != nil {
			return undone, nil, err
		}
		var bad []string
		for _, c := range changed {
			var was, now []byte
			if spec.Role == RoleRed && spec.guarded(c.path) {
				// Only a red-worker's shim turns on content.
				if was, err = blobData(ctx, spec.Worktree, c.was); err != nil {
					return undone, nil, err
				}
				if now, err = blobData(ctx, spec.Worktree, c.now); err != nil {
					return undone, nil, err
				}
			}
			if spec.forbidden(c.path, was, now) {
				bad = append(bad, c.path)
			}
		}
		if len(bad) > 0 || head == "" {
			args := []string{"update-ref", "-m", "git ideate confine: a commit the role may not make", lay.branch, b.head}
			if b.head == "" {
				args = []string{"update-ref", "-d", lay.branch}
			}
			if _, err := git(ctx, spec.Worktree, nil, nil, args...); err != nil {
				return undone, nil, err
			}
			undone = append(undone, fmt.Sprintf("the commits since %s (they change %s); your other changes stay in the index", short(b.head), strings.Join(bad, ", ")))
			if after, head, err = status(ctx, spec.Worktree); err != nil {
				return undone, nil, err
			}
		}
	}
	cands := map[string]bool{}
	for p := range b.dirty {
		cands[p] = true
	}
	for p := range after {
		cands[p] = true
	}
	var paths []string
	for p := range cands {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var fix []string    // forbidden paths whose index entry is checked
	var absent []string // forbidden paths new to the index and the status: removed last
	judge := func(p string) error {
		abs := filepath.Join(spec.Worktree, filepath.FromSlash(p))
		now := readState(abs)
		if !spec.guarded(p) {
			if u := linkOut(spec, p, abs, now); u != "" {
				if err := os.Remove(abs); err == nil {
					undone = append(undone, u)
				}
			}
			return nil
		}
		want, kept := b.files[p]
		if !kept {
			if _, was := b.dirty[p]; was {
				return nil // dirty before, and its copy could not be kept: the snapshot refused that
			}
			// Clean before: it held what the index held.
			var err error
			if want, err = indexState(ctx, spec.Worktree, b.indexCopy, p); err != nil {
				return err
			}
		}
		if spec.Role != RoleRed || spec.forbidden(p, want.data, now.data) {
			fix = append(fix, p) // its staged content may not change either
		} else if bad, err := stagedForbidden(ctx, spec, b, p); err != nil {
			return err
		} else if bad {
			// A red-worker's shim may be staged and committed, but not
			// another content staged under its name.
			fix = append(fix, p)
		}
		if !kept && !want.exists && !same(now, want) && spec.forbidden(p, want.data, now.data) && path.Base(p) != ".gitignore" {
			absent = append(absent, p)
			return nil
		}
		if same(now, want) || !spec.forbidden(p, want.data, now.data) {
			if u := linkOut(spec, p, abs, now); u != "" {
				if err := put(abs, want); err == nil {
					undone = append(undone, u)
				}
			}
			return nil
		}
		cutLinks(spec.Worktree, abs)
		if err := put(abs, want); err != nil {
			return apperr.Wrap(apperr.Write, err, "cannot put back %s", p)
		}
		undone = append(undone, p)
		return nil
	}
	hidden := 0 // .gitignore files put back: the files they hid show now
	for _, p := range paths {
		if err := judge(p); err != nil {
			return undone, nil, err
		}
	}
	for pass := 0; ; pass++ {
		n := 0
		for _, u := range undone {
			if path.Base(u) == ".gitignore" {
				n++
			}
		}
		if n == hidden {
			break
		}
		if pass == 8 {
			return undone, nil, apperr.New(apperr.Unverifiable, "the .gitignore files the command wrote hide one another too deeply to check")
		}
		hidden = n
		now, _, err := status(ctx, spec.Worktree)
		if err != nil {
			return undone, nil, err
		}
		var more []string
		for p, e := range now {
			if !cands[p] {
				cands[p], after[p] = true, e
				more = append(more, p)
			}
		}
		sort.Strings(more)
		for _, p := range more {
			if err := judge(p); err != nil {
				return undone, nil, err
			}
		}
	}
	if len(fix) > 0 {
		u, err := restoreIndex(ctx, spec.Worktree, b.indexCopy, fix)
		if err != nil {
			return undone, nil, err
		}
		undone = append(undone, u...)
	}
	// A path that neither the index nor git status held before was
	// absent then, or ignored: a .gitignore the command changed shows
	// ignored files as new. With the .gitignore files put back, what they
	// ignore again stays (the command may write ignored files anyway);
	// the rest goes.
	if len(absent) > 0 {
		ignored := map[string]bool{}
		for _, u := range undone {
			if path.Base(u) != ".gitignore" {
				continue
			}
			args := []string{"ls-files", "-z", "-o", "-i", "--exclude-standard"}
			if len(absent) <= 1000 {
				args = append(args, "--")
				for _, p := range absent {
					args = append(args, ":(literal)"+p)
				}
			}
			out, err := git(ctx, spec.Worktree, nil, nil, args...)
			if err != nil {
				return undone, nil, err
			}
			for _, p := range splitZ(out) {
				ignored[p] = true
			}
			break
		}
		for _, p := range absent {
			if ignored[p] {
				continue
			}
			if err := put(filepath.Join(spec.Worktree, filepath.FromSlash(p)), saved{}); err != nil {
				return undone, nil, apperr.Wrap(apperr.Write, err, "cannot put back %s", p)
			}
			undone = append(undone, p)
		}
	}
	ch := &changes{}
	ch.paths, ch.err = changedPaths(ctx, spec, b, after, head)
	return undone, ch, nil
}

// changedPaths lists the paths whose content, kind or mode differs from
// before the command: the worker's writes, which the caller logs so that
// another agent's check after the fact (gates.Escape) does not blame
// them on that agent. Confinement keeps the command's writes inside the
// worktree (its git files and own directories aside), so the worktree
// is all there is to list. A path is listed only when it is known to
// have changed: logging one that did not would excuse what someone else
// left in it. Candidates are the paths git status named before or after
// and those of the commits made; a path dirty before is compared with
// its fingerprint then, one clean before with the index copy (its
// content then). A path neither tracked nor dirty before was absent, or
// ignored: when a .gitignore changed, such paths are left out.
func changedPaths(ctx context.Context, spec *Spec, b *before, after map[string]entry, head string) ([]string, error) {
	cands := map[string]bool{}
	for p := range b.dirty {
		cands[p] = true
	}
	for p := range after {
		cands[p] = true
	}
	if head != b.head && head != "" {
		args := []string{"diff", "--name-only", "-z", "--no-renames", b.head, head}
		if b.head == "" {
			args = []string{"ls-tree", "-r", "-z", "--name-only", head}
		}
		out, err := git(ctx, spec.Worktree, nil, nil, args...)
		if err != nil {
			return nil, err
		}
		for _, p := range splitZ(out) {
			cands[p] = true
		}
	}
	var changed, clean []string
	for p := range cands {
		was, dirty := b.sums[p]
		switch {
		case !dirty:
			clean = append(clean, p)
		case was != "" && fingerprint(filepath.Join(spec.Worktree, filepath.FromSlash(p))) != was:
			changed = append(changed, p)
		}
	}
	if len(clean) > 0 {
		sort.Strings(clean)
		// The paths as pathspecs, unless there are too many for one
		// command line: then the whole worktree, filtered below.
		args := []string{"status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all"}
		if len(clean) <= 1000 {
			args = append(args, "--")
			for _, p := range clean {
				args = append(args, ":(literal)"+p)
			}
		}
		isClean := map[string]bool{}
		for _, p := range clean {
			isClean[p] = true
		}
		out, err := git(ctx, spec.Worktree, []string{"GIT_INDEX_FILE=" + b.indexCopy}, nil, args...)
		if err != nil {
			return nil, err
		}
		var created []string
		for _, r := range splitZ(out) {
			switch {
			case strings.HasPrefix(r, "1 "):
				// Its worktree side against the index copy.
				if f := strings.SplitN(r, " ", 9); len(f) == 9 && len(f[1]) == 2 && f[1][1] != '.' && isClean[f[8]] {
					changed = append(changed, f[8])
				}
			case strings.HasPrefix(r, "? ") && isClean[r[2:]]:
				created = append(created, r[2:])
			}
		}
		gitignore := false
		for _, p := range append(changed, created...) {
			gitignore = gitignore || path.Base(p) == ".gitignore"
		}
		if !gitignore {
			changed = append(changed, created...)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// fingerprint stands for what p is: its kind and mode, and a digest of
// its content or a symlink's target; "-" when it is absent, "" when it
// cannot be read (over maxSaved, unreadable), which compares with
// nothing.
func fingerprint(p string) string {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "-"
	}
	if err != nil {
		return ""
	}
	h := sha256.New()
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return ""
		}
		h.Write([]byte(t))
	case fi.Mode().IsRegular() && fi.Size() <= maxSaved:
		f, _, err := osproc.OpenRegular(p) // made a FIFO since the Lstat: never block
		if err != nil {
			return ""
		}
		_, err = io.Copy(h, io.LimitReader(f, maxSaved+1))
		f.Close()
		if err != nil {
			return ""
		}
	case fi.IsDir():
	default:
		return ""
	}
	return fmt.Sprintf("%v %x", fi.Mode(), h.Sum(nil))
}

// linkOut says why a changed path must go: a symlink that leads out of
// the worktree or onto a file the role may not change, or a hard link
// (another name of a file, which may be one the role may not change or
// one outside). "" when it may stay.
func linkOut(spec *Spec, rel, abs string, now saved) string {
	if !now.exists {
		return ""
	}
	if now.mode&os.ModeSymlink != 0 {
		t := string(now.data)
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(abs), t)
		}
		if r, err := filepath.EvalSymlinks(t); err == nil {
			t = r
		}
		in, err := filepath.Rel(spec.Worktree, filepath.Clean(t))
		if err != nil || in == ".." || strings.HasPrefix(in, ".."+string(filepath.Separator)) {
			return rel + " (a symlink out of the worktree)"
		}
		in = filepath.ToSlash(in)
		if in == ".git" || strings.HasPrefix(in, ".git/") || spec.forbidden(in, nil, readState(filepath.Join(spec.Worktree, in)).data) {
			return rel + " (a symlink to " + in + ", which the " + spec.Role + " may not change)"
		}
		return ""
	}
	if now.mode.IsRegular() {
		if fi, err := os.Lstat(abs); err == nil && nlink(fi) > 1 {
			return rel + " (a hard link to another file)"
		}
	}
	return ""
}

// blobChange is a path a commit range changed, with its blob ids before
// and after ("" when absent).
type blobChange struct{ path, was, now string }

// committedChanges lists what the commits from base to head changed
// (base "" is the empty tree; head "" lists nothing).
func committedChanges(ctx context.Context, wt, base, head string) ([]blobChange, error) {
	if head == "" {
		return nil, nil
	}
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", "--no-commit-id", "--root"}
	if base != "" {
		args = append(args, base)
	}
	out, err := git(ctx, wt, nil, nil, append(args, head)...)
	if err != nil {
		return nil, err
	}
	var ch []blobChange
	recs := splitZ(out)
	for i := 0; i+1 < len(recs); i += 2 {
		// :<old mode> <new mode> <old id> <new id> <status>, then the path
		f := strings.Fields(strings.TrimPrefix(recs[i], ":"))
		if len(f) != 5 {
			return nil, fmt.Errorf("git diff-tree printed %q", recs[i])
		}
		c := blobChange{path: recs[i+1], was: blobID(f[0], f[2]), now: blobID(f[1], f[3])}
		ch = append(ch, c)
	}
	return ch, nil
}

// blobID is id as blobData takes it: "" when the mode says absent, and
// "-" for a submodule's commit, which holds no content to read.
func blobID(mode, id string) string {
	switch mode {
	case "000000":
		return ""
	case "160000":
		return "-"
	}
	return id
}

// blobData is the content of blob id for forbidden: nil when absent
// (""), and empty (unmarked) when it cannot be a shim: a submodule, or
// larger than maxKept.
func blobData(ctx context.Context, wt, id string) ([]byte, error) {
	if id == "" {
		return nil, nil
	}
	if id == "-" {
		return []byte{}, nil
	}
	size, err := git(ctx, wt, nil, nil, "cat-file", "-s", id)
	if err != nil {
		return nil, err
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(string(size)), 10, 64); err != nil || n > maxKept {
		return []byte{}, nil
	}
	data, err := git(ctx, wt, nil, nil, "cat-file", "blob", id)
	if data == nil && err == nil {
		data = []byte{}
	}
	return data, err
}

// stagedForbidden reports whether the index now stages for p what the
// role may not make it hold, given what the index copy staged before.
func stagedForbidden(ctx context.Context, spec *Spec, b *before, p string) (bool, error) {
	was, err := indexState(ctx, spec.Worktree, b.indexCopy, p)
	if err != nil {
		return false, err
	}
	now, err := indexState(ctx, spec.Worktree, "", p)
	if err != nil || same(was, now) {
		return false, err
	}
	data := func(s saved) []byte {
		if !s.exists {
			return nil
		}
		if s.data == nil {
			return []byte{}
		}
		return s.data
	}
	return spec.forbidden(p, data(was), data(now)), nil
}

// indexState is what the index file held for p (the worktree's own
// index when index is ""): blob content and mode, or absent.
func indexState(ctx context.Context, wt, index, p string) (saved, error) {
	var env []string
	if index != "" {
		env = []string{"GIT_INDEX_FILE=" + index}
	}
	out, err := git(ctx, wt, env, nil, "ls-files", "-s", "-z", "--", ":(literal)"+p)
	if err != nil {
		return saved{}, err
	}
	rec := strings.TrimSuffix(string(out), "\x00")
	meta, _, ok := strings.Cut(rec, "\t")
	f := strings.Fields(meta)
	if !ok || len(f) < 3 {
		return saved{}, nil
	}
	data, err := git(ctx, wt, nil, nil, "cat-file", "blob", f[1])
	if err != nil {
		return saved{}, err
	}
	mode := os.FileMode(0o644)
	switch f[0] {
	case "100755":
		mode = 0o755
	case "120000":
		mode = os.ModeSymlink | 0o777
	}
	return saved{exists: true, mode: mode, data: data}, nil
}

// restoreIndex puts the index entries of paths back as the copy held
// them, and says which it changed.
// importObjects moves the objects a command wrote into objDir into the
// repository's store, each only if it is the object its name says: a
// loose object whose content hashes to another name is not kept, and a
// pack is indexed again by git index-pack, which names each object by
// what it holds. What is not kept is reported (a commit naming it is
// broken, which the gates see); nothing here stops the rest of the
// restore.
func importObjects(ctx context.Context, lay *layout, objDir string) []string {
	ents, err := os.ReadDir(objDir)
	if err != nil || len(ents) == 0 {
		return nil // the command wrote no object
	}
	var bad []string
	for _, e := range ents {
		dir := filepath.Join(objDir, e.Name())
		switch {
		case e.Name() == "pack":
			packs, _ := filepath.Glob(filepath.Join(dir, "*.pack"))
			for _, p := range packs {
				// The command made what sits here: a FIFO would hold a
				// plain open, and the restore after it, forever.
				f, _, err := osproc.OpenRegular(p)
				if err != nil {
					bad = append(bad, "pack "+filepath.Base(p)+" (not a regular file)")
					continue
				}
				_, err = gitIn(ctx, lay.common, nil, f, "--git-dir="+lay.common, "index-pack", "--stdin")
				f.Close()
				if err != nil {
					bad = append(bad, "pack "+filepath.Base(p)+" (git index-pack refused it)")
				}
			}
		case len(e.Name()) == 2 && e.IsDir():
			files, _ := os.ReadDir(dir)
			for _, f := range files {
				name := e.Name() + f.Name()
				if !isHex40(name) {
					continue // git's temporary files
				}
				if err := importLoose(filepath.Join(dir, f.Name()), filepath.Join(lay.objects, e.Name()), f.Name(), name); err != nil {
					bad = append(bad, "object "+name+" ("+err.Error()+")")
				}
			}
		}
	}
	return bad
}

// importLoose copies the loose object file src into the store's
// directory dst as name, when its content is the object name says.
func importLoose(src, dst, base, name string) error {
	f, _, err := osproc.OpenRegular(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := verifyLoose(f, name); err != nil {
		return err
	}
	final := filepath.Join(dst, base)
	if _, err := os.Lstat(final); err == nil {
		return nil // the store has it
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dst, "tmp_obj_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		tmp.Close()
		return err
	}
	_, err = io.Copy(tmp, f)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	os.Chmod(tmp.Name(), 0o444)
	if err := os.Link(tmp.Name(), final); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// verifyLoose checks that the loose object file r holds the object name
// names: a "<type> <size>" header git knows, that many bytes after it, and
// the name git computes for them (sha1cd, with collision detection, as
// oid.ComputeHash does), streamed so that a large blob is not held.
func verifyLoose(r io.Reader, name string) error {
	z, err := zlib.NewReader(r)
	if err != nil {
		return errors.New("not a loose object")
	}
	br := bufio.NewReader(io.LimitReader(z, 64))
	hdr, err := br.ReadString(0)
	if err != nil {
		return errors.New("not a loose object: no header")
	}
	typ, size, _ := strings.Cut(strings.TrimSuffix(hdr, "\x00"), " ")
	n, err := strconv.ParseInt(size, 10, 64)
	known := false
	for _, t := range []oid.ObjectType{oid.BlobObject, oid.TreeObject, oid.CommitObject, oid.TagObject} {
		known = known || t.String() == typ
	}
	if err != nil || n < 0 || !known {
		return errors.New("not a loose object: a header git does not write")
	}
	d := sha1cd.New()
	d.Write([]byte(hdr))
	got, err := io.Copy(d, io.MultiReader(br, z))
	if err != nil || got != n {
		return errors.New("not a loose object: its size is not its header's")
	}
	var h oid.Hash
	d.Sum(h[:0])
	if h != oid.NewHash(name) {
		return errors.New("what was written under that name is another object")
	}
	return nil
}

// objectName: a full object name, SHA-1 or SHA-256, as a ref file holds.
func objectName(s string) bool {
	return isHex40(s) || len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

func isLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func restoreIndex(ctx context.Context, wt, index string, paths []string) ([]string, error) {
	args := []string{"ls-files", "-s", "-z", "--"}
	for _, p := range paths {
		args = append(args, ":(literal)"+p)
	}
	was, err := git(ctx, wt, []string{"GIT_INDEX_FILE=" + index}, nil, args...)
	if err != nil {
		return nil, err
	}
	now, err := git(ctx, wt, nil, nil, args...)
	if err != nil {
		return nil, err
	}
	entries := func(out []byte) map[string]string {
		m := map[string]string{}
		for _, rec := range splitZ(out) {
			if meta, p, ok := strings.Cut(rec, "\t"); ok {
				m[p] = meta
			}
		}
		return m
	}
	w, n := entries(was), entries(now)
	var info bytes.Buffer
	var changed []string
	for _, p := range paths {
		if w[p] == n[p] {
			continue
		}
		changed = append(changed, "the index entry of "+p)
		if n[p] != "" {
			// Every stage of the path goes, then the old entry comes back.
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", len(strings.Fields(n[p])[1])), p)
		}
		if m := w[p]; m != "" {
			f := strings.Fields(m)
			fmt.Fprintf(&info, "%s %s %s\t%s\x00", f[0], f[1], f[2], p)
		}
	}
	if info.Len() > 0 {
		if _, err := git(ctx, wt, nil, info.Bytes(), "update-index", "-z", "--index-info"); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

func splitZ(out []byte) []string {
	var s []string
	for _, r := range bytes.Split(out, []byte{0}) {
		if len(r) > 0 {
			s = append(s, string(r))
		}
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "the start"
	}
	return h
}

// rulesArgs is the writable set as Enter's arguments.
func rulesArgs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if d != "" {
			out = append(out, "--rw", d)
		}
	}
	return out
}
