package gitstore

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// pending holds the objects written inside a transaction until they are
// stored together as one pack (see flush): two files, where a record
// append's nine loose objects would be nine. Outside a transaction a write
// is a loose object. What is buffered is stored before anything outside
// this process could need it: before a ref moves, before a git process
// starts, and when the transaction ends; until then ReadObject finds it here.
type pending struct {
	mu    sync.Mutex
	depth int
	objs  []object
	at    map[Hash]int
	gen   uint64 // counts the changes of objs

	// hold counts the Together calls running; while one runs, the .keep
	// files of the packs written wait in keeps until the last one returns.
	hold  int
	keeps []string
}

// object is one object: its name, type and content.
type object struct {
	h    Hash
	t    oid.ObjectType
	data []byte
}

// begin opens a transaction scope: writes are buffered until the matching end.
func (s *Store) begin() {
	s.pend.mu.Lock()
	s.pend.depth++
	s.pend.mu.Unlock()
}

// end closes a transaction scope and stores whatever is still buffered
// (objects of a transaction that failed, or of a writer outside any
// transaction that wrote while one ran).
func (s *Store) end() {
	s.pend.mu.Lock()
	s.pend.depth--
	s.pend.mu.Unlock()
	s.flushNow()
}

// Together runs fn with the writes of its transactions held together: an
// object written inside fn goes with the next pack any of them writes, and
// each pack keeps its .keep until Together returns, so a later UpdateRef
// inside fn may name objects of an earlier transaction's pack without a
// `git repack -a -d` dropping them in between (a board completion: two
// commits, one pack).
func (s *Store) Together(fn func() error) error {
	s.begin()
	s.pend.mu.Lock()
	s.pend.hold++
	s.pend.mu.Unlock()
	defer func() {
		s.end()
		s.pend.mu.Lock()
		s.pend.hold--
		var keeps []string
		if s.pend.hold == 0 {
			keeps, s.pend.keeps = s.pend.keeps, nil
		}
		s.pend.mu.Unlock()
		for _, k := range keeps {
			os.Remove(k)
		}
	}()
	return fn()
}

// dropKeep removes a pack's .keep once a ref names its objects, or, inside
// Together, when Together returns.
func (s *Store) dropKeep(keep string) {
	if keep == "" {
		return
	}
	s.pend.mu.Lock()
	if s.pend.hold > 0 {
		s.pend.keeps = append(s.pend.keeps, keep)
		keep = ""
	}
	s.pend.mu.Unlock()
	if keep != "" {
		os.Remove(keep)
	}
}

// The layout of a version 2 pack index (what writePack writes and a
// roll-up reads names from): this header, a fan-out table of 256 counts,
// then per object its name, CRC and offset (28 bytes), then the two
// checksums.
const (
	idxV2Header  = "\xfftOc\x00\x00\x00\x02"
	idxHead      = len(idxV2Header) + 256*4
	idxPerObject = 20 + 4 + 4
	idxTrailer   = 2 * 20
)

// buffer keeps an object for the next pack when a transaction runs, and
// reports whether it did.
func (s *Store) buffer(h Hash, t oid.ObjectType, data []byte) bool {
	s.pend.mu.Lock()
	defer s.pend.mu.Unlock()
	if s.pend.depth == 0 {
		return false
	}
	if s.pend.at == nil {
		s.pend.at = map[Hash]int{}
	}
	if _, ok := s.pend.at[h]; !ok {
		s.pend.at[h] = len(s.pend.objs)
		s.pend.objs = append(s.pend.objs, object{h, t, bytes.Clone(data)})
		s.pend.gen++
	}
	return true
}

func (s *Store) pendingObject(h Hash) (object, bool) {
	s.pend.mu.Lock()
	defer s.pend.mu.Unlock()
	i, ok := s.pend.at[h]
	if !ok {
		return object{}, false
	}
	return s.pend.objs[i], true
}

