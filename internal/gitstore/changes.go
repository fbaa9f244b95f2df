package gitstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore/oid"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Change statuses, as `git diff --name-status` prints them.
const (
	Added       = "A"
	Deleted     = "D"
	Modified    = "M" // content or executable bit
	TypeChanged = "T" // file, symlink and submodule turned into one another
	Renamed     = "R" // exact: the deleted path's content, byte for byte
)

// Change is one path whose state in a worktree differs from a base
// commit.
type Change struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	// From is the old path of a rename.
	From    string `json:"from,omitempty"`
	OldMode string `json:"old_mode,omitempty"`
	NewMode string `json:"new_mode,omitempty"`
	OldHash Hash   `json:"-"`
	NewHash Hash   `json:"-"` // zero for an added path whose content was not needed
	// Committed: the worktree's HEAD differs from the base at this path.
	Committed bool `json:"committed"`
	// Uncommitted: the index or the working tree differ from HEAD here.
	Uncommitted bool `json:"uncommitted"`
	// Undone: HEAD changed this path, but the working tree holds base's
	// state again (Status and modes are then HEAD's change).
	Undone bool `json:"undone,omitempty"`
}

// Changes is what a worktree changed against its base.
type Changes struct {
	Base Hash     // the base commit
	Head Hash     // the worktree's HEAD commit (ZeroHash on an unborn branch)
	List []Change // sorted by path
}

// Paths returns every path the changes touch: each path, and the old path
// of a rename too.
func (c *Changes) Paths() []string {
	out := make([]string, 0, len(c.List))
	for _, ch := range c.List {
		if ch.From != "" {
			out = append(out, ch.From)
		}
		out = append(out, ch.Path)
	}
	sort.Strings(out)
	return out
}

