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
// Compression is git's loose default, level 1.
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
	zw := zFree.Get().(*zlib.Writer)
	defer zFree.Put(zw)
	zw.Reset(buf)
	hdr := t.String() + " " + strconv.Itoa(len(data)) + "\x00"
	zw.Write([]byte(hdr))
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return err
	}
	tmp, err := writeTemp(dir, "tmp_obj_", buf.Bytes(), s.sync.objects) // read-only, as git makes loose objects
	if err != nil {
		return err
	}
	err = os.Rename(tmp, final)
	if err != nil {
		os.Remove(tmp)
	}
	if errors.Is(err, os.ErrNotExist) {
		// git prune removed the emptied fan-out directory under us.
		return s.writeLoose(h, t, data)
	}
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write object %s", hex)
	}
	return nil
}

var (
	bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	// zFree keeps zlib writers for reuse: each holds about a megabyte of
	// flate state, which a new writer per object would allocate anew.
	zFree = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
		return w
	}}
)

// appendStored appends data to buf as a zlib stream that stores it
// uncompressed (one stored deflate block, RFC 1950/1951). A pack's small
// objects (under storedBelow bytes: most commits) gain a few bytes from
// deflate and cost it a Huffman table each. Trees are stored up to a
// block's limit whatever their size (see storeInPack).
func appendStored(buf *bytes.Buffer, data []byte) {
	n := len(data) // <= maxStoredBlock, so one block holds it
	buf.Write([]byte{0x78, 0x01, 0x01, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
	buf.Write(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	buf.Write(sum[:])
}

const (
	storedBelow    = 256    // the size under which a pack's object is stored rather than deflated
	maxStoredBlock = 0xffff // the most a stored deflate block holds
)

// storeInPack reports whether writePack stores an object of type t and
// size n rather than deflating it. A tree is mostly object names, which
// do not compress: deflate costs a tree several times what it costs a
// blob of its size and saves a few percent. The roll-ups and git's own
// repacks store most of them as deltas later, which git deflates.
func storeInPack(t oid.ObjectType, n int) bool {
	return n < storedBelow || (t == oid.TreeObject && n <= maxStoredBlock)
}
