package odb

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
	"github.com/ideate/git-ideate/internal/osproc"
)

// ErrNotFound is wrapped by errors of Read when the object is in none of the
// object stores, even after rescanning the pack directories.
var ErrNotFound = errors.New("object not found")

var errClosed = errors.New("odb: database is closed")

const (
	maxDeltaDepth     = 10000   // caps delta chains (and so REF_DELTA cycles)
	maxAlternateDepth = 5       // how deep objects/info/alternates may nest
	cacheBytes        = 4 << 20 // the budget of the resolved-object cache
)

// Test hooks: how many delta entries of each kind were applied.
var (
	ofsDeltaCount atomic.Int64
	refDeltaCount atomic.Int64
	scanCount     atomic.Int64 // pack-directory scans
)

// store is one objects directory: the local one or an alternate.
type store struct {
	dir   string
	packs []*pack // guarded by DB.mu (writes also hold DB.scanMu)
	err   error   // why the pack directory could not be listed; same guard
}

// DB reads git objects from an objects directory: loose objects and packs
// (idx v2, mmap'd), with alternates. It is safe for concurrent use.
type DB struct {
	stores []*store // fixed at Open
	cache  *baseCache
	nextID atomic.Uint64

	// scanMu serialises pack-directory scans. Lock order: scanMu, then mu.
	scanMu sync.Mutex

	// mu guards the pack lists, scanned and closed, which are written
	// holding scanMu too (so read under either). It is read-held for
	// the whole time mapped memory is being read, so that packs dropped by
	// a rescan (or Close) are unmapped only once no reader uses them.
	mu      sync.RWMutex
	scanned bool
	closed  bool
	added   int // packs AddPack mapped since the last scan; guarded by scanMu
}

// Open prepares to read the objects directory objectsDir (usually
// ".git/objects"). It reads objects/info/alternates but no pack; packs are
// mapped on the first lookup.
func Open(objectsDir string) (*DB, error) {
	abs, err := filepath.Abs(objectsDir)
	if err != nil {
		return nil, fmt.Errorf("odb: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("odb: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("odb: %s is not a directory", abs)
	}
	db := &DB{cache: newBaseCache(cacheBytes)}
	if err := db.addStore(abs, 0, map[string]bool{}); err != nil {
		return nil, err
	}
	return db, nil
}

// addStore appends dir and, depth first, the alternates it lists.
func (db *DB) addStore(dir string, depth int, seen map[string]bool) error {
	dir = filepath.Clean(dir)
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	db.stores = append(db.stores, &store{dir: dir})
	if depth >= maxAlternateDepth {
		return nil
	}
	altFile := filepath.Join(dir, "info", "alternates")
	raw, err := osproc.ReadRegular(altFile, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("odb: %w", err)
	}
	// One path a line, blank lines and '#' comments ignored, C-style
	// quoting honoured.
	for _, alt := range strings.Split(string(raw), "\n") {
		alt = strings.TrimRight(alt, "\r")
		if alt == "" || alt[0] == '#' {
			continue
		}
		if uq, err := strconv.Unquote(alt); alt[0] == '"' && err == nil {
			alt = uq
		}
		if !filepath.IsAbs(alt) {
			alt = filepath.Join(dir, alt)
		}
		if fi, err := os.Stat(alt); err != nil || !fi.IsDir() {
			continue // git warns and ignores unusable alternates
		}
		if err := db.addStore(alt, depth+1, seen); err != nil {
			return err
		}
	}
	return nil
}

// Close unmaps every pack. Reads after Close fail; Close is idempotent.
func (db *DB) Close() error {
	db.scanMu.Lock()
	defer db.scanMu.Unlock()
	db.mu.Lock()
	db.closed = true
	db.mu.Unlock()
	for _, s := range db.stores {
		db.replacePacks(s, nil, nil)
	}
	return nil
}

// Read returns the type and fully resolved content (without header) of the
// object h. When the object is absent the error wraps ErrNotFound.
func (db *DB) Read(h oid.Hash) (oid.ObjectType, []byte, error) {
	fresh, err := db.ensureScanned()
	if err != nil {
		return oid.InvalidObject, nil, err
	}
	typ, data, found, err := db.readOnce(h)
	if found {
		return typ, data, err
	}
	if !fresh {
		if err := db.rescan(); err != nil {
			return oid.InvalidObject, nil, err
		}
		typ, data, found, err = db.readOnce(h)
		if found {
			return typ, data, err
		}
	}
	if err != nil { // found nowhere cleanly, but some copy was unreadable
		return oid.InvalidObject, nil, err
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	errs := []error{ErrNotFound}
	for _, s := range db.stores {
		if s.err != nil {
			errs = append(errs, s.err)
		}
	}
	return oid.InvalidObject, nil, fmt.Errorf("odb: object %s: %w", h, errors.Join(errs...))
}

// readOnce searches every store (packs, then loose) once. found reports a
// successful read. When not found, err is the first corruption met (a copy
// that exists but cannot be decoded), or nil if the object is simply absent.
func (db *DB) readOnce(h oid.Hash) (typ oid.ObjectType, data []byte, found bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			fault, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			typ, data, found = oid.InvalidObject, nil, false
			err = fmt.Errorf("odb: object %s: fault reading mapped pack memory at %#x (file truncated underneath?)", h, fault.Addr())
		}
	}()
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return oid.InvalidObject, nil, false, errClosed
	}
	var firstErr error
	for _, s := range db.stores {
		for _, p := range s.packs {
			off, ok, ferr := p.find(h)
			if ferr != nil {
				firstErr = cmp.Or(firstErr, fmt.Errorf("odb: object %s: %w", h, ferr))
				continue
			}
			if !ok {
				continue
			}
			t, d, shared, rerr := db.resolve(p, off)
			if rerr != nil {
				firstErr = cmp.Or(firstErr, fmt.Errorf("odb: object %s: %w", h, rerr))
				continue
			}
			if shared {
				d = bytes.Clone(d)
			}
			return t, d, true, nil
		}
		t, d, lerr := readLoose(s.dir, h)
		if lerr == nil {
			return t, d, true, nil
		}
		if !errors.Is(lerr, fs.ErrNotExist) {
			firstErr = cmp.Or(firstErr, lerr)
		}
	}
	return oid.InvalidObject, nil, false, firstErr
}

