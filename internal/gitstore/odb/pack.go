package odb

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"sync"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

const (
	hashLen = 20 // SHA-1

	idxHeaderLen = 8                     // magic + version
	idxFanoutLen = 256 * 4               // fanout table
	idxPerObject = hashLen + 4 + 4       // name + CRC32 + 32-bit offset
	idxTrailer   = 2 * hashLen           // pack checksum + idx checksum
	packHeader   = 12                    // "PACK", version, object count
	packTrailer  = hashLen               // pack checksum
	maxInflation = 1032                  // deflate cannot expand input more than ~1032:1
	largeOffFlag = uint32(1) << 31       // MSB of a 32-bit idx offset: index into the 64-bit table
	maxHdrShift  = 64 - 7                // size varints beyond this would overflow uint64
	idxMagic     = "\xfftOc"             // idx v2+ signature
	packMagic    = "PACK"                // pack signature
	maxAlloc     = uint64(^uint(0) >> 2) // largest buffer we will allocate (int-safe)
)

// Pack entry type codes (identical to oid.ObjectType values).
const (
	typCommit   = 1
	typTree     = 2
	typBlob     = 3
	typTag      = 4
	typOfsDelta = 6
	typRefDelta = 7
)

// pack is one mapped .idx/.pack pair. Its fields are immutable once
// mapped; the mapped slices are only valid while the owning DB holds the
// pack (readers hold DB.mu for reading).
type pack struct {
	id       uint64
	base     string // path without the .idx/.pack extension
	idxPath  string
	packPath string

	idx  []byte // mapped .idx, once ensureIdx has succeeded
	data []byte // mapped .pack, once mapData has succeeded

	// Each file is mapped on first use, as git does: a CLI call finds
	// what it reads in the newest packs and opens only those.
	idxOnce  sync.Once
	idxGone  bool  // deleted since the listing: the pack holds nothing
	idxErr   error // why the index cannot be used
	dataOnce sync.Once
	dataErr  error // why the .pack cannot be used

	fanout  [256]uint32 // copied out of the idx at open (validated)
	n       int         // number of objects
	names   int         // offset of the sorted name table in idx
	offs32  int         // offset of the 32-bit offset table in idx
	offs64  int         // offset of the 64-bit offset table in idx
	nLarge  int         // entries in the 64-bit offset table
	dataEnd int         // len(data) - trailer: entries live in [packHeader, dataEnd)
}

// lazyPack is a listed pack whose index is mapped on first use.
func lazyPack(id uint64, base string) *pack {
	return &pack{id: id, base: base, idxPath: base + ".idx", packPath: base + ".pack"}
}

// ensureIdx maps and validates the index once. gone reports an index
// deleted since the pack was listed (a roll-up merged it): the pack then
// holds nothing, and a reader that misses everywhere lists the directory
// again. The caller holds DB.mu for reading, so unmap cannot run meanwhile.
func (p *pack) ensureIdx() (gone bool, err error) {
	p.idxOnce.Do(func() {
		p.idxErr = fmt.Errorf("odb: %s: fault while reading it", p.idxPath) // kept if a fault panics
		idx, err := MapFile(p.idxPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			p.idxGone, p.idxErr = true, nil
		case err != nil:
			p.idxErr = fmt.Errorf("odb: %w", err)
		default:
			p.idx = idx
			if p.idxErr = p.parseIdx(); p.idxErr != nil {
				UnmapFile(idx)
				p.idx = nil
				p.idxErr = fmt.Errorf("odb: %s: %w", p.idxPath, p.idxErr)
			}
		}
	})
	return p.idxGone, p.idxErr
}

// mapData maps the .pack and validates its header and checksum against
// the index, once; a failure stands until a rescan drops the pack. The
// caller holds DB.mu for reading, so unmap cannot run meanwhile.
func (p *pack) mapData() error {
	p.dataOnce.Do(func() {
		p.dataErr = fmt.Errorf("odb: %s: fault while reading it", p.packPath) // kept if a fault panics
		d, err := MapFile(p.packPath)
		if err != nil {
			p.dataErr = fmt.Errorf("odb: %w", err)
			return
		}
		p.data = d
		if p.dataErr = p.checkPack(); p.dataErr != nil {
			UnmapFile(d)
			p.data = nil
			p.dataErr = fmt.Errorf("odb: %s: %w", p.packPath, p.dataErr)
		}
	})
	return p.dataErr
}

