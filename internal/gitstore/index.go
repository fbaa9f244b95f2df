package gitstore

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// errIndexUnsupported says the index uses a feature this reader leaves to
// git itself (a split or sparse index); the caller asks the git CLI.
var errIndexUnsupported = errors.New("index feature not read in-process")

// indexEntry is one entry of git's index (the staging area) with the stat
// data git recorded when it last saw the file.
type indexEntry struct {
	path  string
	mode  uint32
	hash  Hash
	stage int

	ctimeSec, ctimeNsec uint32
	mtimeSec, mtimeNsec uint32
	ino, uid, gid, size uint32

	assumeValid  bool
	skipWorktree bool
	intentToAdd  bool
}

// cacheTree is one valid node of the index's TREE extension: the tree the
// index holds for a directory, while no entry under it changed.
type cacheTree struct {
	entries int
	hash    Hash
}

// gitIndex is a parsed index file.
type gitIndex struct {
	entries []indexEntry
	// trees maps a directory ("" for the root, else "a/b") to its cached
	// tree, for the directories whose cache is valid.
	trees map[string]cacheTree
	// mtimeSec/Nsec is the index file's own modification time: an entry
	// modified in the same instant or later is "racily clean" and must be
	// hashed (its stat data cannot prove it unchanged).
	mtimeSec, mtimeNsec int64
}

// readIndex reads and verifies the index at path. A missing file is an
// empty index. Versions 2, 3 and 4 are read; a split index ("link") or a
// sparse index ("sdir") is errIndexUnsupported.
func readIndex(path string) (*gitIndex, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &gitIndex{trees: map[string]cacheTree{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat index: %w", err)
	}
	data := make([]byte, fi.Size())
	if _, err := readFull(f, data); err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	idx, err := parseIndex(data)
	if err != nil {
		return nil, err
	}
	mt := fi.ModTime()
	idx.mtimeSec, idx.mtimeNsec = mt.Unix(), int64(mt.Nanosecond())
	return idx, nil
}

func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// parseIndex decodes an index file's bytes.
func parseIndex(data []byte) (*gitIndex, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("corrupt index: "+format, a...)
	}
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, bad("no DIRC header")
	}
	body, sum := data[:len(data)-20], data[len(data)-20:]
	// An all-zero trailer means index.skipHash: git did not checksum it.
	if !bytes.Equal(sum, make([]byte, 20)) {
		if got := sha1.Sum(body); !bytes.Equal(got[:], sum) {
			return nil, bad("checksum mismatch")
		}
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, bad("version %d", version)
	}
	n := int(binary.BigEndian.Uint32(data[8:12]))
	if n > len(body)/40 {
		return nil, bad("%d entries cannot fit in %d bytes", n, len(body))
	}
	idx := &gitIndex{entries: make([]indexEntry, 0, n), trees: map[string]cacheTree{}}
	p := 12
	var prev []byte // v4: the previous path, which the next one shares a prefix with
	for i := 0; i < n; i++ {
		start := p
		if p+62 > len(body) {
			return nil, bad("entry %d truncated", i)
		}
		b := body[p:]
		var e indexEntry
		e.ctimeSec = binary.BigEndian.Uint32(b[0:])
		e.ctimeNsec = binary.BigEndian.Uint32(b[4:])
		e.mtimeSec = binary.BigEndian.Uint32(b[8:])
		e.mtimeNsec = binary.BigEndian.Uint32(b[12:])
		// b[16:20] is the device, which git itself ignores by default.
		e.ino = binary.BigEndian.Uint32(b[20:])
		e.mode = binary.BigEndian.Uint32(b[24:])
		e.uid = binary.BigEndian.Uint32(b[28:])
		e.gid = binary.BigEndian.Uint32(b[32:])
		e.size = binary.BigEndian.Uint32(b[36:])
		copy(e.hash[:], b[40:60])
		flags := binary.BigEndian.Uint16(b[60:])
		e.assumeValid = flags&0x8000 != 0
		e.stage = int(flags>>12) & 3
		p += 62
		if flags&0x4000 != 0 {
			if version < 3 || p+2 > len(body) {
				return nil, bad("entry %d has extended flags in version %d", i, version)
			}
			x := binary.BigEndian.Uint16(body[p:])
			e.skipWorktree = x&0x4000 != 0
			e.intentToAdd = x&0x2000 != 0
			p += 2
		}
		if version == 4 {
			strip, used := indexVarint(body[p:])
			if used == 0 || int(strip) > len(prev) {
				return nil, bad("entry %d has a bad path prefix", i)
			}
			p += used
			end := bytes.IndexByte(body[p:], 0)
			if end < 0 {
				return nil, bad("entry %d path unterminated", i)
			}
			name := make([]byte, 0, len(prev)-int(strip)+end)
			name = append(name, prev[:len(prev)-int(strip)]...)
			name = append(name, body[p:p+end]...)
			prev = name
			e.path = string(name)
			p += end + 1
		} else {
			end := bytes.IndexByte(body[p:], 0)
			if end < 0 {
				return nil, bad("entry %d path unterminated", i)
			}
			e.path = string(body[p : p+end])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			p = start + (p-start+end+8)&^7
			if p > len(body) {
				return nil, bad("entry %d padding truncated", i)
			}
		}
		if e.mode&0o170000 == 0o040000 {
			return nil, errIndexUnsupported // a sparse-index directory entry
		}
		idx.entries = append(idx.entries, e)
	}
	for p+8 <= len(body) {
		sig := string(body[p : p+4])
		size := int(binary.BigEndian.Uint32(body[p+4:]))
		p += 8
		if size < 0 || p+size > len(body) {
			return nil, bad("extension %q truncated", sig)
		}
		ext := body[p : p+size]
		p += size
		switch sig {
		case "TREE":
			if err := parseCacheTree(ext, idx.trees); err != nil {
				return nil, bad("TREE extension: %v", err)
			}
		case "link", "sdir":
			return nil, errIndexUnsupported
		default:
			// An upper-case signature is optional (REUC, UNTR, FSMN,
			// EOIE, IEOT…); a lower-case one is required knowledge.
			if sig[0] < 'A' || sig[0] > 'Z' {
				return nil, errIndexUnsupported
			}
		}
	}
	if p != len(body) {
		return nil, bad("trailing bytes after the extensions")
	}
	return idx, nil
}

