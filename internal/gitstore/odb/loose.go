package odb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

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
	n, err := io.ReadFull(zr, hdr[:])
	if err != nil && err != io.ErrUnexpectedEOF {
		return oid.InvalidObject, nil, fmt.Errorf("zlib: %w", err)
	}
	nul := bytes.IndexByte(hdr[:n], 0)
	if nul < 0 {
		return oid.InvalidObject, nil, errors.New("no header")
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

var looseTypes = map[string]oid.ObjectType{"commit": oid.CommitObject, "tree": oid.TreeObject, "blob": oid.BlobObject, "tag": oid.TagObject}

// parseLooseHeader parses "type size" (without the NUL).
func parseLooseHeader(h []byte) (oid.ObjectType, uint64, error) {
	name, digits, _ := bytes.Cut(h, []byte(" "))
	typ, ok := looseTypes[string(name)]
	if !ok {
		return oid.InvalidObject, 0, fmt.Errorf("unknown object type %q", name)
	}
	size, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil || digits[0] == '0' && len(digits) > 1 {
		return oid.InvalidObject, 0, fmt.Errorf("malformed size in header %q", h)
	}
	return typ, size, nil
}
