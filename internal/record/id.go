package record

import (
	"crypto/rand"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
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

// IDTime returns the instant encoded in a valid ULID.
func IDTime(id string) time.Time {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}
	}
	return ulid.Time(u.Time())
}

// IDSource mints strictly increasing ULIDs: a new millisecond draws fresh
// randomness, and within one millisecond (or when the clock steps back) the
// random part is incremented. Safe for concurrent use.
type IDSource struct {
	mu      sync.Mutex
	entropy io.Reader
	last    ulid.ULID
}

// NewIDSource returns a generator with its own entropy.
func NewIDSource() *IDSource { return &IDSource{entropy: rand.Reader} }

// New mints an id for instant t.
func (g *IDSource) New(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := ulid.Timestamp(t)
	if ms > g.last.Time() || g.last == (ulid.ULID{}) {
		var id ulid.ULID
		if err := id.SetTime(ms); err == nil {
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
			next.SetTime(g.last.Time() + 1)
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