// parseIdx validates the v2 index layout without reading per-object data.
func (p *pack) parseIdx() error {
	idx := p.idx
	if len(idx) < idxHeaderLen+idxFanoutLen+idxTrailer {
		return fmt.Errorf("pack index truncated (%d bytes)", len(idx))
	}
	if string(idx[:4]) != idxMagic {
		return errors.New("not a version 2 pack index (bad magic; version 1 indexes are not supported)")
	}
	if v := binary.BigEndian.Uint32(idx[4:8]); v != 2 {
		return fmt.Errorf("unsupported pack index version %d", v)
	}
	prev := uint32(0)
	for i := range p.fanout {
		v := binary.BigEndian.Uint32(idx[idxHeaderLen+4*i:])
		if v < prev {
			return fmt.Errorf("pack index fanout not monotonic at entry %d", i)
		}
		p.fanout[i], prev = v, v
	}
	n := uint64(p.fanout[255])
	minLen := uint64(idxHeaderLen+idxFanoutLen+idxTrailer) + n*idxPerObject
	if uint64(len(idx)) < minLen {
		return fmt.Errorf("pack index truncated: %d objects need at least %d bytes, file has %d", n, minLen, len(idx))
	}
	extra := uint64(len(idx)) - minLen
	if extra%8 != 0 || extra/8 > n {
		return fmt.Errorf("pack index has invalid size %d for %d objects", len(idx), n)
	}
	p.n = int(n)
	p.names = idxHeaderLen + idxFanoutLen
	p.offs32 = p.names + p.n*(hashLen+4)
	p.offs64 = p.offs32 + p.n*4
	p.nLarge = int(extra / 8)
	return nil
}

// checkPack validates the pack header against the index.
func (p *pack) checkPack() error {
	d := p.data
	if len(d) < packHeader+packTrailer {
		return fmt.Errorf("pack truncated (%d bytes)", len(d))
	}
	if string(d[:4]) != packMagic {
		return errors.New("not a pack file (bad signature)")
	}
	if v := binary.BigEndian.Uint32(d[4:8]); v != 2 && v != 3 {
		return fmt.Errorf("unsupported pack version %d", v)
	}
	if c := binary.BigEndian.Uint32(d[8:12]); uint64(c) != uint64(p.n) {
		return fmt.Errorf("pack holds %d objects but its index lists %d", c, p.n)
	}
	packSum := d[len(d)-packTrailer:]
	idxSum := p.idx[len(p.idx)-idxTrailer : len(p.idx)-hashLen]
	if !bytes.Equal(packSum, idxSum) {
		return fmt.Errorf("pack checksum does not match %s", p.idxPath)
	}
	p.dataEnd = len(d) - packTrailer
	return nil
}

// find binary-searches the index for h and returns its pack offset.
func (p *pack) find(h oid.Hash) (uint64, bool, error) {
	if gone, err := p.ensureIdx(); gone || err != nil {
		return 0, false, err
	}
	lo := 0
	if h[0] > 0 {
		lo = int(p.fanout[h[0]-1])
	}
	hi := int(p.fanout[h[0]])
	name := func(i int) []byte { return p.idx[p.names+i*hashLen : p.names+(i+1)*hashLen] }
	i := lo + sort.Search(hi-lo, func(i int) bool { return bytes.Compare(name(lo+i), h[:]) >= 0 })
	if i == hi || !bytes.Equal(name(i), h[:]) {
		return 0, false, nil
	}
	off, err := p.offsetAt(i)
	return off, err == nil, err
}

// offsetAt returns the pack offset of the i-th object in index order.
func (p *pack) offsetAt(i int) (uint64, error) {
	v := binary.BigEndian.Uint32(p.idx[p.offs32+4*i:])
	if v&largeOffFlag == 0 {
		return uint64(v), nil
	}
	j := int(v &^ largeOffFlag)
	if j >= p.nLarge {
		return 0, fmt.Errorf("%s: large offset index %d out of range (table has %d entries)", p.idxPath, j, p.nLarge)
	}
	return binary.BigEndian.Uint64(p.idx[p.offs64+8*j:]), nil
}

// entryHdr is a decoded pack entry header.
type entryHdr struct {
	typ      byte
	size     uint64 // inflated size of the entry data (delta size for deltas)
	dataOff  int    // start of the zlib stream
	baseOff  uint64 // OFS_DELTA: base entry offset
	baseHash oid.Hash
}