// locate finds h in any mapped pack (preferring prefer) for REF_DELTA bases.
// The caller holds db.mu for reading.
func (db *DB) locate(h oid.Hash, prefer *pack) (*pack, uint64, bool) {
	if off, ok, _ := prefer.find(h); ok {
		return prefer, off, true
	}
	for _, s := range db.stores {
		for _, p := range s.packs {
			if p == prefer {
				continue
			}
			if off, ok, _ := p.find(h); ok {
				return p, off, true
			}
		}
	}
	return nil, 0, false
}

// deltaLink is one delta entry of a chain being resolved.
type deltaLink struct {
	p   *pack
	off uint64
	hdr entryHdr
}

// resolve returns the fully resolved object at off in p. shared reports
// that data is also held by the cache and must be copied before it is
// handed out. The caller holds db.mu for reading.
func (db *DB) resolve(p *pack, off uint64) (typ oid.ObjectType, data []byte, shared bool, err error) {
	var chain []deltaLink
	cp, coff := p, off
	for {
		if t, d, ok := db.cache.get(cacheKey{cp.id, coff}); ok {
			typ, data, shared = t, d, true
			break
		}
		hdr, err := cp.header(coff)
		if err != nil {
			return oid.InvalidObject, nil, false, err
		}
		if hdr.typ == typOfsDelta || hdr.typ == typRefDelta {
			if len(chain) >= maxDeltaDepth {
				return oid.InvalidObject, nil, false, cp.corrupt(coff, fmt.Errorf("delta chain longer than %d (cycle?)", maxDeltaDepth))
			}
			chain = append(chain, deltaLink{cp, coff, hdr})
			if hdr.typ == typOfsDelta {
				coff = hdr.baseOff
				continue
			}
			if bp, boff, ok := db.locate(hdr.baseHash, cp); ok {
				cp, coff = bp, boff
				continue
			}
			// The base may be a loose object in any store.
			var lerr error = fs.ErrNotExist
			for i := 0; i < len(db.stores) && errors.Is(lerr, fs.ErrNotExist); i++ {
				typ, data, lerr = readLoose(db.stores[i].dir, hdr.baseHash)
			}
			if errors.Is(lerr, fs.ErrNotExist) {
				return oid.InvalidObject, nil, false, cp.corrupt(coff, fmt.Errorf("REF_DELTA base %s is missing", hdr.baseHash))
			}
			if lerr != nil {
				return oid.InvalidObject, nil, false, cp.corrupt(coff, fmt.Errorf("REF_DELTA base %s: %w", hdr.baseHash, lerr))
			}
			break
		}
		if data, err = cp.inflate(coff, hdr); err != nil {
			return oid.InvalidObject, nil, false, err
		}
		typ = oid.ObjectType(hdr.typ)
		if len(chain) > 0 { // a delta base: worth keeping
			db.cache.put(cacheKey{cp.id, coff}, typ, data)
		}
		break
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		delta, err := l.p.inflate(l.off, l.hdr)
		if err != nil {
			return oid.InvalidObject, nil, false, err
		}
		if data, err = applyDelta(data, delta); err != nil {
			return oid.InvalidObject, nil, false, l.p.corrupt(l.off, err)
		}
		if l.hdr.typ == typOfsDelta {
			ofsDeltaCount.Add(1)
		} else {
			refDeltaCount.Add(1)
		}
		// Intermediate results are bases of the next link; the final
		// one is often the base of an object read soon after.
		shared = db.cache.put(cacheKey{l.p.id, l.off}, typ, data)
	}
	return typ, data, shared, nil
}

// ensureScanned maps the packs on first use. fresh reports that this call
// performed the initial scan (so an immediate rescan would be pointless).
func (db *DB) ensureScanned() (fresh bool, err error) {
	db.scanMu.Lock()
	defer db.scanMu.Unlock()
	if db.scanned {
		return false, nil // a closed DB fails its read (readOnce)
	}
	return true, db.scanLocked()
}

