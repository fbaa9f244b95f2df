package gitstore

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
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
	// ByGit is true when the index used a feature read through the git CLI
	// instead of in-process (a split or sparse index).
	ByGit bool
	// Watched is true when only a monitor's candidate paths were read
	// (WorktreeChangesAmong), false after a full scan.
	Watched bool
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
// (.gitattributes, core.autocrlf) are applied through `git hash-object`
// for the files whose stat data changed.
//
// It reads the worktree's index and stats every tracked file, hashing only
// files whose stat data changed since the index was written, and skips
// directories whose cached tree in the index equals base's (the index's
// TREE extension), so its cost follows the worktree's size in stats and
// its changes in reads. A split or sparse index is read through the git
// CLI instead. The index is never written.
func (s *Store) WorktreeChanges(ctx context.Context, base Hash, dir string) (*Changes, error) {
	return s.worktreeChanges(ctx, base, dir, nil)
}

// WorktreeChangesAmong is WorktreeChanges when only the paths in cands
// (slash-separated, relative to the worktree's top; a directory stands for
// everything under it) may differ from base in the working tree, as a
// file-system monitor reports them: those are read, the rest of the
// working tree is taken to equal base, and the committed changes
// (base..HEAD) are diffed on objects as always. The result equals
// WorktreeChanges' when cands holds every path changed since a full scan
// and that scan's changed paths. An index read through git falls back to
// the full scan.
func (s *Store) WorktreeChangesAmong(ctx context.Context, base Hash, dir string, cands []string) (*Changes, error) {
	if cands == nil {
		cands = []string{}
	}
	return s.worktreeChanges(ctx, base, dir, cands)
}

