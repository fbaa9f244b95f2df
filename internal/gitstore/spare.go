package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// spares keeps a few files, made ahead of need, for a long-lived
// Store's writes: a write's pack, its index and its ref lock each take one
// and rename it into place, so that making a new inode — the dearest part
// of a small write on a busy ext4 (see docs/ARCHITECTURE.md, "The file
// system is the floor of a write") — happens between calls, not inside
// one. The files are ordinary: once renamed, a pack or a lock is what
// os.CreateTemp would have made, and git sees nothing else.
//
// The spares live in <common dir>/ideate/spare, named <pid>-<store>-<n>,
// one store's each; they are opened O_RDWR and kept open. Besides those the
// goroutine makes (empty), the files the Store retires become spares when
// no one else holds them (see recycle). A Store made with
// Options.Spares == 0 (every CLI call) has none and creates its files as
// before. When a spare cannot be renamed into the objects or the refs (the
// directory is on another file system, or renaming without replacing is
// not available), there are no spares and every write creates its files
// as before.
type spares struct {
	dir    string
	want   int
	prefix string // <pid>-<store>-: two stores of one process never share a name

	mu   sync.Mutex
	free []*os.File
	// recycled: retired files made spares (see recycle), taken first;
	// waits: those still waiting (see recycleAfter).
	recycled []*os.File
	waits    []waiting
	// held is this Store's retired directory (see Store.retiredDir),
	// heldN the count its names come from.
	held   string
	heldN  atomic.Int64
	n      int
	off    bool
	closed bool
	kick   chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup
	// made counts the spares made (tests).
	made int
	// reap holds the retired files (see retire.go) and the packs' .keep
	// files (see dropKeep) the goroutine is to remove once it has made the
	// spares; reaped counts those dealt with (tests).
	reap   []string
	reaped int
	// pooled: a short-lived Store's spares, with no files of its own and
	// no goroutine; take draws on the clone's pool (see pool.go).
	pooled bool
	// poolFirst: take the clone's pool's files before any of its own:
	// always for pooled spares, which have none, and for a long-lived
	// Store's on ext4 without a journal (see pool.go).
	poolFirst bool
}

// startSpares clears the spares that dead processes left in dir, checks
// that a spare can be renamed into the objects' pack directory and, without
// replacing, into the refs, and starts the goroutine that keeps want spares
// ready. It returns nil when spares cannot be used here.
func startSpares(common, dir string, want int) *spares {
	if want <= 0 || !osproc.HasRenameNoReplace {
		return nil
	}
	if err := mkdirAll(dir); err != nil {
		return nil
	}
	clearDeadSpares(dir)
	if !spareRenamesWork(dir, filepath.Join(common, "objects", "pack"), filepath.Join(common, "refs")) {
		return nil
	}
	sp := &spares{dir: dir, want: want, kick: make(chan struct{}, 1), done: make(chan struct{}),
		prefix: fmt.Sprintf("%d-%d-", os.Getpid(), spareStores.Add(1))}
	sp.held = filepath.Join(dir, sp.prefix+"retired")
	// A directory of that name is a dead process's that had this pid.
	os.RemoveAll(sp.held)
	sp.wg.Add(1)
	go sp.keep()
	sp.poke()
	return sp
}

// spareRenamesWork moves a probe file from dir into pack (as a tmp_ file,
// which git ignores) and into refs (as a .lock, which git ignores), each
// time back again. Same device numbers are not enough: a bind mount
// between them refuses renames all the same (EXDEV).
func spareRenamesWork(dir, pack, refs string) bool {
	probe := filepath.Join(dir, fmt.Sprintf("%d-probe", os.Getpid()))
	f, err := os.OpenFile(probe, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return false
	}
	f.Close()
	defer os.Remove(probe)
	// there moves the probe to "to" the way writes will; it comes back by
	// a plain rename.
	roundTrip := func(to string, there func(from, to string) error) bool {
		if there(probe, to) != nil {
			return false
		}
		if osproc.Rename(to, probe) != nil {
			os.Remove(to)
			return false
		}
		return true
	}
	return roundTrip(filepath.Join(pack, fmt.Sprintf("tmp_spare_probe_%d", os.Getpid())), os.Rename) &&
		roundTrip(filepath.Join(refs, fmt.Sprintf("ideate-spare-probe-%d.lock", os.Getpid())), osproc.RenameNoReplace)
}

// spareStores numbers the spare sets of this process.
var spareStores atomic.Int64

