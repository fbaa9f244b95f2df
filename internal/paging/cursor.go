package paging

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"

	"github.com/ideate/git-ideate/internal/apperr"
)

// cursorVersion is the value of "v" in every cursor this package mints.
const cursorVersion = 1

// maxCursorLen bounds the cursor text DecodeCursor will look at. Real cursors
// are a few hundred characters at most; anything longer is refused before any
// decoding work is done.
const maxCursorLen = 4096

// fingerprintLen is the length in hex digits of the filter fingerprint.
const fingerprintLen = 16

// The sentences of cursor errors. They are fixed strings so that no part of
// the cursor, or of what it decodes to, can ever be echoed back.
const (
	msgCursorEmpty    = "cursor is empty; omit it to start from the first page"
	msgCursorTooLong  = "cursor is too long to be one this server issued"
	msgCursorEncoding = "cursor is not canonical unpadded base64url"
	msgCursorPayload  = "cursor payload is not the expected JSON object"
	msgCursorVersion  = "cursor format version is not supported"
	msgCursorKind     = "cursor belongs to a different collection"
	msgCursorKeyLen   = "cursor position has the wrong number of key elements"
	msgCursorKeyEmpty = "cursor position has an empty key element"
	msgCursorFilter   = "cursor filter fingerprint is malformed"
	msgCursorMismatch = "cursor was issued for a different filter; start again without it"
)

// cursorPayload is the JSON inside a cursor. The field order is the order of
// the members on the wire, and canonical decoding depends on it.
type cursorPayload struct {
	V int      `json:"v"`
	K string   `json:"k"`
	P []string `json:"p"`
	F string   `json:"f"`
}

// marshalPayload is the one serialization of a cursor payload, used both to
// mint a cursor and to check that a decoded one is canonical.
func marshalPayload(p cursorPayload) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// A struct of an int, strings and a string slice always encodes.
	if err := enc.Encode(p); err != nil {
		panic("paging: cursor payload did not encode: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// fingerprint is the filter fingerprint of kind and filter: the first 8 bytes
// of SHA-256(kind + "\x00" + filter) in lowercase hex.
func fingerprint(kind, filter string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + filter))
	return hex.EncodeToString(sum[:fingerprintLen/2])
}

// EncodeCursor mints the cursor for the keyset position key of the collection
// kind, read under the canonical filter string filter. The caller builds
// filter so that equal filters give equal strings. kind must be valid UTF-8,
// and key must hold at least one element, none empty, each valid UTF-8;
// DecodeCursor refuses any other cursor.
func EncodeCursor(kind, filter string, key []string) string {
	if key == nil {
		key = []string{}
	}
	p := cursorPayload{V: cursorVersion, K: kind, P: key, F: fingerprint(kind, filter)}
	return base64.RawURLEncoding.EncodeToString(marshalPayload(p))
}

// Position is the keyset position a read starts after: nil when the
// request has no cursor (the first page), else DecodeCursor's key, with
// its errors.
func Position(cursor, kind, filter string, keyLen int) ([]string, error) {
	if cursor == "" {
		return nil, nil
	}
	return DecodeCursor(cursor, kind, filter, keyLen)
}

// DecodeCursor returns the keyset position of a cursor minted by EncodeCursor
// for the collection kind under filter. The position must have exactly
// wantKeyLen elements (at least one), none of them empty.
//
// A cursor that is not canonical unpadded base64url, whose payload is not the
// canonical JSON object EncodeCursor writes, or that is of another version,
// another kind or the wrong key length is an apperr.Schema error. A
// well-formed cursor minted under another filter is apperr.CursorMismatch.
// No error sentence contains the cursor or anything decoded from it.
func DecodeCursor(cursor, kind, filter string, wantKeyLen int) ([]string, error) {
	switch {
	case cursor == "":
		return nil, apperr.New(apperr.Schema, msgCursorEmpty)
	case len(cursor) > maxCursorLen:
		return nil, apperr.New(apperr.Schema, msgCursorTooLong)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != cursor {
		return nil, apperr.New(apperr.Schema, msgCursorEncoding)
	}

	var p cursorPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.P == nil {
		return nil, apperr.New(apperr.Schema, msgCursorPayload)
	}
	// Re-marshal and compare: this refuses whitespace, unknown, duplicate,
	// reordered or case-folded members, alternative escapes and anything
	// else that is not exactly what EncodeCursor writes.
	if !bytes.Equal(marshalPayload(p), raw) {
		return nil, apperr.New(apperr.Schema, msgCursorPayload)
	}

	if p.V != cursorVersion {
		return nil, apperr.New(apperr.Schema, msgCursorVersion)
	}
	if p.K != kind {
		return nil, apperr.New(apperr.Schema, msgCursorKind)
	}
	if len(p.P) == 0 || len(p.P) != wantKeyLen {
		return nil, apperr.New(apperr.Schema, msgCursorKeyLen)
	}
	for _, k := range p.P {
		if k == "" {
			return nil, apperr.New(apperr.Schema, msgCursorKeyEmpty)
		}
	}
	if !isFingerprint(p.F) {
		return nil, apperr.New(apperr.Schema, msgCursorFilter)
	}
	if p.F != fingerprint(kind, filter) {
		return nil, apperr.New(apperr.CursorMismatch, msgCursorMismatch)
	}
	return p.P, nil
}

// isFingerprint reports whether s has the shape of a filter fingerprint:
// exactly fingerprintLen lowercase hex digits.
func isFingerprint(s string) bool {
	if len(s) != fingerprintLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