// flush stores the buffered objects as one pack, using p (written by
// stagePack; nil for none) when the buffer has not changed since. A ref
// update calls it holding the ref's lock, just before the ref moves, so no
// repack can list the pack while nothing names its objects yet; inside
// Together, where a later ref names some of them, the pack gets a .keep,
// returned for the caller to remove once that ref has moved ("" otherwise).
// While a git gc runs it stores the objects loose instead (see gcRunning).
// It holds the buffer's lock throughout, so a reader always finds an
// object in one place; a failed flush keeps the objects buffered.
func (s *Store) flush(p *packFiles) (keep string, err error) {
	s.pend.mu.Lock()
	defer s.pend.mu.Unlock()
	if p != nil && (p.gen != s.pend.gen || p.err != nil) {
		p.discard()
		p = nil
	}
	if len(s.pend.objs) == 0 {
		return "", nil
	}
	if p == nil {
		p = s.writePackFiles(s.pend.objs)
	}
	base, keep, err := s.placePack(p, s.pend.hold > 0)
	if errors.Is(err, errGCRuns) {
		keep, err = "", nil
		for _, o := range s.pend.objs {
			if err = s.writeLoose(o.h, o.t, o.data); err != nil {
				return "", err
			}
			s.maint.wrote()
		}
	}
	if err != nil {
		return "", err
	}
	if base != "" {
		// This process reads its writes back at once: map the new pack
		// now rather than list objects/pack again on the first miss.
		if db, derr := s.db(); derr == nil {
			db.AddPack(base)
		}
	}
	s.pend.objs, s.pend.at = nil, nil
	s.pend.gen++
	return keep, nil
}

// stagePack writes the pack of the objects buffered now under temporary
// names, for a ref update to put in place (flush) once it holds the ref's
// lock and has read the ref: the writing and the pack's fsync wait on the
// disk meanwhile. The objects stay buffered until then; nil when there
// are none.
func (s *Store) stagePack() *packFiles {
	s.pend.mu.Lock()
	objs, gen := s.pend.objs, s.pend.gen
	s.pend.mu.Unlock()
	if len(objs) == 0 {
		return nil
	}
	// objs is read without the lock: buffer only appends past its end,
	// and flush replaces the slice.
	p := s.writePackFiles(objs)
	p.gen = gen
	return p
}

// errGCRuns is placePack's answer when a git gc runs: nothing was put in
// place, and the objects are to be stored loose (see gcRunning).
var errGCRuns = errors.New("git gc is running")

// testHookPackPlaced, when set, runs in placePack between the .pack and
// its .idx being put in place (tests: the moment a git gc's listing can
// miss the .pack).
var testHookPackPlaced func(base string)

// flushNow is flush for a caller that moves no ref itself (a git process
// is about to start): the pack is not kept.
func (s *Store) flushNow() error {
	keep, err := s.flush(nil)
	s.dropKeep(keep)
	return err
}

// packFiles is a pack and its index written under temporary names, not
// yet in place.
type packFiles struct {
	gen             uint64 // the buffer's generation it holds
	base            string // objects/pack/pack-<sum>; "" when that pack is in place already
	tmpPack, tmpIdx string
	synced          chan struct{} // closed when the pack is forced to disk and closed
	syncErr         error
	err             error
}

// wait waits for the pack's fsync and returns its error.
func (p *packFiles) wait() error {
	<-p.synced
	return p.syncErr
}

// discard removes the temporary files of a pack not put in place.
func (p *packFiles) discard() {
	if p == nil || p.err != nil || p.base == "" {
		return
	}
	p.wait()
	os.Remove(p.tmpPack)
	os.Remove(p.tmpIdx)
}