// clearDeadSpares removes the spares of processes that are gone.
func clearDeadSpares(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, _, ok := strings.Cut(e.Name(), "-")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && osproc.Gone(n) {
			if e.IsDir() {
				os.RemoveAll(filepath.Join(dir, e.Name())) // its retired files
			} else {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// keep makes spares whenever there are fewer than want.
func (sp *spares) keep() {
	defer sp.wg.Done()
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	for {
		select {
		case <-sp.done:
			wake.Stop()
			return
		case <-sp.kick:
		case <-wake.C:
		}
		sp.makeSpares()
		sp.reapRetired()
		if next := sp.promoteDue(); !next.IsZero() {
			wake.Reset(time.Until(next))
		}
	}
}

// makeSpares makes spares until there are want.
func (sp *spares) makeSpares() {
	for {
		sp.mu.Lock()
		if sp.closed || sp.off || len(sp.free) >= sp.want {
			sp.mu.Unlock()
			break
		}
		sp.n++
		name := filepath.Join(sp.dir, sp.prefix+strconv.Itoa(sp.n))
		sp.mu.Unlock()
		f, err := openRaw(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrNotExist) && mkdirAll(sp.dir) == nil { // removed by hand
			f, err = openRaw(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		}
		sp.mu.Lock()
		if err != nil {
			// The directory went away, or the disk is full: the
			// writes make their own files until a later poke works.
			sp.mu.Unlock()
			break
		}
		if sp.closed {
			sp.mu.Unlock()
			f.Close()
			os.Remove(name)
			return
		}
		sp.free = append(sp.free, f)
		sp.made++
		sp.mu.Unlock()
	}
}

// reapLater has the goroutine remove a retired file (see retire.go), or
// recycle it, or remove a pack's .keep, after the call that handed it over.
func (sp *spares) reapLater(name string) {
	sp.mu.Lock()
	closed := sp.closed
	if !closed {
		sp.reap = append(sp.reap, name)
	}
	sp.mu.Unlock()
	if closed {
		os.Remove(name)
		return
	}
	sp.poke()
}

// reapRetired removes the retired files handed over so far.
func (sp *spares) reapRetired() {
	sp.mu.Lock()
	names := sp.reap
	sp.reap = nil
	sp.mu.Unlock()
	for _, n := range names {
		if !sp.recycle(n) {
			os.Remove(n)
		}
	}
	sp.mu.Lock()
	sp.reaped += len(names)
	sp.mu.Unlock()
}

// recycleMax bounds the recycled spares ready for use (each an open
// file); waitMax the retired files waiting out recycleAfter. Past them,
// retired files are freed as before. A roll-up retires two files per
// merged pack at once, about 32, and every write between two roll-ups
// takes three spares and retires one ref file; what a roll-up retires
// comes back a second later, all at once. At 96 the spares were full
// when it came and empty between: in 3,000 MCP calls (append, create,
// claim) the server freed 2,283 retired files and made 1,423 new ones,
// and every file freed makes the next new inode dearer (on ext4 without
// a journal an allocation skips each inode freed in the last minutes,
// reading its inode table block to see when). At 2,048 it freed none
// and made 772, nearly all in its first seconds, before anything
// retired came back. The bound is also a quarter of the open files the
// process may have, so that the spares never crowd out its other files.
var recycleMax = recycleBound(2048)

const waitMax = 4096

// recycleBound is most, or a quarter of the process's limit on open
// files when that is lower (but at least 64).
func recycleBound(most int) int {
	if lim, ok := openFileLimit(); ok && lim < uint64(4*most) {
		return max(64, int(lim/4))
	}
	return most
}

// recycleAfter is how long a retired file waits before it is checked
// and made a spare (see promote). A reader whose open(2) had looked the
// file up under its old name just before the rename that retired it may
// complete that open after the file was retired; by the check it has,
// and the check sees it holding the file. A thread stalled inside one
// open(2) for a second, its lookup done, is far beyond what scheduling,
// CPU quotas or memory pressure do.
var recycleAfter = time.Second

// waiting is a retired file waiting out recycleAfter: its name and when
// it was handed over.
type waiting struct {
	name string
	at   time.Time
}

// recycle queues the retired file name, in this Store's own retired
// directory, to be made a spare where it is once recycleAfter has passed
// (see promote), and reports whether it did.
func (sp *spares) recycle(name string) bool {
	if !canRecycle || filepath.Dir(name) != sp.held {
		return false
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.closed || sp.off || sp.pooled || len(sp.waits) >= waitMax {
		return false
	}
	sp.waits = append(sp.waits, waiting{name, time.Now()})
	return true
}

// promoteDue makes spares of the waiting files whose wait is over,
// oldest first, and returns when the next one's is (zero: none waits).
func (sp *spares) promoteDue() time.Time {
	for {
		sp.mu.Lock()
		if sp.closed || len(sp.waits) == 0 {
			sp.mu.Unlock()
			return time.Time{}
		}
		w := sp.waits[0]
		if due := w.at.Add(recycleAfter); time.Now().Before(due) {
			sp.mu.Unlock()
			return due
		}
		sp.waits = sp.waits[1:]
		full := len(sp.recycled) >= recycleMax
		sp.mu.Unlock()
		var f *os.File
		if !full {
			f, _ = promote(w.name)
		}
		if f == nil {
			os.Remove(w.name) // held by someone, or enough spares: freed as before
			continue
		}
		sp.mu.Lock()
		if sp.closed {
			sp.mu.Unlock()
			f.Close()
			os.Remove(w.name)
			continue
		}
		sp.recycled = append(sp.recycled, f)
		sp.mu.Unlock()
	}
}

// spareKeepBytes: a recycled spare keeps its bytes up to one block, so
// that cutting it to a new file's length frees no block inside a call.
const spareKeepBytes = 4096

// fitSpare cuts f, just written from its start with n bytes, to n bytes:
// a recycled spare may have held more.
func fitSpare(f *os.File, n int) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > int64(n) {
		return f.Truncate(int64(n))
	}
	return nil
}

// isClosed reports whether close ran.
func (sp *spares) isClosed() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.closed
}

func (sp *spares) poke() {
	if held.n.Load() > 0 && holdPoke(sp) {
		return
	}
	select {
	case sp.kick <- struct{}{}:
	default:
	}
}

// held defers the spares goroutines' wake-ups while a call runs (see
// HoldSpares): n counts the holds, pending the spares poked meanwhile.
var held struct {
	n       atomic.Int64
	mu      sync.Mutex
	pending []*spares
}

// holdPoke notes sp as poked while a hold lasts and reports whether it
// did (false: the last hold ended meanwhile, and the caller wakes it now).
func holdPoke(sp *spares) bool {
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.n.Load() == 0 {
		return false
	}
	for _, p := range held.pending {
		if p == sp {
			return true
		}
	}
	held.pending = append(held.pending, sp)
	return true
}

// HoldSpares defers, until the returned release runs, the work a write
// hands to the spares goroutines — making spares, removing a pack's
// .keep, freeing or recycling retired files — which they would otherwise
// do at once, beside the rest of the call. The MCP server holds them for
// each write call, until its answer is written: woken in the middle of
// a call, a goroutine took the processor or a second thread from it
// (bench/mcpab, 1,500 cycles in each order, twice: record_append held
// took 0.89 and 0.96 of its median not held, and not held 1.12 and 1.09
// times as long as held; create, claim and complete moved by less than
// the noise, within 6 % either way). Holds nest and may overlap;
// release is to be called once.
func HoldSpares() (release func()) {
	held.mu.Lock()
	defer held.mu.Unlock()
	held.n.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			held.mu.Lock()
			last := held.n.Add(-1) == 0
			var wake []*spares
			if last {
				wake, held.pending = held.pending, nil
			}
			held.mu.Unlock()
			for _, sp := range wake {
				sp.poke()
			}
		})
	}
}

