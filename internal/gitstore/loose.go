package gitstore

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// writeLoose stores one loose object the way git does: the zlib stream of
// "<type> <size>\0<content>" written to a temporary file in the object's
// fan-out directory, then renamed to its name, so no reader ever sees a
// partial object. An object that already exists is not written again.
//
// go-git's writer (which this replaced) built a fresh zlib compressor per
// object (~600 KB of state) and created its temporary file in objects/pack
// after several stats; with nine objects per record append that was ~5 ms
// of a 12 ms CLI call (measured with perf on this machine). Here the
// compressor is pooled and compression is git's loose default, level 1.
func (s *Store) writeLoose(h Hash, t oid.ObjectType, data []byte) error {
	hex := h.String()
	dir := filepath.Join(s.repo.CommonDir, "objects", hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		// Freshen it, as git does: the copy may be an unreachable leftover
		// old enough for maintenance's `git prune --expire=1.hour.ago`,
		// which must not take it away now that a new commit needs it.
		now := time.Now()
		os.Chtimes(final, now, now)
		return nil
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	zw := zFree.get()
	defer zFree.put(zw)
	zw.Reset(buf)
	hdr := t.String() + " " + strconv.Itoa(len(data)) + "\x00"
	zw.Write([]byte(hdr))
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	for i := 0; i < 100 && errors.Is(err, os.ErrNotExist); i++ {
		if err = mkdirAll(dir); err == nil {
			f, err = os.CreateTemp(dir, "tmp_obj_")
		}
	}
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create an object file in %s", dir)
	}
	_, werr := f.Write(buf.Bytes())
	if werr == nil && s.sync.loose {
		werr = f.Sync()
	}
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		// Loose objects are read-only, as git makes them.
		os.Chmod(f.Name(), 0o444)
		werr = os.Rename(f.Name(), final)
	}
	if errors.Is(werr, os.ErrNotExist) {
		// git prune removed the emptied fan-out directory under us.
		os.Remove(f.Name())
		return s.writeLoose(h, t, data)
	}
	if werr != nil {
		os.Remove(f.Name())
		return apperr.Wrap(apperr.Write, werr, "cannot write object %s", hex)
	}
	return nil
}

var (
	bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	zFree   writerList
)

// writerList keeps zlib writers for reuse. Not a sync.Pool: a pool is
// emptied by garbage collections, and each writer holds about 650 KB of
// flate state, so a server collecting often (near its memory limit, with a
// large board) made two new writers per call, whose garbage brought on the
// next collection: 1.3 collections per MCP call at 9,000 items (issue 19).
type writerList struct {
	mu   sync.Mutex
	free []*zlib.Writer
}

// maxFreeWriters bounds the writers kept (one per concurrent writer).
const maxFreeWriters = 4

func (l *writerList) get() *zlib.Writer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		w := l.free[n-1]
		l.free = l.free[:n-1]
		return w
	}
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}

func (l *writerList) put(w *zlib.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.free) < maxFreeWriters {
		l.free = append(l.free, w)
	}
}

// appendStored appends data to buf as a zlib stream that stores it
// uncompressed (one stored deflate block, RFC 1950/1951). A pack's small
// objects (under storedBelow bytes: most commits) gain a few bytes from
// deflate and cost it a Huffman table each (7 % of an in-process MCP
// run's CPU went to compress/flate, pprof); written by hand, they cost no
// flate state either. Trees are stored up to a block's limit whatever
// their size (see storeInPack).
func appendStored(buf *bytes.Buffer, data []byte) {
	n := len(data) // <= maxStoredBlock, so one block holds it
	buf.Write([]byte{0x78, 0x01, 0x01, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
	buf.Write(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	buf.Write(sum[:])
}

// storedBelow is the size under which a pack's object is stored rather
// than deflated.
const storedBelow = 256

// maxStoredBlock is the most a stored deflate block holds.
const maxStoredBlock = 0xffff

// storeInPack reports whether writePack stores an object of type t and
// size n rather than deflating it. A tree is mostly object names, which
// do not compress: deflating a trie node of 21 entries (609 bytes) took
// 50–65 µs, three times as long as a 444-byte record blob (17–23 µs), and
// saved 8 % of it; a node of 256 entries took 170–176 µs and saved 18 %
// (go test -bench, compress/zlib at BestSpeed, three runs each). The
// roll-ups and git's own repacks store most of them as deltas later,
// which git deflates.
func storeInPack(t oid.ObjectType, n int) bool {
	return n < storedBelow || (t == oid.TreeObject && n <= maxStoredBlock)
}
