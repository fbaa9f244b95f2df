//go:build linux && amd64

package gitstore

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/ideate/git-ideate/internal/apperr"
)

// diffFunc walks base's side beside the working state, calling fn for
// each path whose mode or content differ (as wtScan.compare does).
type diffFunc func(fn func(path, om, nm string, oh, nh Hash)) error

// prepareAmong reads the working state of the candidate paths only (see
// WorktreeChangesAmong) and returns the diff of those paths against base.
// It returns nil without candidates, and errIndexUnsupported for an index
// this package does not read.
func (w *wtScan) prepareAmong(ctx context.Context, baseTree Hash, cands []string) (diffFunc, bool, error) {
	if cands == nil {
		return nil, false, nil
	}
	idx, err := readIndex(filepath.Join(w.repo.GitDir, "index"))
	if err != nil {
		if errors.Is(err, errIndexUnsupported) {
			return nil, false, err
		}
		return nil, false, apperr.Wrap(apperr.Internal, err, "cannot read the index of %s", w.top)
	}
	w.filters = w.mayFilter(idx)
	a := &among{w: w, idx: idx, fileMode: w.cfg.Bool("core", "filemode", true),
		ig: newIgnorer(w.cfg, w.repo.CommonDir), dirs: map[string]*amongDir{},
		base: map[string]TreeEntry{}, tracked: map[int]bool{}, trees: map[Hash][]TreeEntry{}, done: map[string]bool{}}
	queue := normCands(cands)
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if a.done[c] {
			continue
		}
		a.done[c] = true
		if err := a.baseSide(baseTree, c); err != nil {
			return nil, false, err
		}
		a.trackedSide(c)
		if nested := a.diskSide(c); nested != "" {
			queue = append(queue, nested)
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
	}
	// The index entries under the candidates, stages collapsed as the
	// full scan does.
	picked := make([]int, 0, len(a.tracked))
	for i := range a.tracked {
		picked = append(picked, i)
	}
	sort.Ints(picked)
	sub := &gitIndex{entries: make([]indexEntry, len(picked))}
	for j, i := range picked {
		sub.entries[j] = idx.entries[i]
	}
	a.ents, a.srcs = collapseIndex(sub)
	var rehash []int
	for i := range a.ents {
		if a.checkTracked(i) {
			rehash = append(rehash, i)
		}
	}
	if err := w.hashEntries(ctx, a.ents, rehash); err != nil {
		return nil, false, err
	}
	return func(fn func(path, om, nm string, oh, nh Hash)) error { return a.diff(ctx, fn) }, false, nil
}

// normCands cleans the candidate paths, drops the worktree's own .git and
// every path under another candidate, and sorts them.
func normCands(cands []string) []string {
	var out []string
	for _, c := range cands {
		c = path.Clean("/" + filepath.ToSlash(c))[1:]
		if c == "" || c == ".git" || strings.HasPrefix(c, ".git/") {
			continue
		}
		out = append(out, c)
	}
	sort.Strings(out)
	var kept []string
	for _, c := range out {
		covered := false
		for d := c; ; {
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
			if j := sort.SearchStrings(out, d); j < len(out) && out[j] == d {
				covered = true
				break
			}
		}
		if !covered && (len(kept) == 0 || kept[len(kept)-1] != c) {
			kept = append(kept, c)
		}
	}
	return kept
}

// among is the working state of a set of candidate paths.
type among struct {
	w        *wtScan
	idx      *gitIndex
	ents     []wentry      // the index entries under the candidates
	srcs     []*indexEntry // beside ents, their stat data
	fileMode bool
	ig       *ignorer

	dirs      map[string]*amongDir
	base      map[string]TreeEntry // base's blobs, links and gitlinks under the candidates
	tracked   map[int]bool         // positions in idx.entries under the candidates
	trees     map[Hash][]TreeEntry // base's trees read so far
	untracked []wentry
	done      map[string]bool
}

