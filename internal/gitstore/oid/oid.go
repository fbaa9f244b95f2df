// Package oid names git objects: a SHA-1 object name (Hash) and an object
// type (ObjectType), with the hash of an object computed as git computes
// it, collision detection included.
package oid

import (
	"encoding/hex"
	"strconv"

	"github.com/pjbgf/sha1cd"
)

// Size is the length of an object name in bytes.
const Size = 20

// Hash is a SHA-1 object name.
type Hash [Size]byte

// ZeroHash is the all-zero name: no object.
var ZeroHash Hash

// NewHash decodes a 40-digit hexadecimal name. Digits past the 40th are
// ignored; a string that is not hexadecimal gives the bytes decoded before
// the first bad digit, the rest zero, so callers check a name's form
// before they trust it.
func NewHash(s string) Hash {
	var h Hash
	if len(s) > 2*Size {
		s = s[:2*Size]
	}
	hex.Decode(h[:], []byte(s)) //nolint:errcheck // documented: a partial decode
	return h
}

// IsZero reports whether h is ZeroHash.
func (h Hash) IsZero() bool { return h == ZeroHash }

// String is h in 40 lower-case hexadecimal digits.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ObjectType is the type of a git object, numbered as in pack files.
type ObjectType int8

// The object types, numbered as a pack entry's header numbers them (5 is
// reserved; 6 and 7 are the two delta encodings, which name no object).
const (
	InvalidObject ObjectType = 0
	CommitObject  ObjectType = 1
	TreeObject    ObjectType = 2
	BlobObject    ObjectType = 3
	TagObject     ObjectType = 4
)

// String is the type's name as git writes it in an object's header.
func (t ObjectType) String() string {
	switch t {
	case CommitObject:
		return "commit"
	case TreeObject:
		return "tree"
	case BlobObject:
		return "blob"
	case TagObject:
		return "tag"
	}
	return "unknown"
}

// ComputeHash is the name git gives an object of type t and content data:
// the SHA-1 of "<type> <size>\x00<data>", computed by sha1cd (SHA-1 with
// collision detection), the implementation go-git's plumbing used here
// before.
func ComputeHash(t ObjectType, data []byte) Hash {
	var hdr [32]byte
	b := append(hdr[:0], t.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(data)), 10)
	b = append(b, 0)
	d := sha1cd.New()
	d.Write(b)
	d.Write(data)
	var h Hash
	d.Sum(h[:0])
	return h
}
