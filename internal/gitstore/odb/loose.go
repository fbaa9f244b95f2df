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

// parseLoose inflates a loose object file and validates its header. The
// content is what the stream holds (zlib checks its Adler-32 at the end),
// so a header that lies about the size allocates nothing for it.
func parseLoose(raw []byte) (oid.ObjectType, []byte, error) {
	zr, err := getZlib(bytes.NewReader(raw))
	if err != nil {
		return oid.InvalidObject, nil, err
	}
	defer zlibPool.Put(zr)
	all, err := io.ReadAll(zr)
	if err != nil {
		return oid.InvalidObject, nil, fmt.Errorf("zlib: %w", err)
	}
	nul := bytes.IndexByte(all[:min(len(all), maxLooseHeader)], 0)
	if nul < 0 {
		return oid.InvalidObject, nil, errors.New("no header")
	}
	typ, size, err := parseLooseHeader(all[:nul])
	if err != nil {
		return oid.InvalidObject, nil, err
	}
	if data := all[nul+1:]; uint64(len(data)) != size {
		return oid.InvalidObject, nil, fmt.Errorf("content of %d bytes, header declares %d", len(data), size)
	}
	return typ, all[nul+1:], nil
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
