package gitstore

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
	"github.com/ideate/git-ideate/internal/osproc"
)

// Hash is a SHA-1 object name.
type Hash = oid.Hash

// ZeroHash is the all-zero name: "absent" in ref updates.
var ZeroHash = oid.ZeroHash

// Ref is one name → commit pair.
type Ref struct {
	Name string
	Hash Hash
}

// refReader reads refs from the loose files and packed-refs of one common
// directory. packed-refs is parsed again only when its inode, size or
// mtime change, so a process pays for a 10k-ref file once.
type refReader struct {
	dir string

	mu     sync.Mutex
	packed packedRefs

	// exactBuf is where readExact reads packed-refs, kept from call to
	// call: every create and guard reads the whole file (megabytes).
	exactMu  sync.Mutex
	exactBuf []byte
}

type packedRefs struct {
	key  fileKey
	refs []Ref // sorted by Name
	// version names the content (see contentVersion).
	version string
}

// fileKey is what stat tells of one version of a file.
type fileKey struct {
	ino, size, mtime int64
	exists           bool
}

// contentVersion names the content of a packed-refs file ("none" for no
// file): by content, it needs no trust in clocks or inode numbers.
func contentVersion(data []byte, exists bool) string {
	if !exists {
		return "none"
	}
	return strconv.Itoa(len(data)) + "." + strconv.FormatUint(contentHash(data), 16)
}

// contentHash tells versions of one file apart (no defence against a file
// made to collide): CRC-32 and CRC-32C, which the hardware computes.
func contentHash(b []byte) uint64 {
	return uint64(crc32.ChecksumIEEE(b))<<32 | uint64(crc32.Checksum(b, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func statKey(path string) (fileKey, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fileKey{}, nil
	}
	if err != nil {
		return fileKey{}, err
	}
	return keyOf(fi), nil
}

// keyOf is the fileKey of an existing file.
func keyOf(fi os.FileInfo) fileKey {
	k := fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), exists: true}
	if _, ino, ok := osproc.Inode(fi); ok {
		k.ino = int64(ino)
	}
	return k
}

// ValidRefName reports whether name is a ref under refs/ that git accepts.
func ValidRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") {
		return false
	}
	if strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	bad := func(r rune) bool { return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) }
	return !strings.ContainsFunc(name, bad)
}

func parseHashLine(b []byte) (Hash, bool) {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) != 40 {
		return ZeroHash, false
	}
	var h Hash
	if _, err := hex.Decode(h[:], b); err != nil {
		return ZeroHash, false
	}
	return h, true
}

// read returns the current value of name (ZeroHash when absent).
func (r *refReader) read(name string) (Hash, error) { return r.readVia(name, r.readPacked) }

// readExact is read for a compare-and-swap, under the ref's lock: a packed
// value comes from packed-refs as it is on disk now, never from the parsed
// copy, whose key can repeat across rewrites (ext4 hands two inodes in
// turn) and would let a swap from an old tip succeed. A copy the disk
// disagrees with is dropped.
func (r *refReader) readExact(name string) (Hash, error) {
	return r.readVia(name, r.packedOnDisk)
}

// packedVersionNow is the version of packed-refs as it is on disk now (see
// contentVersion), and its key, read from the open file.
func (r *refReader) packedVersionNow() (string, fileKey, error) {
	r.exactMu.Lock()
	defer r.exactMu.Unlock()
	var st os.FileInfo
	data, exists, err := r.readPackedNow(&st)
	if err != nil || !exists {
		return contentVersion(nil, false), fileKey{}, err
	}
	return contentVersion(data, true), keyOf(st), nil
}

// readPackedNow reads packed-refs as it is on disk now into exactBuf (the
// caller holds exactMu), and st, when not nil, from the open file.
func (r *refReader) readPackedNow(st *os.FileInfo) (data []byte, exists bool, err error) {
	data, err = readSmall(filepath.Join(r.dir, "packed-refs"), r.exactBuf, 0, st)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read packed-refs: %w", err)
	}
	if cap(data) <= 4<<20 {
		r.exactBuf = data[:0] // kept for the next read (up to 4 MB)
	}
	return data, true, nil
}

// packedOnDisk is name's value in packed-refs as the file is now (see
// readExact), ZeroHash when it is not there.
func (r *refReader) packedOnDisk(name string) (Hash, error) {
	r.exactMu.Lock()
	defer r.exactMu.Unlock()
	data, _, err := r.readPackedNow(nil)
	if err != nil {
		return ZeroHash, err
	}
	h := findPacked(data, name)
	r.mu.Lock()
	if lookupRef(r.packed.refs, name) != h {
		r.packed = packedRefs{}
	}
	r.mu.Unlock()
	return h, nil
}