// writePackFiles writes objs (distinct) as a pack and its index under
// temporary names in objects/pack, as git's pack writers do; the pack's
// fsync, when core.fsync asks for one, runs on while the index is written
// and after (see wait). The pack is packWriter's, its index version 2.
func (s *Store) writePackFiles(objs []object) *packFiles {
	dir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	type entry struct {
		h   Hash
		off uint64
		crc uint32
	}
	entries := make([]entry, len(objs))
	var pw packWriter
	defer pw.close()
	pw.header(buf, len(objs))
	for i, o := range objs {
		off := buf.Len()
		if err := pw.object(buf, o.t, o.data); err != nil {
			return &packFiles{err: err}
		}
		entries[i] = entry{o.h, uint64(off), crc32.ChecksumIEEE(buf.Bytes()[off:])}
	}
	sum := pw.trailer(buf)

	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].h[:], entries[j].h[:]) < 0 })
	idx := make([]byte, 0, idxHead+len(entries)*idxPerObject+idxTrailer)
	idx = append(idx, idxV2Header...)
	var fan [256]uint32
	for _, e := range entries {
		fan[e.h[0]]++
	}
	var n uint32
	for i := range fan {
		n += fan[i]
		idx = binary.BigEndian.AppendUint32(idx, n)
	}
	for _, e := range entries {
		idx = append(idx, e.h[:]...)
	}
	for _, e := range entries {
		idx = binary.BigEndian.AppendUint32(idx, e.crc)
	}
	var large []uint64
	for _, e := range entries {
		v := uint32(e.off)
		if e.off >= 1<<31 {
			v = 1<<31 | uint32(len(large))
			large = append(large, e.off)
		}
		idx = binary.BigEndian.AppendUint32(idx, v)
	}
	for _, off := range large {
		idx = binary.BigEndian.AppendUint64(idx, off)
	}
	idx = append(idx, sum[:]...)
	isum := sha1.Sum(idx)
	idx = append(idx, isum[:]...)

	p := &packFiles{base: filepath.Join(dir, "pack-"+hex.EncodeToString(sum[:])), synced: make(chan struct{})}
	if _, err := os.Lstat(p.base + ".idx"); err == nil {
		// The same pack is in place (an attempt that lost its swap):
		// it must not be replaced or removed.
		return &packFiles{}
	}
	pf, err := createTemp(dir, "tmp_pack_")
	if err != nil {
		return &packFiles{err: err}
	}
	p.tmpPack = pf.Name()
	if _, err := pf.Write(buf.Bytes()); err != nil || !s.sync.objects {
		p.syncErr = errors.Join(err, pf.Close())
		close(p.synced)
	} else {
		go func() {
			p.syncErr = errors.Join(pf.Sync(), pf.Close())
			close(p.synced)
		}()
	}
	if p.tmpIdx, err = writeTemp(dir, "tmp_idx_", idx, s.sync.objects); err != nil {
		p.wait()
		os.Remove(p.tmpPack)
		return &packFiles{err: err}
	}
	return p
}

// packWriter encodes a version 2 pack into a buffer, every object whole
// (no deltas: repacks delta later), small objects and trees stored (see
// storeInPack), the rest at zlib level 1.
type packWriter struct{ zw *zlib.Writer }

func (w *packWriter) header(buf *bytes.Buffer, n int) {
	buf.WriteString("PACK\x00\x00\x00\x02") // version 2
	buf.Write(binary.BigEndian.AppendUint32(nil, uint32(n)))
}