// indexVarint decodes the offset varint of index v4 path compression; used
// is 0 on malformed input.
func indexVarint(b []byte) (val uint64, used int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val = uint64(c & 127)
	used = 1
	for c&128 != 0 {
		if used >= len(b) || used > 9 {
			return 0, 0
		}
		val++
		c = b[used]
		used++
		val = val<<7 + uint64(c&127)
	}
	return val, used
}

// parseCacheTree reads the TREE extension: nodes in pre-order, each
// "<component>\0<entry count> <subtree count>\n" and, when the count is
// not -1, the tree's name.
func parseCacheTree(b []byte, out map[string]cacheTree) error {
	var walk func(prefix string) error
	walk = func(prefix string) error {
		nul := bytes.IndexByte(b, 0)
		if nul < 0 {
			return errors.New("unterminated path")
		}
		name := string(b[:nul])
		b = b[nul+1:]
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return errors.New("unterminated counts")
		}
		sp := bytes.IndexByte(b[:nl], ' ')
		if sp < 0 {
			return errors.New("malformed counts")
		}
		count, err1 := strconv.Atoi(string(b[:sp]))
		subs, err2 := strconv.Atoi(string(b[sp+1 : nl]))
		if err1 != nil || err2 != nil || subs < 0 {
			return errors.New("malformed counts")
		}
		b = b[nl+1:]
		path := name
		if prefix != "" {
			path = prefix + "/" + name
		}
		if count >= 0 {
			if len(b) < 20 {
				return errors.New("truncated tree name")
			}
			var h Hash
			copy(h[:], b[:20])
			b = b[20:]
			out[path] = cacheTree{entries: count, hash: h}
		}
		for i := 0; i < subs; i++ {
			if err := walk(path); err != nil {
				return err
			}
		}
		return nil
	}
	if len(b) == 0 {
		return nil
	}
	return walk("")
}
