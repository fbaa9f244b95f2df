package odb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// maxLooseHeader bounds "type size\0": the longest type name plus 20 digits.
const maxLooseHeader = 32

func loosePath(dir string, h oid.Hash) string {
	s := h.String()
	return filepath.Join(dir, s[:2], s[2:])
}

// readLoose reads a loose object. A missing file yields an error matching
// os.ErrNotExist; anything malformed yields an error naming the file.
func readLoose(dir string, h oid.Hash) (oid.ObjectType, []byte, error) {
	path := loosePath(dir, h)
	raw, err := os.ReadFile(path)
	if err != nil {
		return oid.InvalidObject, nil, err
	}
	typ, data, err := parseLoose(raw)
	if err != nil {
		return oid.InvalidObject, nil, fmt.Errorf("odb: loose object %s: %w", path, err)
	}
	return typ, data, nil
}

// parseLoose inflates a loose object file and validates its header.
func parseLoose(raw []byte) (oid.ObjectType, []byte, error) {
	zr, err := getZlib(bytes.NewReader(raw))
	if err != nil {
		return oid.InvalidObject, nil, err
	}
	defer zlibPool.Put(zr)
	var hdr [maxLooseHeader]byte
	n := 0
	nul := -1
	for nul < 0 && n < len(hdr) {
		k, err := zr.Read(hdr[n:])
		if k > 0 {
			nul = bytes.IndexByte(hdr[n:n+k], 0)
			if nul >= 0 {
				nul += n
			}
			n += k
		}
		if err != nil && nul < 0 {
			if err == io.EOF {
				return oid.InvalidObject, nil, errors.New("truncated header")
			}
			return oid.InvalidObject, nil, fmt.Errorf("zlib: %w", err)
		}
	}
	if nul < 0 {
		return oid.InvalidObject, nil, errors.New("header too long")
	}
	typ, size, err := parseLooseHeader(hdr[:nul])
	if err != nil {
		return oid.InvalidObject, nil, err
	}
	if size > uint64(len(raw))*maxInflation+64 || size > maxAlloc {
		return oid.InvalidObject, nil, fmt.Errorf("declared size %d impossible for %d compressed bytes", size, len(raw))
	}
	rest := hdr[nul+1 : n]
	if uint64(len(rest)) > size {
		return oid.InvalidObject, nil, fmt.Errorf("content longer than declared size %d", size)
	}
	data := make([]byte, int(size))
	copy(data, rest)
	if err := readFullExact(zr, data[len(rest):], size); err != nil {
		return oid.InvalidObject, nil, err
	}
	return typ, data, nil
}

// parseLooseHeader parses "type size" (without the NUL).
func parseLooseHeader(h []byte) (oid.ObjectType, uint64, error) {
	sp := bytes.IndexByte(h, ' ')
	if sp < 0 {
		return oid.InvalidObject, 0, fmt.Errorf("malformed header %q", h)
	}
	var typ oid.ObjectType
	switch string(h[:sp]) {
	case "commit":
		typ = oid.CommitObject
	case "tree":
		typ = oid.TreeObject
	case "blob":
		typ = oid.BlobObject
	case "tag":
		typ = oid.TagObject
	default:
		return oid.InvalidObject, 0, fmt.Errorf("unknown object type %q", h[:sp])
	}
	digits := h[sp+1:]
	if len(digits) == 0 || len(digits) > 19 || (digits[0] == '0' && len(digits) > 1) {
		return oid.InvalidObject, 0, fmt.Errorf("malformed size in header %q", h)
	}
	var size uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return oid.InvalidObject, 0, fmt.Errorf("malformed size in header %q", h)
		}
		size = size*10 + uint64(c-'0')
	}
	return typ, size, nil
}