// lookupRef is name's value in refs, sorted by name (ZeroHash: absent).
func lookupRef(refs []Ref, name string) Hash {
	i := sort.Search(len(refs), func(i int) bool { return refs[i].Name >= name })
	if i < len(refs) && refs[i].Name == name {
		return refs[i].Hash
	}
	return ZeroHash
}

// findPacked returns the value of name in the packed-refs text data
// (ZeroHash when absent): a binary search when the file has the "sorted"
// trait, as git writes it, else a parse of the whole file.
func findPacked(data []byte, name string) Hash {
	if h, ok := searchSorted(data, name); ok {
		return h
	}
	return lookupRef(parsePacked(data), name)
}

// searchSorted binary-searches the packed-refs text data, when its header
// names the "sorted" trait, for name. ok is false when it cannot tell: no
// such header, or a line not in git's form where the search landed.
func searchSorted(data []byte, name string) (h Hash, ok bool) {
	const header = "# pack-refs with:"
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data, []byte(header)) ||
		!strings.Contains(" "+string(bytes.TrimRight(data[len(header):nl], "\r"))+" ", " sorted ") {
		return ZeroHash, false
	}
	want := []byte(name)
	// Every position in [lo, hi) at a line's start is a candidate; lo is
	// always a ref's line (never a peeled "^" line).
	lo, hi := nl+1, len(data)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := lo
		if i := bytes.LastIndexByte(data[lo:mid], '\n'); i >= 0 {
			start = lo + i + 1
		}
		if start < len(data) && data[start] == '^' { // a peeled value: its ref is the line before
			if start == lo {
				return ZeroHash, false
			}
			start = lo + bytes.LastIndexByte(data[lo:start-1], '\n') + 1
		}
		end := len(data)
		if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i
		}
		line := bytes.TrimSuffix(data[start:end], []byte("\r"))
		if len(line) < 42 || line[40] != ' ' || line[0] == '^' || line[0] == '#' {
			return ZeroHash, false
		}
		switch c := bytes.Compare(want, line[41:]); {
		case c == 0:
			h, ok := parseHashLine(line[:40])
			return h, ok
		case c < 0:
			hi = start
		default:
			lo = end + 1
			for lo < len(data) && data[lo] == '^' { // past its peeled value
				if i := bytes.IndexByte(data[lo:], '\n'); i >= 0 {
					lo += i + 1
				} else {
					lo = len(data)
				}
			}
		}
	}
	return ZeroHash, true
}

// refFileMax is the most of a loose ref file that is read: a value is 41
// bytes, and a larger file where a ref should be is not read whole.
const refFileMax = 256

func (r *refReader) readVia(name string, packed func(string) (Hash, error)) (Hash, error) {
	var buf [refFileMax]byte
	b, err := readSmall(filepath.Join(r.dir, name), buf[:0], refFileMax, nil)
	switch {
	case err == nil:
		h, ok := parseHashLine(b)
		if !ok {
			if bytes.HasPrefix(b, []byte("ref:")) {
				return ZeroHash, apperr.New(apperr.Schema, "ref %s is symbolic; git ideate refs hold commits", name)
			}
			return ZeroHash, apperr.New(apperr.Internal, "ref %s is broken: its file does not hold an object name", name)
		}
		return h, nil
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return packed(name)
	default:
		return ZeroHash, fmt.Errorf("read ref %s: %w", name, err)
	}
}

// loadPackedVersion is the parsed packed-refs, parsed again only when the
// file changed, and the version it was parsed from (see contentVersion).
func (r *refReader) loadPackedVersion() ([]Ref, string, error) {
	path := filepath.Join(r.dir, "packed-refs")
	r.mu.Lock()
	defer r.mu.Unlock()
	for attempt := 0; ; attempt++ {
		k, err := statKey(path)
		if err != nil {
			return nil, "", fmt.Errorf("stat packed-refs: %w", err)
		}
		if k == r.packed.key {
			return r.packed.refs, r.packed.version, nil
		}
		if !k.exists {
			r.packed = packedRefs{key: k, version: contentVersion(nil, false)}
			return nil, r.packed.version, nil
		}
		data, err := osproc.ReadRegular(path, packedRefsMax)
		if errors.Is(err, os.ErrNotExist) && attempt < 3 {
			continue // replaced between stat and read
		}
		if err != nil {
			return nil, "", fmt.Errorf("read packed-refs: %w", err)
		}
		k2, _ := statKey(path)
		if k2 != k && attempt < 3 {
			continue // rewritten while we read it
		}
		refs := parsePacked(data)
		r.packed = packedRefs{key: k, refs: refs, version: contentVersion(data, true)}
		return refs, r.packed.version, nil
	}
}