func (p *pack) corrupt(off uint64, err error) error {
	return fmt.Errorf("%s: entry at offset %d: %w", p.packPath, off, err)
}

// header decodes the entry header at off with full bounds checking.
func (p *pack) header(off uint64) (entryHdr, error) {
	var h entryHdr
	if err := p.mapData(); err != nil {
		return h, err
	}
	if off < packHeader || off >= uint64(p.dataEnd) {
		return h, p.corrupt(off, errors.New("offset outside pack data"))
	}
	d := p.data[:p.dataEnd]
	pos := int(off)
	c := d[pos]
	pos++
	h.typ = (c >> 4) & 7
	h.size = uint64(c & 0x0f)
	shift := uint(4)
	for c&0x80 != 0 {
		if pos >= len(d) {
			return h, p.corrupt(off, errors.New("truncated entry header"))
		}
		if shift > maxHdrShift {
			return h, p.corrupt(off, errors.New("entry size overflows"))
		}
		c = d[pos]
		pos++
		h.size |= uint64(c&0x7f) << shift
		shift += 7
	}
	switch h.typ {
	case typCommit, typTree, typBlob, typTag:
	case typOfsDelta:
		if pos >= len(d) {
			return h, p.corrupt(off, errors.New("truncated delta base offset"))
		}
		c = d[pos]
		pos++
		rel := uint64(c & 0x7f)
		for c&0x80 != 0 {
			if pos >= len(d) {
				return h, p.corrupt(off, errors.New("truncated delta base offset"))
			}
			if rel >= 1<<(64-8) {
				return h, p.corrupt(off, errors.New("delta base offset overflows"))
			}
			c = d[pos]
			pos++
			rel = (rel+1)<<7 | uint64(c&0x7f)
		}
		if rel == 0 || rel > off-packHeader {
			return h, p.corrupt(off, fmt.Errorf("delta base offset %d out of range", rel))
		}
		h.baseOff = off - rel
	case typRefDelta:
		if len(d)-pos < hashLen {
			return h, p.corrupt(off, errors.New("truncated delta base name"))
		}
		copy(h.baseHash[:], d[pos:pos+hashLen])
		pos += hashLen
	default:
		return h, p.corrupt(off, fmt.Errorf("invalid object type %d", h.typ))
	}
	h.dataOff = pos
	return h, nil
}

// inflate decompresses the zlib stream of the entry at off, which must
// produce exactly h.size bytes.
func (p *pack) inflate(off uint64, h entryHdr) ([]byte, error) {
	src := p.data[h.dataOff:p.dataEnd]
	if h.size > uint64(len(src))*maxInflation+64 {
		return nil, p.corrupt(off, fmt.Errorf("declared size %d exceeds what the remaining %d bytes can inflate to", h.size, len(src)))
	}
	if h.size > maxAlloc {
		return nil, p.corrupt(off, fmt.Errorf("declared size %d too large for this platform", h.size))
	}
	out, err := inflateExact(src, h.size)
	if err != nil {
		return nil, p.corrupt(off, err)
	}
	return out, nil
}

var zlibPool sync.Pool // of io.ReadCloser implementing zlib.Resetter

// getZlib returns a pooled zlib reader reading from r; release it with
// zlibPool.Put once done.
func getZlib(r io.Reader) (io.ReadCloser, error) {
	if v := zlibPool.Get(); v != nil {
		zr := v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(r, nil); err != nil {
			zlibPool.Put(zr)
			return nil, fmt.Errorf("zlib: %w", err)
		}
		return zr, nil
	}
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	return zr, nil
}

// inflateExact inflates a zlib stream at the start of src that must produce
// exactly size bytes and then end (the zlib reader verifies the Adler-32
// checksum there).
func inflateExact(src []byte, size uint64) ([]byte, error) {
	zr, err := getZlib(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	defer zlibPool.Put(zr)
	out := make([]byte, int(size))
	if _, err := io.ReadFull(zr, out); err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("zlib stream shorter than declared size %d", size)
	} else if err != nil {
		return nil, fmt.Errorf("zlib: %w", err)
	}
	var one [1]byte
	if n, err := zr.Read(one[:]); n > 0 {
		return nil, fmt.Errorf("zlib stream longer than declared size %d", size)
	} else if err != io.EOF {
		return nil, fmt.Errorf("zlib stream does not end after %d bytes: %v", size, err)
	}
	return out, nil
}
