package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// A long-lived Store (Options.WatchRefs: the MCP server) lists the loose
// refs of a directory such as refs/ideate/board/items/ without walking it:
// an inotify watch on the directory names the files that changed since
// the last listing, and only those are looked at again. Every claim lists
// the board's items (board.Store.children, under the item's lock); the
// walk, a readdir and an lstat for each of the few hundred loose item refs
// between two pack-refs, was 0.42 ms of a 1.49 ms claim's CPU in the
// in-process MCP benchmark (pprof, 3,000 claims, ext4 with a journal).
//
// Why it sees what a walk would: a rename, create or unlink queues its
// event before the system call returns, so once a writer's rename has
// returned, the next listing reads that event and looks at the file. A
// listing after events it has not read yet is a listing made a moment
// earlier, as a walk racing the writer would be. The watch is made before
// the first walk, so nothing falls between them. When the kernel's queue
// overflowed, the directory went away (pack-refs --prune removes an
// emptied one), or a directory appeared inside it, the listing walks
// again (the first two), or for good (the last: the watch covers one
// level).
//
// That the directory went away is not left to the kernel's word: its
// IN_DELETE_SELF comes only when the last reference to the removed
// directory goes (another process's open directory or cwd, a walk of this
// one), and a writer may make the directory again and rename a ref into
// it long before; the watch, still on the removed one, saw nothing, and a
// claim passed a parent whose new child was open (session 23's unfound
// fault; TestRefWatch_TheDirectoryMadeAgainWhileTheOldIsHeld). So each
// listing first checks that the directory at the path is the one
// watched (device and inode, one stat), and reads it again whole when it
// is not.
type refWatch struct {
	mu     sync.Mutex
	root   string // the directory watched
	prefix string // the ref name prefix of its files, ending in "/"
	fd, wd int
	dev    uint64 // the watched directory's device and inode
	ino    uint64
	off    bool                // walk from now on
	seeded bool                // refs holds a whole listing
	refs   map[string]Hash     // file name → value, files holding an object name
	sorted []Ref               // refs by name; nil after a change
	buf    [64 << 10]byte      // inotify's events
	dirty  map[string]struct{} // names to look at again
}

// watchMask is what changes a directory's loose refs: a file renamed in
// (git's and our update), created, written in place, removed or renamed
// away (pack-refs --prune, a delete), and the directory itself going.
const watchMask = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_CLOSE_WRITE | syscall.IN_DELETE |
	syscall.IN_MOVED_FROM | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR

// watchedLoose lists the loose refs under prefix (a directory: it ends in
// "/") from the directory's watch; ok is false when there is none (not a
// long-lived store, not a directory prefix, or the watch is off), and the
// caller walks.
func (r *refReader) watchedLoose(prefix string) (loose []Ref, ok bool, err error) {
	w := r.watchOf(prefix)
	if w == nil {
		return nil, false, nil
	}
	return w.list(r)
}

// watchedCount is the number of loose refs under prefix, from the
// directory's watch as watchedLoose has it, without copying the listing;
// ok is false when there is no watch to ask.
func (r *refReader) watchedCount(prefix string) (n int, ok bool) {
	w := r.watchOf(prefix)
	if w == nil {
		return 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok, err := w.update(r); !ok || err != nil {
		return 0, false
	}
	return len(w.refs), true
}

// watchOf is the watch of prefix's directory (made on first use), nil
// when the store does not watch or prefix is no directory.
func (r *refReader) watchOf(prefix string) *refWatch {
	if !r.watchRefs || !strings.HasSuffix(prefix, "/") {
		return nil
	}
	root := r.dirOf(prefix)
	r.wmu.Lock()
	defer r.wmu.Unlock()
	w := r.watches[root]
	if w == nil {
		if r.watches == nil {
			r.watches = map[string]*refWatch{}
		}
		w = &refWatch{root: root, prefix: prefix, fd: -1}
		r.watches[root] = w
	}
	return w
}

// list brings the watch's view up to date and returns it.
func (w *refWatch) list(r *refReader) ([]Ref, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok, err := w.update(r); !ok || err != nil {
		return nil, false, err
	}
	if w.sorted == nil {
		w.sorted = make([]Ref, 0, len(w.refs))
		for name, h := range w.refs {
			w.sorted = append(w.sorted, Ref{Name: w.prefix + name, Hash: h})
		}
		sort.Slice(w.sorted, func(i, j int) bool { return w.sorted[i].Name < w.sorted[j].Name })
	}
	// The caller may sort or append: it gets a copy.
	return append([]Ref(nil), w.sorted...), true, nil
}

// update brings the watch's view up to date (w.mu held); false when the
// caller must walk instead.
func (w *refWatch) update(r *refReader) (bool, error) {
	if w.off {
		return false, nil
	}
	if w.seeded {
		if !w.same() || !w.drain() {
			w.seeded = false
		}
	}
	if !w.seeded {
		if w.fd < 0 && !w.start() {
			return false, nil // no directory yet, or no inotify: walk
		}
		if err := w.seed(r); err != nil || !w.seeded {
			return false, err
		}
	}
	for name := range w.dirty {
		if err := w.look(r, name); err != nil {
			return false, err
		}
		if w.off {
			return false, nil // a directory inside: walk
		}
		delete(w.dirty, name)
	}
	return true, nil
}

// start makes the watch; false when the directory does not exist or
// inotify cannot be had (the caller walks, and the next listing tries
// again when the directory was missing).
func (w *refWatch) start() bool {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		w.off = true // out of instances: walk, as a CLI call does
		return false
	}
	wd, err := syscall.InotifyAddWatch(fd, w.root, watchMask)
	if err != nil {
		syscall.Close(fd)
		if !errors.Is(err, syscall.ENOENT) {
			w.off = true
		}
		return false
	}
	w.fd, w.wd = fd, wd
	return true
}

