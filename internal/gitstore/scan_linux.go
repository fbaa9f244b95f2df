//go:build linux && amd64

package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ideate/git-ideate/internal/apperr"
)

// scanIndex builds the working state in-process: the index's entries,
// each checked against one fstatat of its file (relative to its open
// directory), files with changed stat data hashed, and the untracked files
// found in the same walk. Directories are walked concurrently.
func (w *wtScan) scanIndex(ctx context.Context) ([]wentry, error) {
	idx, err := readIndex(filepath.Join(w.repo.GitDir, "index"))
	if err != nil {
		if errors.Is(err, errIndexUnsupported) {
			return nil, err
		}
		return nil, apperr.Wrap(apperr.Internal, err, "cannot read the index of %s", w.top)
	}
	w.trees = idx.trees
	w.filters = w.mayFilter(idx)
	ents, srcs := collapseIndex(idx)
	wk := &walk{w: w, ctx: ctx, idx: idx, ents: ents, srcs: srcs,
		fileMode: w.cfg.Bool("core", "filemode", true),
		sem:      make(chan struct{}, runtime.GOMAXPROCS(0))}
	ig := newIgnorer(w.cfg, w.repo.CommonDir)
	wk.global = ig.global
	wk.wg.Add(1)
	wk.dir("", 0, len(ents), nil)
	wk.wg.Wait()
	if wk.err != nil {
		return nil, wk.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := w.hashEntries(ctx, ents, wk.rehash); err != nil {
		return nil, err
	}
	sortEntries(wk.untracked)
	return mergeSorted(ents, wk.untracked), nil
}

// collapseIndex is the index's entries as working-state entries, each
// beside the index entry its stat data comes from. Stages collapse: an
// unmerged path is one dirty entry.
func collapseIndex(idx *gitIndex) ([]wentry, []*indexEntry) {
	ents := make([]wentry, 0, len(idx.entries))
	srcs := make([]*indexEntry, 0, len(idx.entries))
	for i := range idx.entries {
		e := &idx.entries[i]
		if n := len(ents); n > 0 && ents[n-1].path == e.path {
			ents[n-1].dirty = true
			srcs[n-1] = e
			continue
		}
		ents = append(ents, wentry{path: e.path, mode: modeString(e.mode), hash: e.hash,
			dirty: e.stage != 0 || e.intentToAdd})
		srcs = append(srcs, e)
	}
	return ents, srcs
}

// walk is one concurrent walk of a working tree.
type walk struct {
	w        *wtScan
	ctx      context.Context
	idx      *gitIndex
	ents     []wentry // each directory's task writes only its own range
	srcs     []*indexEntry
	fileMode bool
	global   []ignoreList
	sem      chan struct{}
	wg       sync.WaitGroup

	mu        sync.Mutex
	rehash    []int
	untracked []wentry
	err       error
}

func (k *walk) fail(err error) {
	k.mu.Lock()
	if k.err == nil {
		k.err = err
	}
	k.mu.Unlock()
}

// dir walks the directory rel ("" for the top, else "a/b") whose tracked
// entries are ents[lo:hi], under the .gitignore files of its ancestors
// (stack), then starts a task for each subdirectory. The caller has added
// one to wg for it.
func (k *walk) dir(rel string, lo, hi int, stack []ignoreList) {
	defer k.wg.Done()
	k.sem <- struct{}{}
	defer func() { <-k.sem }()
	if k.ctx.Err() != nil {
		return
	}
	full := k.w.top
	prefix := ""
	if rel != "" {
		full = filepath.Join(k.w.top, rel)
		prefix = rel + "/"
	}
	f, err := os.Open(full)
	if err != nil {
		// Gone between the parent's listing and now: its entries too.
		for i := lo; i < hi; i++ {
			k.markGone(i)
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			k.fail(apperr.Wrap(apperr.Internal, err, "cannot read %s", full))
		}
		return
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		k.fail(apperr.Wrap(apperr.Internal, err, "cannot read %s", full))
		return
	}
	fd := int(f.Fd())
	present := make(map[string]os.FileMode, len(des))
	for _, de := range des {
		present[de.Name()] = de.Type()
	}
	if t, ok := present[".gitignore"]; ok && t.IsRegular() {
		if b, err := os.ReadFile(filepath.Join(full, ".gitignore")); err == nil {
			stack = append(stack[:len(stack):len(stack)], parseIgnore(b, prefix))
		}
	}
	ig := &ignorer{global: k.global, stack: stack}
	var rehash []int
	var untracked []wentry
	var st syscall.Stat_t
	type sub struct {
		rel    string
		lo, hi int
	}
	var subs []sub
	for i := lo; i < hi; {
		rest := k.ents[i].path[len(prefix):]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			t, ok := present[rest]
			if k.check(i, fd, rest, t, ok, &st) {
				rehash = append(rehash, i)
			}
			if ok && !k.ents[i].gone {
				delete(present, rest)
			}
			i++
			continue
		}
		name := rest[:slash]
		end := i + searchFrom(k.ents[i:hi], prefix+name+"0") // '0' follows '/'
		if t, ok := present[name]; ok && t.IsDir() {
			delete(present, name)
			subs = append(subs, sub{prefix + name, i, end})
		} else {
			for j := i; j < end; j++ {
				k.markGone(j)
			}
		}
		i = end
	}
	// What is left is untracked, unless ignored.
	for name, t := range present {
		if rel == "" && name == ".git" {
			continue
		}
		p := prefix + name
		switch {
		case t.IsDir():
			if ig.ignored(p, name, true) {
				continue
			}
			if isNestedRepo(filepath.Join(full, name)) {
				untracked = append(untracked, wentry{path: p, mode: "160000", dirty: true})
				continue
			}
			subs = append(subs, sub{p, hi, hi})
		case t.IsRegular() || t&os.ModeSymlink != 0:
			if ig.ignored(p, name, false) {
				continue
			}
			mode := "100644"
			if t&os.ModeSymlink != 0 {
				mode = "120000"
			} else if k.fileMode && fstatat(fd, name, &st) == nil && st.Mode&0o100 != 0 {
				mode = "100755"
			}
			untracked = append(untracked, wentry{path: p, mode: mode, dirty: true})
		}
	}
	if len(rehash) > 0 || len(untracked) > 0 {
		k.mu.Lock()
		k.rehash = append(k.rehash, rehash...)
		k.untracked = append(k.untracked, untracked...)
		k.mu.Unlock()
	}
	for _, s := range subs {
		k.wg.Add(1)
		go k.dir(s.rel, s.lo, s.hi, stack)
	}
}