// amongDir is what the full walk would know on reaching a directory.
type amongDir struct {
	reached bool         // a real directory the walk enters
	nested  string       // else, when an untracked repository at this path or above hides it
	stack   []ignoreList // the .gitignore files in force inside it
}

func (a *among) baseSide(baseTree Hash, c string) error {
	e, ok, err := a.lookup(baseTree, c)
	if err != nil || !ok {
		return err
	}
	if !e.IsDir() {
		a.base[c] = e
		return nil
	}
	return a.w.store.DiffTrees(e.Hash, ZeroHash, func(p string, o, _ TreeEntry) error {
		a.base[c+"/"+p] = o
		return nil
	})
}

// trackedSide notes the index entries at c and under it.
func (a *among) trackedSide(c string) {
	es := a.idx.entries
	for i := a.search(c); i < len(es) && es[i].path == c; i++ {
		a.tracked[i] = true
	}
	for i := a.search(c + "/"); i < len(es) && strings.HasPrefix(es[i].path, c+"/"); i++ {
		a.tracked[i] = true
	}
}

// search is the position of the first index entry whose path is >= key.
func (a *among) search(key string) int {
	es := a.idx.entries
	return sort.Search(len(es), func(i int) bool { return es[i].path >= key })
}

// lookup finds base's entry at path p, each tree read once per query.
func (a *among) lookup(root Hash, p string) (TreeEntry, bool, error) {
	cur := TreeEntry{Mode: ModeDir, Hash: root}
	for _, name := range strings.Split(p, "/") {
		if !cur.IsDir() || cur.Hash == ZeroHash {
			return TreeEntry{}, false, nil
		}
		entries, ok := a.trees[cur.Hash]
		if !ok {
			var err error
			if entries, err = a.w.store.ReadTree(cur.Hash); err != nil {
				return TreeEntry{}, false, err
			}
			a.trees[cur.Hash] = entries
		}
		found := false
		for _, te := range entries {
			if te.Name == name {
				cur, found = te, true
				break
			}
		}
		if !found {
			return TreeEntry{}, false, nil
		}
	}
	return cur, true, nil
}

func (a *among) isTracked(p string) bool {
	i := a.search(p)
	return i < len(a.idx.entries) && a.idx.entries[i].path == p
}

func (a *among) hasTrackedUnder(p string) bool {
	i := a.search(p + "/")
	return i < len(a.idx.entries) && strings.HasPrefix(a.idx.entries[i].path, p+"/")
}