// same reports whether the directory at the watch's path is still the one
// watched; when it is not (gone, or made again), the watch is closed, and
// the listing makes it anew.
func (w *refWatch) same() bool {
	var st syscall.Stat_t
	if err := syscall.Stat(w.root, &st); err != nil || uint64(st.Dev) != w.dev || uint64(st.Ino) != w.ino {
		w.stop(false)
		return false
	}
	return true
}

// seed reads the whole directory once the watch is made. It reads the
// directory the watch is on: the one it opens, when adding the watch
// again by path gives back the watch's own descriptor (the path led to
// the watched directory after the open; a removed directory never comes
// back, so the open found that one too). Otherwise the directory was
// made again since the watch was: the watch is closed and this listing
// walks.
func (w *refWatch) seed(r *refReader) error {
	f, err := os.Open(w.root)
	if err != nil {
		w.stop(false)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		w.stop(false)
		return err
	}
	if wd, err := syscall.InotifyAddWatch(w.fd, w.root, watchMask); err != nil || wd != w.wd {
		w.stop(false)
		return nil
	}
	w.dev, w.ino = uint64(st.Dev), uint64(st.Ino)
	ents, err := f.ReadDir(-1)
	if err != nil {
		w.stop(false)
		return err
	}
	w.refs, w.sorted = map[string]Hash{}, nil
	w.dirty = map[string]struct{}{}
	for _, e := range ents {
		if e.IsDir() {
			w.stop(true) // refs below: a one-level watch does not see them
			return nil
		}
		// A ref's lock is no ref. Taken in, it was never looked at again
		// (drain passes over lock names): a lock holding an item's new
		// value stood in the listing as a second ref of that item, long
		// after it was renamed into place, and the board index built
		// from it held the item twice, once as it was (a claim refused a
		// parent for a child cancelled since).
		if strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		w.dirty[e.Name()] = struct{}{}
	}
	w.seeded = true
	return nil
}

// drain reads the events queued so far and marks the names they touch;
// false when the view must be read again whole.
func (w *refWatch) drain() bool {
	for {
		n, err := syscall.Read(w.fd, w.buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN || n <= 0 {
			return true
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameAt := off + syscall.SizeofInotifyEvent
			off = nameAt + int(ev.Len)
			switch {
			case ev.Mask&syscall.IN_Q_OVERFLOW != 0:
				w.drainRest()
				return false
			case ev.Mask&(syscall.IN_IGNORED|syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF|syscall.IN_UNMOUNT) != 0:
				w.stop(false) // made again by the next listing, once the directory is back
				return false
			case ev.Mask&syscall.IN_ISDIR != 0:
				if ev.Mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0 {
					w.stop(true)
					return false
				}
				continue
			}
			if ev.Len == 0 || off > n {
				continue
			}
			name := string(w.buf[nameAt:off])
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if name == "" || strings.HasSuffix(name, ".lock") {
				continue
			}
			w.dirty[name] = struct{}{}
		}
	}
}

// drainRest empties the queue after an overflow: the walk that follows
// reads everything.
func (w *refWatch) drainRest() {
	for {
		n, err := syscall.Read(w.fd, w.buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
	}
}

// look reads one file of the directory again.
func (w *refWatch) look(r *refReader, name string) error {
	w.sorted = nil
	if strings.HasSuffix(name, ".lock") {
		delete(w.refs, name)
		return nil
	}
	p := filepath.Join(w.root, name)
	full := w.prefix + name
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			delete(w.refs, name)
			return nil
		}
		return err
	}
	if fi.IsDir() {
		w.stop(true)
		return nil
	}
	if h, ok := r.cachedLoose(full, fi); ok {
		w.refs[name] = h
		return nil
	}
	h, ok, err := r.readLoose(p, full)
	if err != nil {
		return err
	}
	if ok {
		w.refs[name] = h
	} else {
		delete(w.refs, name)
	}
	return nil
}

// stop closes the watch; for good when off.
func (w *refWatch) stop(off bool) {
	if w.fd >= 0 {
		syscall.Close(w.fd)
	}
	w.fd, w.seeded, w.refs, w.sorted, w.dirty = -1, false, nil, nil, nil
	w.off = w.off || off
}

// closeWatches ends every watch of the reader.
func (r *refReader) closeWatches() {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	for _, w := range r.watches {
		w.mu.Lock()
		w.stop(true)
		w.mu.Unlock()
	}
	r.watches = nil
}
