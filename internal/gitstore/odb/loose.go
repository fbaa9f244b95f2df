package odb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// maxLooseHeader bounds "type size\0": the longest type name plus 20 digits.
const maxLooseHeader = 32

func loosePath(dir string, h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(dir, s[:2], s[2:])
}

func hasLoose(dir string, h plumbing.Hash) bool {
	fi, err := os.Stat(loosePath(dir, h))
	return err == nil && fi.Mode().IsRegular()
}

// readLoose reads a loose object. A missing file yields an error matching
// os.ErrNotExist; anything malformed yields an error naming the file.
func readLoose(dir string, h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	path := loosePath(dir, h)
	raw, err := os.ReadFile(path)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	typ, data, err := parseLoose(raw)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("odb: loose object %s: %w", path, err)
	}
	return typ, data, nil
}

// parseLoose inflates a loose object file and validates its header.
func parseLoose(raw []byte) (plumbing.ObjectType, []byte, error) {
	zr, err := getZlib(bytes.NewReader(raw))
	if err != nil {
		return plumbing.InvalidObject, nil, err
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
				return plumbing.InvalidObject, nil, errors.New("truncated header")
			}
			return plumbing.InvalidObject, nil, fmt.Errorf("zlib: %w", err)
		}
	}
	if nul < 0 {
		return plumbing.InvalidObject, nil, errors.New("header too long")
	}
	typ, size, err := parseLooseHeader(hdr[:nul])
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if size > uint64(len(raw))*maxInflation+64 || size > maxAlloc {
		return plumbing.InvalidObject, nil, fmt.Errorf("declared size %d impossible for %d compressed bytes", size, len(raw))
	}
	rest := hdr[nul+1 : n]
	if uint64(len(rest)) > size {
		return plumbing.InvalidObject, nil, fmt.Errorf("content longer than declared size %d", size)
	}
	data := make([]byte, int(size))
	copy(data, rest)
	if err := readFullExact(zr, data[len(rest):], size); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	return typ, data, nil
}

// parseLooseHeader parses "type size" (without the NUL).
func parseLooseHeader(h []byte) (plumbing.ObjectType, uint64, error) {
	sp := bytes.IndexByte(h, ' ')
	if sp < 0 {
		return plumbing.InvalidObject, 0, fmt.Errorf("malformed header %q", h)
	}
	var typ plumbing.ObjectType
	switch string(h[:sp]) {
	case "commit":
		typ = plumbing.CommitObject
	case "tree":
		typ = plumbing.TreeObject
	case "blob":
		typ = plumbing.BlobObject
	case "tag":
		typ = plumbing.TagObject
	default:
		return plumbing.InvalidObject, 0, fmt.Errorf("unknown object type %q", h[:sp])
	}
	digits := h[sp+1:]
	if len(digits) == 0 || len(digits) > 19 || (digits[0] == '0' && len(digits) > 1) {
		return plumbing.InvalidObject, 0, fmt.Errorf("malformed size in header %q", h)
	}
	var size uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return plumbing.InvalidObject, 0, fmt.Errorf("malformed size in header %q", h)
		}
		size = size*10 + uint64(c-'0')
	}
	return typ, size, nil
}