func parsePacked(data []byte) []Ref {
	// One string for the file; names are substrings of it.
	text := string(data)
	refs := make([]Ref, 0, strings.Count(text, "\n"))
	sorted := true
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if len(line) < 42 || line[0] == '#' || line[0] == '^' || line[40] != ' ' {
			continue
		}
		var h Hash
		if _, err := hex.Decode(h[:], []byte(line[:40])); err != nil {
			continue
		}
		name := strings.TrimSuffix(line[41:], "\r")
		if n := len(refs); n > 0 && refs[n-1].Name >= name {
			sorted = false
		}
		refs = append(refs, Ref{Name: name, Hash: h})
	}
	if !sorted {
		sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	}
	return refs
}

func (r *refReader) readPacked(name string) (Hash, error) {
	r.mu.Lock()
	fresh := r.packed.key == (fileKey{}) && r.packed.refs == nil
	r.mu.Unlock()
	if fresh {
		// No parsed copy: find the one ref without parsing every line.
		return r.packedOnDisk(name)
	}
	refs, _, err := r.loadPackedVersion()
	return lookupRef(refs, name), err
}

// list returns every ref whose name starts with prefix (which should end in
// "/"), loose values overriding packed ones, sorted by name.
func (r *refReader) list(prefix string) ([]Ref, error) {
	packed, loose, _, err := r.listParts(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]Ref, 0, len(packed)+len(loose))
	for len(packed) > 0 || len(loose) > 0 {
		switch {
		case len(loose) == 0 || len(packed) > 0 && packed[0].Name < loose[0].Name:
			out, packed = append(out, packed[0]), packed[1:]
		case len(packed) > 0 && packed[0].Name == loose[0].Name:
			out, packed, loose = append(out, loose[0]), packed[1:], loose[1:]
		default:
			out, loose = append(out, loose[0]), loose[1:]
		}
	}
	return out, nil
}

// listParts is the packed refs under prefix (the reader's shared copy: read
// only) and the loose ones, sorted by name, and the version of packed-refs
// the packed ones come from.
func (r *refReader) listParts(prefix string) (packed, loose []Ref, version string, err error) {
	for attempt := 0; ; attempt++ {
		before, _ := statKey(filepath.Join(r.dir, "packed-refs"))
		packed, loose, version, err = r.listOnce(prefix, true)
		if err != nil {
			return nil, nil, "", err
		}
		after, _ := statKey(filepath.Join(r.dir, "packed-refs"))
		// A pack-refs that ran while we walked may have moved a loose ref
		// into packed-refs after we had read the old file: list again.
		if before == after || attempt >= 5 {
			return packed, loose, version, nil
		}
	}
}

// dirOf is the directory of the loose refs under prefix.
func (r *refReader) dirOf(prefix string) string {
	return filepath.Join(r.dir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
}

// packedUnder is the packed refs under prefix (the reader's shared copy:
// read only) and the version of packed-refs they come from.
func (r *refReader) packedUnder(prefix string) ([]Ref, string, error) {
	packed, version, err := r.loadPackedVersion()
	if err != nil {
		return nil, "", err
	}
	lo := sort.Search(len(packed), func(i int) bool { return packed[i].Name >= prefix })
	hi := lo
	for hi < len(packed) && strings.HasPrefix(packed[hi].Name, prefix) {
		hi++
	}
	return packed[lo:hi:hi], version, nil
}

// listOnce lists the loose refs under prefix by walking its directory,
// and, when withPacked, the packed ones and their version (packedUnder).
func (r *refReader) listOnce(prefix string, withPacked bool) (packedPart, loose []Ref, version string, err error) {
	if withPacked {
		if packedPart, version, err = r.packedUnder(prefix); err != nil {
			return nil, nil, "", err
		}
	}
	root := r.dirOf(prefix)
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, err := filepath.Rel(r.dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		// Gone (pruned by pack-refs, which wrote the packed value first),
		// or not an object name: no loose value.
		var buf [refFileMax]byte
		b, err := readSmall(p, buf[:0], refFileMax, nil)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if h, ok := parseHashLine(b); ok {
			loose = append(loose, Ref{Name: name, Hash: h})
		}
		return nil
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("list refs %s: %w", prefix, err)
	}
	// WalkDir visits a directory's entries in name order, but "a/b" comes
	// after "a-c" in git's byte order.
	if !sort.SliceIsSorted(loose, func(i, j int) bool { return loose[i].Name < loose[j].Name }) {
		sort.Slice(loose, func(i, j int) bool { return loose[i].Name < loose[j].Name })
	}
	return packedPart, loose, version, nil
}