// worktreeChanges scans the whole working tree when cands is nil, else
// only the candidates.
func (s *Store) worktreeChanges(ctx context.Context, base Hash, dir string, cands []string) (*Changes, error) {
	wt, err := Discover(dir)
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
	w := &wtScan{store: s, cfg: wts.cfg, repo: wt, top: wt.WorkTree}
	diffWorking, byGit, err := w.prepareAmong(ctx, baseCommit.Tree, cands)
	watched := cands != nil && err == nil
	if cands == nil || errors.Is(err, errIndexUnsupported) {
		var working []wentry
		working, byGit, err = w.scan(ctx)
		diffWorking = func(fn func(path, om, nm string, oh, nh Hash)) error {
			return w.compare(ctx, baseCommit.Tree, working, fn)
		}
	}
	if err != nil {
		return nil, err
	}
	out := &Changes{Base: base, Head: head, ByGit: byGit, Watched: watched}
	// base → working state
	net := map[string]*Change{}
	var order []string
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
	if err := diffWorking(func(path, om, nm string, oh, nh Hash) {
		add(net, path, om, nm, oh, nh)
		order = append(order, path)
	}); err != nil {
		return nil, err
	}
	// base → HEAD
	committed := map[string]*Change{}
	if headTree != baseCommit.Tree {
		err := s.DiffTrees(baseCommit.Tree, headTree, func(path string, o, n TreeEntry) error {
			om, nm := entryMode(o), entryMode(n)
			add(committed, path, om, nm, o.Hash, n.Hash)
			return nil
		})
		if err != nil {
			return nil, err
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

// wentry is one path of the worktree's state: a tracked file (as the
// index has it, its content re-hashed when its stat data changed) or an
// untracked one.
type wentry struct {
	path string
	mode string
	hash Hash // ZeroHash for an untracked file not hashed yet
	// gone: tracked, but absent from the working tree.
	gone bool
	// dirty: anything that may differ from what the index's cached trees
	// say (changed stat data, gone, untracked, unmerged, intent-to-add).
	dirty bool
}

type wtScan struct {
	store *Store
	cfg   *Config
	repo  *Repo
	top   string

	filters bool // content filters may apply: hash through git
	trees   map[string]cacheTree
	dirtyN  []int // dirtyN[i] = dirty entries among the first i
}

// scan builds the sorted working state: in-process where this platform
// has scanIndex, else through git. byGit reports which.
func (w *wtScan) scan(ctx context.Context) (ents []wentry, byGit bool, err error) {
	ents, err = w.scanIndex(ctx)
	if errors.Is(err, errIndexUnsupported) {
		ents, err = w.scanByGit(ctx)
		return ents, true, err
	}
	return ents, false, err
}

// mayFilter says whether content filters may apply to some path, in which
// case changed files are hashed by `git hash-object`, which applies them.
func (w *wtScan) mayFilter(idx *gitIndex) bool {
	if v, ok := w.cfg.Get("core", "autocrlf"); ok && strings.ToLower(v) != "false" {
		return true
	}
	if _, ok := w.cfg.Get("core", "attributesfile"); ok {
		return true
	}
	if _, err := os.Stat(filepath.Join(w.repo.CommonDir, "info", "attributes")); err == nil {
		return true
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		if home, err := os.UserHomeDir(); err == nil {
			xdg = filepath.Join(home, ".config")
		}
	}
	if xdg != "" {
		if _, err := os.Stat(filepath.Join(xdg, "git", "attributes")); err == nil {
			return true
		}
	}
	for _, e := range idx.entries {
		if e.path == ".gitattributes" || strings.HasSuffix(e.path, "/.gitattributes") {
			return true
		}
	}
	return false
}

// hashEntries computes the content name of the entries at idxs (regular
// files and symlinks present in the working tree).
func (w *wtScan) hashEntries(ctx context.Context, ents []wentry, idxs []int) error {
	var viaGit []int
	for _, i := range idxs {
		e := &ents[i]
		if e.gone {
			continue
		}
		full := filepath.Join(w.top, e.path)
		if e.mode == "120000" {
			target, err := os.Readlink(full)
			if err != nil {
				e.gone = true
				continue
			}
			e.hash = HashObject(oid.BlobObject, []byte(target))
			continue
		}
		if w.filters {
			viaGit = append(viaGit, i)
			continue
		}
		h, err := hashFile(full)
		if errors.Is(err, os.ErrNotExist) {
			e.gone = true
			continue
		}
		if err != nil {
			return apperr.Wrap(apperr.Internal, err, "cannot read %s", full)
		}
		e.hash = h
	}
	if len(viaGit) == 0 {
		return nil
	}
	paths := make([]string, len(viaGit))
	for j, i := range viaGit {
		paths[j] = ents[i].path
	}
	hs, err := w.hashByGit(ctx, paths)
	if err != nil {
		return err
	}
	for j, i := range viaGit {
		ents[i].hash = hs[j]
	}
	return nil
}

// hashFile is the blob name of a file's bytes.
func hashFile(path string) (Hash, error) {
	f, err := os.Open(path)
	if err != nil {
		return ZeroHash, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ZeroHash, err
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	n, err := io.Copy(h, f)
	if err != nil {
		return ZeroHash, err
	}
	if n != fi.Size() {
		return ZeroHash, fmt.Errorf("%s changed size while being read", path)
	}
	var out Hash
	copy(out[:], h.Sum(nil))
	return out, nil
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
	var need []string
	for p, c := range net {
		if c.Status == Added && c.NewHash == ZeroHash && c.NewMode != "160000" {
			need = append(need, p)
		}
	}
	if len(need) == 0 {
		return nil
	}
	sort.Strings(need)
	ents := make([]wentry, len(need))
	idxs := make([]int, len(need))
	for i, p := range need {
		ents[i] = wentry{path: p, mode: net[p].NewMode}
		idxs[i] = i
	}
	if err := w.hashEntries(ctx, ents, idxs); err != nil {
		return err
	}
	for i, p := range need {
		net[p].NewHash = ents[i].hash
	}
	return nil
}

func sortEntries(es []wentry) { sort.Slice(es, func(i, j int) bool { return es[i].path < es[j].path }) }

func isNestedRepo(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// mergeSorted merges the untracked entries into the tracked ones (both
// sorted by path). An untracked file where a tracked entry is gone (it was
// removed from the index only) replaces it.
func mergeSorted(a, b []wentry) []wentry {
	if len(b) == 0 {
		return a
	}
	out := make([]wentry, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].path < b[j].path:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].path < a[i].path:
			out = append(out, b[j])
			j++
		default:
			a[i].dirty = true
			out = append(out, a[i])
			out = append(out, b[j])
			i++
			j++
		}
	}
	return out
}

// compare walks base's tree beside the working state, calling fn for each
// path whose mode or content differ (a missing side has mode "").
// Directories whose cached tree in the index equals base's subtree and
// hold nothing dirty are skipped unread.
func (w *wtScan) compare(ctx context.Context, base Hash, ents []wentry, fn func(path, oldMode, newMode string, oldH, newH Hash)) error {
	w.dirtyN = make([]int, len(ents)+1)
	for i, e := range ents {
		w.dirtyN[i+1] = w.dirtyN[i]
		if e.dirty {
			w.dirtyN[i+1]++
		}
	}
	return w.compareDir(ctx, "", base, ents, 0, len(ents), fn)
}

func (w *wtScan) compareDir(ctx context.Context, prefix string, base Hash, ents []wentry, lo, hi int, fn func(path, oldMode, newMode string, oldH, newH Hash)) error {
	dirKey := strings.TrimSuffix(prefix, "/")
	if ct, ok := w.trees[dirKey]; ok && ct.hash == base && base != ZeroHash && w.dirtyN[hi] == w.dirtyN[lo] && ct.entries == hi-lo {
		return nil
	}
	var baseEntries []TreeEntry
	if base != ZeroHash {
		var err error
		if baseEntries, err = w.store.ReadTree(base); err != nil {
			return err
		}
	}
	byName := make(map[string]int, len(baseEntries))
	for i, e := range baseEntries {
		byName[e.Name] = i
	}
	seen := make([]bool, len(baseEntries))
	gone := func(path string, e TreeEntry) error {
		if e.IsDir() {
			return w.store.DiffTrees(e.Hash, ZeroHash, func(p string, o, _ TreeEntry) error {
				fn(path+"/"+p, o.Mode, "", o.Hash, ZeroHash)
				return nil
			})
		}
		fn(path, e.Mode, "", e.Hash, ZeroHash)
		return nil
	}
	for i := lo; i < hi; {
		e := &ents[i]
		rest := e.path[len(prefix):]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			i++
			if e.gone {
				continue
			}
			bi, had := byName[rest]
			if had {
				seen[bi] = true
				be := baseEntries[bi]
				if be.IsDir() {
					if err := gone(e.path, be); err != nil {
						return err
					}
					fn(e.path, "", e.mode, ZeroHash, e.hash)
					continue
				}
				if e.hash == ZeroHash && e.mode != "160000" {
					// An untracked file where base has one: compare content.
					if err := w.hashEntries(ctx, ents, []int{i - 1}); err != nil {
						return err
					}
					if e.gone {
						fn(e.path, normMode(be.Mode), "", be.Hash, ZeroHash)
						continue
					}
				}
				if be.Hash != e.hash || normMode(be.Mode) != e.mode {
					fn(e.path, normMode(be.Mode), e.mode, be.Hash, e.hash)
				}
				continue
			}
			fn(e.path, "", e.mode, ZeroHash, e.hash)
			continue
		}
		name := rest[:slash]
		sub := prefix + name + "/"
		// The entries under sub are contiguous: find the first after them
		// ('0' is the byte after '/').
		end := i + sort.Search(hi-i, func(k int) bool { return ents[i+k].path >= prefix+name+"0" })
		subBase := ZeroHash
		if bi, had := byName[name]; had {
			seen[bi] = true
			be := baseEntries[bi]
			if be.IsDir() {
				subBase = be.Hash
			} else if err := gone(prefix+name, be); err != nil {
				return err
			}
		}
		if err := w.compareDir(ctx, sub, subBase, ents, i, end, fn); err != nil {
			return err
		}
		i = end
	}
	for bi, be := range baseEntries {
		if !seen[bi] {
			if err := gone(prefix+be.Name, be); err != nil {
				return err
			}
		}
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

// scanByGit builds the working state through the git CLI, for indexes
// this package does not read: `git ls-files --stage` for what is tracked,
// `git diff-files` for what changed in the working tree, and `git ls-files
// --others --exclude-standard` for untracked files (another repository
// inside the worktree is listed as "sub/").
func (w *wtScan) scanByGit(ctx context.Context) ([]wentry, error) {
	out, err := w.store.runGitIn(ctx, w.top, nil, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	var ents []wentry
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		tab := strings.IndexByte(rec, '\t')
		f := strings.Fields(rec[:tab])
		if tab < 0 || len(f) != 3 {
			return nil, apperr.New(apperr.Internal, "git ls-files printed %q", rec)
		}
		h, err := ParseHash(f[1])
		if err != nil {
			return nil, err
		}
		p := rec[tab+1:]
		if n := len(ents); n > 0 && ents[n-1].path == p {
			ents[n-1].dirty = true
			continue
		}
		ents = append(ents, wentry{path: p, mode: f[0], hash: h, dirty: f[2] != "0"})
	}
	out, err = w.store.runGitIn(ctx, w.top, nil, "diff-files", "-z", "--no-renames", "--ignore-submodules")
	if err != nil {
		return nil, err
	}
	var changed []int
	recs := strings.Split(string(out), "\x00")
	for k := 0; k+1 < len(recs); k += 2 {
		meta, p := recs[k], recs[k+1]
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(f) != 5 {
			return nil, apperr.New(apperr.Internal, "git diff-files printed %q", meta)
		}
		i := sort.Search(len(ents), func(i int) bool { return ents[i].path >= p })
		if i == len(ents) || ents[i].path != p {
			continue
		}
		ents[i].dirty = true
		if f[4] == "D" {
			ents[i].gone = true
			continue
		}
		ents[i].mode = f[1]
		changed = append(changed, i)
	}
	w.filters = true
	if err := w.hashEntries(ctx, ents, changed); err != nil {
		return nil, err
	}
	out, err = w.store.runGitIn(ctx, w.top, nil, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	var unt []wentry
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" {
			continue
		}
		if d, ok := strings.CutSuffix(p, "/"); ok { // another repository
			unt = append(unt, wentry{path: d, mode: "160000", dirty: true})
			continue
		}
		unt = append(unt, w.untrackedEntry(p))
	}
	sortEntries(unt)
	return mergeSorted(ents, unt), nil
}

func (w *wtScan) untrackedEntry(p string) wentry {
	mode := "100644"
	if fi, err := os.Lstat(filepath.Join(w.top, p)); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 {
			mode = "120000"
		} else if fi.Mode()&0o100 != 0 && w.cfg.Bool("core", "filemode", true) {
			mode = "100755"
		}
	}
	return wentry{path: p, mode: mode, dirty: true}
}