// WorktreeChanges lists the paths the worktree at dir changed against the
// commit base: committed (HEAD's tree against base's) and uncommitted (the
// index, the working tree, and untracked files that are not ignored). The
// worktree's state is what `git add -A` would stage, so a file removed
// from the index but still on disk counts as present. Deletions, mode
// changes, type changes and exact renames are reported; content filters
// (.gitattributes, core.autocrlf) apply, since changed files are hashed by
// `git hash-object`.
//
// git reads the working tree: `git status --porcelain=v2` names what
// differs from HEAD (with HEAD's and the index's modes and object names),
// and the committed side is a diff of base's and HEAD's trees, whose cost
// follows what differs. The index is never written (--no-optional-locks).
func (s *Store) WorktreeChanges(ctx context.Context, base Hash, dir string) (*Changes, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "cannot resolve %s", dir)
	}
	wt, err := discoverUp(abs)
	if err != nil {
		return nil, err
	}
	if wt.WorkTree == "" {
		return nil, apperr.New(apperr.NotARepo, "%s has no working tree", dir)
	}
	if wt.CommonDir != s.repo.CommonDir {
		return nil, apperr.New(apperr.Schema, "%s belongs to another repository (%s, not %s)", dir, wt.CommonDir, s.repo.CommonDir)
	}
	baseCommit, err := s.ReadCommit(base)
	if err != nil {
		return nil, err
	}
	wts := OpenRepo(wt, Options{})
	defer wts.Close()
	head, err := wts.Head()
	if err != nil {
		return nil, err
	}
	headTree := ZeroHash
	if head != ZeroHash {
		c, err := s.ReadCommit(head)
		if err != nil {
			return nil, err
		}
		headTree = c.Tree
	}
	w := &wtScan{store: s, cfg: wts.cfg, top: wt.WorkTree}
	status, err := w.status(ctx)
	if err != nil {
		return nil, err
	}
	add := func(m map[string]*Change, path, oldMode, newMode string, oldH, newH Hash) {
		st := Modified
		switch {
		case oldMode == "":
			st = Added
		case newMode == "":
			st = Deleted
		case modeType(oldMode) != modeType(newMode):
			st = TypeChanged
		}
		m[path] = &Change{Path: path, Status: st, OldMode: oldMode, NewMode: newMode, OldHash: oldH, NewHash: newH}
	}
	// base → HEAD
	committed := map[string]*Change{}
	if headTree != baseCommit.Tree {
		err := s.DiffTrees(baseCommit.Tree, headTree, func(path string, o, n TreeEntry) error {
			add(committed, path, entryMode(o), entryMode(n), o.Hash, n.Hash)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// base → working state, at every path where either side differs from
	// HEAD: base's entry is the committed diff's old side, else HEAD's;
	// the working entry is what status says, else HEAD's.
	var need []string
	for p, e := range status {
		if e.work.mode != "" && e.work.hash == ZeroHash && e.work.mode != "160000" {
			if _, ok := committed[p]; e.dirty || ok || e.head.mode != "" {
				need = append(need, p)
			}
		}
	}
	if err := w.hashPaths(ctx, status, need); err != nil {
		return nil, err
	}
	net := map[string]*Change{}
	var order []string
	diff := func(p string, old, cur side) {
		if old.mode == cur.mode && old.hash == cur.hash {
			return
		}
		add(net, p, old.mode, cur.mode, old.hash, cur.hash)
		order = append(order, p)
	}
	for p, e := range status {
		old := e.head
		if c, ok := committed[p]; ok {
			old = side{c.OldMode, c.OldHash}
		}
		diff(p, old, e.work)
	}
	for p, c := range committed {
		if _, ok := status[p]; !ok {
			diff(p, side{c.OldMode, c.OldHash}, side{c.NewMode, c.NewHash})
		}
	}
	// The working state at a path only HEAD changed is base's: the change
	// was committed, then undone without committing.
	for path, c := range committed {
		n, ok := net[path]
		if !ok {
			cc := *c
			cc.Committed, cc.Uncommitted, cc.Undone = true, true, true
			net[path] = &cc
			order = append(order, path)
			continue
		}
		n.Committed = true
		n.Uncommitted = n.NewMode != c.NewMode || n.NewHash != c.NewHash
	}
	for _, n := range net {
		if !n.Committed {
			n.Uncommitted = true
		}
	}
	if err := w.hashAdded(ctx, net); err != nil {
		return nil, err
	}
	pairRenames(net)
	sort.Strings(order)
	out := &Changes{Base: base, Head: head}
	for i, p := range order {
		if i > 0 && order[i-1] == p {
			continue
		}
		if c, ok := net[p]; ok {
			out.List = append(out.List, *c)
		}
	}
	return out, nil
}

func entryMode(e TreeEntry) string {
	if e.Hash == ZeroHash && e.Mode == "" {
		return ""
	}
	return e.Mode
}

// modeType is the kind of object a mode names: "f" file (either mode),
// "l" symlink, "g" submodule.
func modeType(m string) string {
	switch m {
	case "120000":
		return "l"
	case "160000":
		return "g"
	}
	return "f"
}

// pairRenames turns a deletion and an addition of the same content (and
// kind) into one rename, pairing in path order.
func pairRenames(net map[string]*Change) {
	type key struct {
		h Hash
		t string
	}
	gone := map[key][]string{}
	for p, c := range net {
		if c.Status == Deleted && c.OldHash != ZeroHash && !c.Undone {
			k := key{c.OldHash, modeType(c.OldMode)}
			gone[k] = append(gone[k], p)
		}
	}
	if len(gone) == 0 {
		return
	}
	for _, ps := range gone {
		sort.Strings(ps)
	}
	var added []string
	for p, c := range net {
		if c.Status == Added && c.NewHash != ZeroHash && !c.Undone {
			added = append(added, p)
		}
	}
	sort.Strings(added)
	for _, p := range added {
		c := net[p]
		k := key{c.NewHash, modeType(c.NewMode)}
		ps := gone[k]
		if len(ps) == 0 {
			continue
		}
		from := net[ps[0]]
		gone[k] = ps[1:]
		delete(net, from.Path)
		c.Status, c.From, c.OldMode, c.OldHash = Renamed, from.Path, from.OldMode, from.OldHash
		c.Committed = c.Committed || from.Committed
		c.Uncommitted = c.Uncommitted || from.Uncommitted
	}
}

// side is one path's entry on one side of a comparison: mode "" where
// the path is absent, hash ZeroHash where its content is not named yet.
type side struct {
	mode string
	hash Hash
}

// wpath is a path git status names: its entry in HEAD and in the working
// state (what `git add -A` would stage).
type wpath struct {
	head, work side
	// dirty: the working file differs from the index, so its content is
	// hashed; an untracked file is hashed only where another side has it.
	dirty bool
}

type wtScan struct {
	store *Store
	cfg   *Config
	top   string
}

// status reads `git status --porcelain=v2 -z` of the working tree: every
// path whose index or working file differs from HEAD, and every untracked
// file that is not ignored (another repository inside the worktree is one
// entry "sub/", taken as a submodule). Renames are not paired by git
// (--no-renames; pairRenames does it). A submodule's working tree is not
// looked into: its entry is what the index holds.
func (w *wtScan) status(ctx context.Context) (map[string]*wpath, error) {
	out, err := w.store.runGitIn(ctx, w.top, nil, "--no-optional-locks", "status", "--porcelain=v2", "-z",
		"--untracked-files=all", "--no-renames", "--ignore-submodules=dirty")
	if err != nil {
		return nil, err
	}
	mode := func(m string) string {
		if strings.Trim(m, "0") == "" {
			return ""
		}
		return normMode(m)
	}
	ents := map[string]*wpath{}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec == "" {
			continue
		}
		bad := apperr.New(apperr.Internal, "git status printed %q", rec)
		switch rec[0] {
		case '1', '2':
			// 1 XY sub mH mI mW hH hI path; a 2 adds a score and, after a
			// NUL, the old path.
			n := 9
			if rec[0] == '2' {
				n = 10
				i++
			}
			f := strings.SplitN(rec, " ", n)
			if len(f) != n || len(f[1]) != 2 || len(f[2]) != 4 {
				return nil, bad
			}
			hH, err1 := ParseHash(f[6])
			hI, err2 := ParseHash(f[7])
			if err1 != nil || err2 != nil {
				return nil, bad
			}
			e := &wpath{head: side{mode(f[3]), hH}}
			switch y := f[1][1]; {
			case f[2][0] == 'S' || y == '.':
				if mode(f[4]) != "" {
					e.work = side{mode(f[4]), hI}
				}
			case y == 'D':
			default:
				e.work, e.dirty = side{mode: mode(f[5])}, true
			}
			ents[f[n-1]] = e
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path: unmerged; stage 2 is
			// HEAD's, and the working file is what counts.
			f := strings.SplitN(rec, " ", 11)
			if len(f) != 11 {
				return nil, bad
			}
			h2, err := ParseHash(f[8])
			if err != nil {
				return nil, bad
			}
			ents[f[10]] = &wpath{head: side{mode(f[4]), h2}, work: side{mode: mode(f[6])}, dirty: true}
		case '?':
			p := rec[min(2, len(rec)):]
			if d, ok := strings.CutSuffix(p, "/"); ok { // another repository
				ents[d] = &wpath{work: side{mode: "160000"}}
				continue
			}
			// A file removed from the index only has its entry already.
			e := ents[p]
			if e == nil {
				e = &wpath{}
				ents[p] = e
			}
			e.work = side{mode: w.untrackedMode(p)}
		case '#', '!':
		default:
			return nil, bad
		}
	}
	return ents, nil
}

// hashPaths names the working content of the paths given (regular files
// and symlinks), through `git hash-object`, which applies the content
// filters `git add` would; a file gone meanwhile is absent.
func (w *wtScan) hashPaths(ctx context.Context, ents map[string]*wpath, paths []string) error {
	sort.Strings(paths)
	var viaGit []string
	for _, p := range paths {
		e := ents[p]
		full := filepath.Join(w.top, filepath.FromSlash(p))
		if e.work.mode == "120000" {
			target, err := os.Readlink(full)
			if err != nil {
				e.work = side{}
				continue
			}
			e.work.hash = HashObject(oid.BlobObject, []byte(target))
			continue
		}
		if _, err := os.Lstat(full); err != nil {
			e.work = side{}
			continue
		}
		viaGit = append(viaGit, p)
	}
	if len(viaGit) == 0 {
		return nil
	}
	hs, err := w.hashByGit(ctx, viaGit)
	if err != nil {
		return err
	}
	for i, p := range viaGit {
		ents[p].work.hash = hs[i]
	}
	return nil
}

// hashByGit hashes worktree paths with `git hash-object --stdin-paths`,
// which applies the content filters of .gitattributes and core.autocrlf as
// `git add` would. Nothing is written to the object database.
func (w *wtScan) hashByGit(ctx context.Context, paths []string) ([]Hash, error) {
	var in bytes.Buffer
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\"\\") {
			return nil, apperr.New(apperr.Internal, "cannot hash %q through git: its name holds a newline, quote or backslash", p)
		}
		in.WriteString(p)
		in.WriteByte('\n')
	}
	out, err := w.store.runGitIn(ctx, w.top, &in, "hash-object", "--stdin-paths")
	if err != nil {
		return nil, err
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(paths) {
		return nil, apperr.New(apperr.Internal, "git hash-object named %d objects for %d paths", len(lines), len(paths))
	}
	hs := make([]Hash, len(lines))
	for i, l := range lines {
		if hs[i], err = ParseHash(l); err != nil {
			return nil, err
		}
	}
	return hs, nil
}

