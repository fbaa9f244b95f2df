package record

import (
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// ValidID reports whether s is a canonical ULID: 26 characters of upper-case
// Crockford base32, the first in 0-7.
func ValidID(s string) bool {
	_, err := ulid.ParseStrict(s)
	return err == nil && strings.ToUpper(s) == s
}

// IDTime returns the instant encoded in a valid ULID (either case), the
// zero time for anything else.
func IDTime(id string) time.Time {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}
	}
	return ulid.Time(u.Time())
}

// IDSource mints strictly increasing ULIDs: a new millisecond draws fresh
// randomness, and within one millisecond the random part grows
// (ulid.Monotonic). A clock that steps back is read as the last
// millisecond minted, so ids never go backwards. Safe for concurrent use.
type IDSource struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
	lastMs  uint64
}

// NewIDSource returns a generator with its own entropy.
func NewIDSource() *IDSource { return &IDSource{entropy: ulid.Monotonic(rand.Reader, 0)} }

// New mints an id for instant t.
func (g *IDSource) New(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := max(ulid.Timestamp(t), g.lastMs)
	for {
		id, err := ulid.New(ms, g.entropy)
		switch {
		case err == nil:
			g.lastMs = ms
			return id.String()
		case errors.Is(err, ulid.ErrMonotonicOverflow):
			ms++ // 2^80 ids in one millisecond: the next one
		default:
			// Only a time past the year 10889 (ErrBigTime) or a failing
			// crypto/rand, which Go itself treats as fatal.
			panic(err)
		}
	}
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