// check compares tracked entry i with what its directory holds under name
// (t, ok from the listing): it marks the entry gone or dirty, and returns
// true when its content must be hashed.
func (k *walk) check(i, fd int, name string, t os.FileMode, ok bool, st *syscall.Stat_t) bool {
	e, src := &k.ents[i], k.srcs[i]
	if src.mode == 0o160000 || src.skipWorktree || src.assumeValid && !e.dirty {
		return false // submodules are taken as the index has them
	}
	if !ok || t.IsDir() {
		k.markGone(i)
		return false
	}
	if err := fstatat(fd, name, st); err != nil {
		k.markGone(i)
		return false
	}
	mode, regular := statMode(st, src.mode, k.fileMode)
	if !regular {
		k.markGone(i) // a fifo or socket where a file was
		return false
	}
	if mode != src.mode {
		e.mode = modeString(mode)
		e.dirty = true
	}
	if e.dirty || !statClean(st, src, k.idx) {
		e.dirty = true
		return true
	}
	return false
}

func (k *walk) markGone(i int) {
	if s := k.srcs[i]; s.mode == 0o160000 || s.skipWorktree {
		return
	}
	k.ents[i].gone, k.ents[i].dirty = true, true
}

// modeString writes a git mode in octal, without allocating for the
// four modes trees hold.
func modeString(m uint32) string {
	switch m {
	case 0o100644:
		return "100644"
	case 0o100755:
		return "100755"
	case 0o120000:
		return "120000"
	case 0o160000:
		return "160000"
	}
	return strconv.FormatUint(uint64(m), 8)
}

// searchFrom is the index of the first entry whose path is >= key.
func searchFrom(ents []wentry, key string) int {
	lo, hi := 0, len(ents)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ents[m].path < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// fstatat is lstat of name relative to the directory open at dirfd.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	var buf [256]byte
	var p *byte
	if len(name) < len(buf) && strings.IndexByte(name, 0) < 0 {
		copy(buf[:], name)
		buf[len(name)] = 0
		p = &buf[0]
	} else {
		var err error
		if p, err = syscall.BytePtrFromString(name); err != nil {
			return err
		}
	}
	const atSymlinkNofollow = 0x100
	_, _, e := syscall.Syscall6(syscall.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(st)), atSymlinkNofollow, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// statMode is the git mode of what lstat found, or false when it is
// neither a regular file nor a symlink. Without core.fileMode the
// executable bit is taken from the index.
func statMode(st *syscall.Stat_t, indexMode uint32, fileMode bool) (uint32, bool) {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return 0o120000, true
	case syscall.S_IFREG:
		if !fileMode && indexMode&0o170000 == 0o100000 {
			return indexMode, true
		}
		if st.Mode&0o100 != 0 {
			return 0o100755, true
		}
		return 0o100644, true
	}
	return 0, false
}

// statClean is git's test that a file is unchanged since the index was
// written: the recorded times, inode, owner and size all match, and the
// file was not modified in the same instant the index was written or
// after ("racily clean": its stat data cannot tell a later same-size
// rewrite apart).
func statClean(st *syscall.Stat_t, e *indexEntry, idx *gitIndex) bool {
	if uint32(st.Mtim.Sec) != e.mtimeSec || uint32(st.Mtim.Nsec) != e.mtimeNsec ||
		uint32(st.Ctim.Sec) != e.ctimeSec || uint32(st.Ctim.Nsec) != e.ctimeNsec ||
		uint32(st.Ino) != e.ino || uint32(st.Uid) != e.uid || uint32(st.Gid) != e.gid ||
		uint32(st.Size) != e.size {
		return false
	}
	if int64(e.mtimeSec) > idx.mtimeSec || int64(e.mtimeSec) == idx.mtimeSec && int64(e.mtimeNsec) >= idx.mtimeNsec {
		return false
	}
	return true
}