func (w *packWriter) object(buf *bytes.Buffer, t oid.ObjectType, data []byte) error {
	// Type and size: 3 bits of type, then the size 4 bits first and 7
	// bits per following byte, least significant first.
	size := uint64(len(data))
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size != 0 {
		buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	buf.WriteByte(c)
	if storeInPack(t, len(data)) {
		appendStored(buf, data)
		return nil
	}
	if w.zw == nil {
		w.zw = zFree.Get().(*zlib.Writer)
	}
	w.zw.Reset(buf)
	w.zw.Write(data)
	return w.zw.Close()
}

// trailer appends the pack's checksum and returns it.
func (w *packWriter) trailer(buf *bytes.Buffer) [20]byte {
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return sum
}

func (w *packWriter) close() {
	if w.zw != nil {
		zFree.Put(w.zw)
		w.zw = nil
	}
}

// PackObject is one object of a pack EncodePack makes.
type PackObject struct {
	Type oid.ObjectType
	Data []byte
}

// EncodePack is objs as a whole version 2 pack, each encoded as a write's
// own pack is (a push's pack, which the receiver indexes itself).
func EncodePack(objs []PackObject) ([]byte, error) {
	var buf bytes.Buffer
	var pw packWriter
	defer pw.close()
	pw.header(&buf, len(objs))
	for _, o := range objs {
		if err := pw.object(&buf, o.Type, o.Data); err != nil {
			return nil, err
		}
	}
	pw.trailer(&buf)
	return buf.Bytes(), nil
}

// placePack puts p in place, the pack first and its index last, since a
// pack becomes visible with its index, and returns its base name ("" when
// it was in place already).
//
// withKeep gives the pack a .keep, a hard link to it, before it appears;
// the writer removes it once the last ref naming its objects has moved:
// otherwise a concurrent `git repack -a -d` that read the refs before that
// ref moved deletes the pack as unreachable (git's receive-pack guards its
// packs the same way). Maintenance removes a killed writer's .keep after
// an hour; a user's own .keep, a file of its own, is never touched.
func (s *Store) placePack(p *packFiles, withKeep bool) (base, keep string, err error) {
	if p.err != nil {
		return "", "", p.err
	}
	if p.base == "" {
		return "", "", nil
	}
	base = p.base
	dir := filepath.Dir(base)
	if err := p.wait(); err != nil {
		p.discard()
		return "", "", apperr.Wrap(apperr.Write, err, "cannot write a pack in %s", dir)
	}
	if withKeep {
		keep = base + ".keep"
		if err := os.Link(p.tmpPack, keep); err != nil && !errors.Is(err, os.ErrExist) {
			p.discard()
			return "", "", apperr.Wrap(apperr.Write, err, "cannot keep the pack %s", base+".pack")
		}
	}
	placed := false
	defer func() {
		if !placed && withKeep {
			os.Remove(p.base + ".keep")
		}
	}()
	if err := os.Rename(p.tmpPack, base+".pack"); err != nil {
		p.discard()
		return "", "", apperr.Wrap(apperr.Write, err, "cannot move a pack into place in %s", dir)
	}
	if testHookPackPlaced != nil {
		testHookPackPlaced(base)
	}
	// A git gc running may have listed the directory without the .pack
	// and would delete the .idx as garbage (see gcRunning): go loose.
	if gcRunning(s.repo.CommonDir) {
		os.Remove(base + ".pack")
		os.Remove(p.tmpIdx)
		return "", "", errGCRuns
	}
	if err := os.Rename(p.tmpIdx, base+".idx"); err != nil {
		os.Remove(p.tmpIdx)
		return "", "", apperr.Wrap(apperr.Write, err, "cannot move a pack index into place in %s", dir)
	}
	placed = true
	s.sync.syncDir(dir)
	s.maint.packed()
	return base, keep, nil
}

// createTemp makes a new read-only file in dir (made when missing)
// named prefix and a random suffix, open for writing.
func createTemp(dir, prefix string) (*os.File, error) {
	for i := 0; ; i++ {
		f, err := os.OpenFile(filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		switch {
		case err == nil:
			return f, nil
		case i >= 100:
		case errors.Is(err, os.ErrExist):
			continue
		case errors.Is(err, os.ErrNotExist):
			// A git prune may remove the emptied directory again meanwhile.
			if err = mkdirAll(dir); err == nil {
				continue
			}
		}
		return nil, apperr.Wrap(apperr.Write, err, "cannot create a file in %s", dir)
	}
}

// writeTemp writes data to a new read-only temporary file in dir (made
// when missing), forced to disk when sync, and returns its name; it
// removes the file when any of that fails.
func writeTemp(dir, prefix string, data []byte, sync bool) (string, error) {
	f, err := createTemp(dir, prefix)
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if werr == nil && sync {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", apperr.Wrap(apperr.Write, werr, "cannot write %s", f.Name())
	}
	return f.Name(), nil
}