// hashAdded names the content of added paths when some path was deleted,
// so exact renames can be paired.
func (w *wtScan) hashAdded(ctx context.Context, net map[string]*Change) error {
	deleted := false
	for _, c := range net {
		if c.Status == Deleted {
			deleted = true
			break
		}
	}
	if !deleted {
		return nil
	}
	ents := map[string]*wpath{}
	var need []string
	for p, c := range net {
		if c.Status == Added && c.NewHash == ZeroHash && c.NewMode != "160000" {
			ents[p] = &wpath{work: side{mode: c.NewMode}}
			need = append(need, p)
		}
	}
	if err := w.hashPaths(ctx, ents, need); err != nil {
		return err
	}
	for p, e := range ents {
		net[p].NewHash = e.work.hash
	}
	return nil
}

// normMode writes a tree mode as the index does ("40000" stays).
func normMode(m string) string {
	if m == "100664" {
		return "100644" // a historical mode git still reads as a plain file
	}
	return m
}

// untrackedMode is the mode `git add` would give the untracked file p.
func (w *wtScan) untrackedMode(p string) string {
	if fi, err := os.Lstat(filepath.Join(w.top, filepath.FromSlash(p))); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 {
			return "120000"
		}
		if fi.Mode()&0o100 != 0 && w.cfg.Bool("core", "filemode", true) {
			return "100755"
		}
	}
	return "100644"
}