func parentOf(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// dir is the walk's state on reaching directory d ("" the top).
func (a *among) dir(d string) *amongDir {
	if s, ok := a.dirs[d]; ok {
		return s
	}
	s := &amongDir{}
	a.dirs[d] = s
	var parent *amongDir
	if d != "" {
		pd, name := parentOf(d)
		parent = a.dir(pd)
		if !parent.reached {
			s.nested = parent.nested
			return s
		}
		fi, err := os.Lstat(filepath.Join(a.w.top, d))
		if err != nil || !fi.IsDir() {
			return s
		}
		if !a.hasTrackedUnder(d) {
			ig := &ignorer{global: a.ig.global, stack: parent.stack}
			if ig.ignored(d, name, true) {
				return s
			}
			if isNestedRepo(filepath.Join(a.w.top, d)) {
				s.nested = d
				return s
			}
		}
		s.stack = parent.stack
	}
	s.reached = true
	full := filepath.Join(a.w.top, d)
	if fi, err := os.Lstat(filepath.Join(full, ".gitignore")); err == nil && fi.Mode().IsRegular() {
		if b, err := os.ReadFile(filepath.Join(full, ".gitignore")); err == nil {
			prefix := ""
			if d != "" {
				prefix = d + "/"
			}
			s.stack = append(s.stack[:len(s.stack):len(s.stack)], parseIgnore(b, prefix))
		}
	}
	return s
}

// diskSide notes the untracked files at c and under it, as the full walk
// would find them. It returns the path of an untracked repository that
// hides c, which then stands for c.
func (a *among) diskSide(c string) string {
	pd, name := parentOf(c)
	parent := a.dir(pd)
	if !parent.reached {
		return parent.nested
	}
	fi, err := os.Lstat(filepath.Join(a.w.top, c))
	if err != nil {
		return ""
	}
	a.entry(c, name, fi.Mode().Type(), parent.stack)
	return ""
}

// entry handles one directory entry found by the walk at p.
func (a *among) entry(p, name string, t os.FileMode, stack []ignoreList) {
	ig := &ignorer{global: a.ig.global, stack: stack}
	switch {
	case t.IsDir():
		s := a.dir(p)
		if s.nested == p {
			a.untracked = append(a.untracked, wentry{path: p, mode: "160000", dirty: true})
			return
		}
		if !s.reached {
			return
		}
		des, err := os.ReadDir(filepath.Join(a.w.top, p))
		if err != nil {
			return
		}
		for _, de := range des {
			a.entry(p+"/"+de.Name(), de.Name(), de.Type(), s.stack)
		}
	case t.IsRegular() || t&os.ModeSymlink != 0:
		if a.isTracked(p) || ig.ignored(p, name, false) {
			return
		}
		mode := "100644"
		if t&os.ModeSymlink != 0 {
			mode = "120000"
		} else if fi, err := os.Lstat(filepath.Join(a.w.top, p)); a.fileMode && err == nil && fi.Mode()&0o100 != 0 {
			mode = "100755"
		}
		a.untracked = append(a.untracked, wentry{path: p, mode: mode, dirty: true})
	}
}

// checkTracked is the walk's check of index entry i: it marks the entry
// gone or dirty, and returns true when its content must be hashed.
func (a *among) checkTracked(i int) bool {
	e, src := &a.ents[i], a.srcs[i]
	if src.mode == 0o160000 || src.skipWorktree || src.assumeValid && !e.dirty {
		return false
	}
	pd, _ := parentOf(e.path)
	if !a.dir(pd).reached {
		e.gone, e.dirty = true, true
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(a.w.top, e.path), &st); err != nil || st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		e.gone, e.dirty = true, true
		return false
	}
	mode, regular := statMode(&st, src.mode, a.fileMode)
	if !regular {
		e.gone, e.dirty = true, true
		return false
	}
	if mode != src.mode {
		e.mode = modeString(mode)
		e.dirty = true
	}
	if e.dirty || !statClean(&st, src, a.idx) {
		e.dirty = true
		return true
	}
	return false
}

// diff compares base and the working state path by path, as compare does
// for the whole tree.
func (a *among) diff(ctx context.Context, fn func(path, om, nm string, oh, nh Hash)) error {
	work := map[string]*wentry{}
	for i := range a.ents {
		if !a.ents[i].gone {
			work[a.ents[i].path] = &a.ents[i]
		}
	}
	for i := range a.untracked {
		work[a.untracked[i].path] = &a.untracked[i]
	}
	paths := make([]string, 0, len(work)+len(a.base))
	for p := range work {
		paths = append(paths, p)
	}
	for p := range a.base {
		if work[p] == nil {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		e, be := work[p], a.base[p]
		_, had := a.base[p]
		switch {
		case e == nil:
			fn(p, be.Mode, "", be.Hash, ZeroHash)
		case !had:
			fn(p, "", e.mode, ZeroHash, e.hash)
		default:
			if e.hash == ZeroHash && e.mode != "160000" {
				one := []wentry{*e}
				if err := a.w.hashEntries(ctx, one, []int{0}); err != nil {
					return err
				}
				*e = one[0]
				if e.gone {
					fn(p, normMode(be.Mode), "", be.Hash, ZeroHash)
					continue
				}
			}
			if be.Hash != e.hash || normMode(be.Mode) != e.mode {
				fn(p, normMode(be.Mode), e.mode, be.Hash, e.hash)
			}
		}
	}
	return nil
}