// take hands out a spare, open, or nil when none is ready (the
// caller then creates its file as before): a recycled one first (it may
// hold old bytes: the caller writes from its start and calls fitSpare),
// then the pool's where poolFirst, then one the goroutine made.
func (sp *spares) take() *os.File {
	if sp == nil {
		return nil
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for !sp.off && !sp.closed && len(sp.recycled) > 0 {
		f := sp.recycled[len(sp.recycled)-1] // the newest: its blocks are warm
		sp.recycled = sp.recycled[:len(sp.recycled)-1]
		if linked(f) {
			return f
		}
		f.Close()
	}
	if sp.poolFirst && !sp.off && !sp.closed {
		sp.n++
		if f := takePooled(sp.dir, filepath.Join(sp.dir, sp.prefix+strconv.Itoa(sp.n))); f != nil {
			return f
		}
	}
	for !sp.off && !sp.closed && len(sp.free) > 0 {
		f := sp.free[0] // the oldest first
		sp.free = sp.free[1:]
		sp.poke()
		if linked(f) {
			return f
		}
		f.Close() // someone removed it (or the whole directory): skip it
	}
	return nil
}

// giveBack returns a spare that was taken and not used (still at its own
// name, still empty).
func (sp *spares) giveBack(f *os.File) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	switch {
	case sp.pooled:
		returnToPool(sp.dir, f)
	case sp.closed || sp.off:
		f.Close()
		os.Remove(f.Name())
	default:
		sp.free = append(sp.free, f)
	}
}

// turnOff stops using spares after a rename that the file system refused
// for reasons no retry fixes.
func (sp *spares) turnOff() {
	sp.mu.Lock()
	sp.off = true
	free := append(sp.free, sp.recycled...)
	sp.free, sp.recycled = nil, nil
	waits := sp.waits
	sp.waits = nil
	sp.mu.Unlock()
	for _, w := range waits {
		os.Remove(w.name)
	}
	for _, f := range free {
		f.Close()
		os.Remove(f.Name())
	}
}

// close stops the goroutine, removes the spares not used and frees the
// retired files handed over.
func (sp *spares) close() {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	if sp.closed {
		sp.mu.Unlock()
		return
	}
	sp.closed = true
	free := append(sp.free, sp.recycled...)
	sp.free, sp.recycled = nil, nil
	waits := sp.waits
	sp.waits = nil
	sp.mu.Unlock()
	for _, w := range waits {
		os.Remove(w.name)
	}
	close(sp.done)
	sp.wg.Wait()
	sp.reapRetired()
	for _, f := range free {
		f.Close()
		os.Remove(f.Name())
	}
	os.Remove(sp.held) // empty by now but for a write racing the close
}

// unusable reports whether a rename of a spare failed for a reason that
// will not go away (another file system, or no renameat2).
func unusable(err error) bool {
	return errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EPERM)
}
