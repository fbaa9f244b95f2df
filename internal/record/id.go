package record

import (
	"crypto/rand"
	"io"
	"strings"
	"sync"
	"time"
)

// ValidID reports whether s is a canonical ULID: 26 characters of upper-case
// Crockford base32, the first in 0-7.
func ValidID(s string) bool {
	if len(s) != 26 || s[0] < '0' || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isCrockford(s[i]) {
			return false
		}
	}
	return true
}

func isCrockford(c byte) bool {
	switch {
	case c >= '0' && c <= '9':
		return true
	case c >= 'A' && c <= 'Z':
		return c != 'I' && c != 'L' && c != 'O' && c != 'U'
	}
	return false
}

// IDTime returns the instant encoded in a valid ULID (either case), the
// zero time for anything else.
func IDTime(id string) time.Time {
	if len(id) != 26 || id[0] > '7' {
		return time.Time{}
	}
	var ms uint64
	for i := 0; i < len(id); i++ {
		v := crockfordValue(id[i])
		if v < 0 {
			return time.Time{}
		}
		if i < 10 { // the first ten characters are the 48-bit timestamp
			ms = ms<<5 | uint64(v)
		}
	}
	return time.Unix(int64(ms/1000), int64(ms%1000)*int64(time.Millisecond))
}

// crockford is Crockford's base32 alphabet, as ULIDs are written.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// crockfordValue is c's value in Crockford's base32 (either case), -1 when
// c is not one of its digits.
func crockfordValue(c byte) int {
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	if !isCrockford(c) {
		return -1
	}
	return strings.IndexByte(crockford, c)
}

// ulid is a ULID's 16 bytes: a big-endian 48-bit millisecond timestamp,
// then 80 random bits. Written here rather than imported: the library's
// package init seeded a math/rand source in every git-ideate process
// (issue 19, GODEBUG=inittrace=1).
type ulid [16]byte

const maxULIDTime = 1<<48 - 1

func (u ulid) time() uint64 {
	var ms uint64
	for _, b := range u[:6] {
		ms = ms<<8 | uint64(b)
	}
	return ms
}

// setTime stores ms, false (and nothing changed) past the 48-bit range.
func (u *ulid) setTime(ms uint64) bool {
	if ms > maxULIDTime {
		return false
	}
	for i := 5; i >= 0; i-- {
		u[i] = byte(ms)
		ms >>= 8
	}
	return true
}

// String is the canonical 26 characters: the 128 bits in 5-bit groups
// from the top, the first group two bits short.
func (u ulid) String() string {
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi, lo = hi<<8|uint64(u[i]), lo<<8|uint64(u[8+i])
	}
	var b [26]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(b[:])
}

// IDSource mints strictly increasing ULIDs: a new millisecond draws fresh
// randomness, and within one millisecond (or when the clock steps back) the
// random part is incremented. Safe for concurrent use.
type IDSource struct {
	mu      sync.Mutex
	entropy io.Reader
	last    ulid
}

// NewIDSource returns a generator with its own entropy.
func NewIDSource() *IDSource { return &IDSource{entropy: rand.Reader} }

// New mints an id for instant t.
func (g *IDSource) New(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := uint64(t.Unix())*1000 + uint64(t.Nanosecond()/int(time.Millisecond))
	if ms > g.last.time() || g.last == (ulid{}) {
		var id ulid
		if id.setTime(ms) {
			if _, err := io.ReadFull(g.entropy, id[6:]); err == nil {
				g.last = id
				return id.String()
			}
		}
	}
	// Same or earlier millisecond: increment the 80-bit random part.
	next := g.last
	for i := len(next) - 1; i >= 6; i-- {
		next[i]++
		if next[i] != 0 {
			break
		}
		if i == 6 { // random part overflowed: move to the next millisecond
			next.setTime(g.last.time() + 1)
		}
	}
	g.last = next
	return next.String()
}

// Path is where a record lives in the tree of refs/ideate/record: a trie on
// the id's timestamp characters, <id[0:4]>/<id[4]>/<id[5]>/<id[6]>/<id[7]>/
// <id[8]>/<id>.md. Each level has at most 32 entries, whatever the burst
// (the deepest directory spans 32 ms), so an append rewrites seven small
// trees; and tree order is time order, so newest-first reads descend the
// rightmost path. See docs/FORMAT.md.
func Path(id string) (dirs []string, file string) {
	return []string{id[0:4], id[4:5], id[5:6], id[6:7], id[7:8], id[8:9]}, id + ".md"
}

// ExportPath is the path of a record in an exported tree and in the
// existing implementation's directory: YYYY/MM/<id>.md, year and month in
// UTC from the id's own timestamp.
func ExportPath(id string) string {
	t := IDTime(id).UTC()
	return t.Format("2006/01") + "/" + id + ".md"
}