// maxAddedPacks bounds the packs AddPack maps between two scans: past it,
// AddPack rescans instead, which also drops the packs a roll-up merged and
// deleted (a long-lived writer would otherwise keep every pack it ever
// wrote mapped, two mappings each).
const maxAddedPacks = 64

// AddPack lists the pack base+".pack" with its index base+".idx", both
// already in place in the local objects directory, ahead of the others:
// a writer that put it there reads its objects back without listing the
// pack directory again. Before the first lookup it does nothing (the
// first scan will find the pack); a pack already listed is left alone.
func (db *DB) AddPack(base string) error {
	db.scanMu.Lock() // every write of what is read here holds it
	defer db.scanMu.Unlock()
	s := db.stores[0]
	switch {
	case db.closed:
		return errClosed
	case !db.scanned || slices.ContainsFunc(s.packs, func(p *pack) bool { return p.base == base }):
		return nil
	case db.added >= maxAddedPacks:
		// Only the packs added since the last scan count: with many packs
		// on disk (a writer faster than its roll-ups) a scan per write
		// would list them all each time.
		return db.scanLocked()
	}
	db.mu.Lock()
	s.packs = append([]*pack{lazyPack(db.nextID.Add(1), base)}, s.packs...)
	db.mu.Unlock()
	db.added++
	return nil
}

// rescan re-reads every pack directory (see scanLocked).
func (db *DB) rescan() error {
	db.scanMu.Lock()
	defer db.scanMu.Unlock()
	return db.scanLocked()
}

// scanLocked lists objects/pack/*.idx of every store: packs still listed
// are kept, new ones are listed (mapped on first use), vanished ones are
// dropped and unmapped. The caller holds db.scanMu.
func (db *DB) scanLocked() error {
	if db.closed {
		return errClosed
	}
	scanCount.Add(1)
	for _, s := range db.stores {
		packs, err := db.scanStore(s)
		db.replacePacks(s, packs, err)
	}
	db.mu.Lock()
	db.scanned = true
	db.mu.Unlock()
	db.added = 0
	return nil
}

// replacePacks makes packs the list of s and unmaps the packs it no longer
// holds, holding mu exclusively, so no reader is inside mapped memory. The
// caller holds db.scanMu.
func (db *DB) replacePacks(s *store, packs []*pack, err error) {
	now := make(map[*pack]bool, len(packs))
	for _, p := range packs {
		now[p] = true
	}
	dropped := map[uint64]bool{}
	db.mu.Lock()
	for _, p := range s.packs {
		if !now[p] {
			dropped[p.id] = true
			UnmapFile(p.idx)
			UnmapFile(p.data)
			p.idx, p.data = nil, nil
		}
	}
	s.packs, s.err = packs, err
	db.mu.Unlock()
	db.cache.dropPacks(dropped)
}

// scanStore computes the new pack list of s without publishing it: new
// packs first, newest first (as git orders them), then the packs already
// mapped that are still listed, in their order (pack names are content
// hashes, and an open mapping stays self-consistent). The caller holds
// db.scanMu, so s.packs cannot change underneath.
func (db *DB) scanStore(s *store) ([]*pack, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "pack"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return s.packs, fmt.Errorf("odb: %w", err)
	}
	present := make(map[string]bool, len(entries))
	for _, e := range entries {
		present[e.Name()] = true
	}
	existing := make(map[string]bool, len(s.packs))
	var kept []*pack
	for _, p := range s.packs {
		existing[p.base] = true
		if present[filepath.Base(p.idxPath)] && present[filepath.Base(p.packPath)] {
			kept = append(kept, p)
		}
	}
	var fresh []*pack
	mtime := map[*pack]int64{}
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name(), ".idx")
		base := filepath.Join(s.dir, "pack", stem)
		if !ok || !present[stem+".pack"] || existing[base] {
			continue
		}
		// Listed only: the index is mapped on the first lookup that
		// reaches this pack (ensureIdx).
		p := lazyPack(db.nextID.Add(1), base)
		if fi, err := os.Stat(p.packPath); err == nil { // else deleted meanwhile
			fresh = append(fresh, p)
			mtime[p] = fi.ModTime().UnixNano()
		}
	}
	sort.SliceStable(fresh, func(i, j int) bool { return mtime[fresh[i]] > mtime[fresh[j]] })
	return append(fresh, kept...), nil
}

// DropPacks unmaps the local packs named by bases (paths without the
// .idx/.pack extension) and forgets them, for a caller about to take
// them out of objects/pack. A reader that wants one of their objects
// afterwards misses and rescans, as after any pack went away; the caller
// removes them only when their objects are in another pack already.
// Unmapping waits until no reader is inside mapped memory.
func (db *DB) DropPacks(bases []string) {
	db.scanMu.Lock()
	defer db.scanMu.Unlock()
	s := db.stores[0]
	kept := slices.DeleteFunc(slices.Clone(s.packs), func(p *pack) bool { return slices.Contains(bases, p.base) })
	db.replacePacks(s, kept, s.err)
}
