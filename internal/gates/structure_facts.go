package gates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/symbols"
)

// bodyFacts is a callable's body as the copy checks see it: the hash of
// its normalized tokens (the exact path), their number, and the tokens
// themselves as 32-bit ids (the similarity path).
type bodyFacts struct {
	Hash uint64
	N    int
	Norm []uint32
	// Idents is every identifier of the body, in order: its id shifted
	// left two bits, bit 0 set for a name the body calls or selects
	// (normalizing keeps it, and it is the body's vocabulary; a key is
	// kept too but is not vocabulary), bit 1 when it is called.
	Idents []uint32
}

// The flags of an Idents entry.
const (
	identKept   = 1
	identCalled = 2
)

// identID is a name's id as an Idents entry holds it (id>>2): the low 30
// bits of its tokenID.
func identID(name string) uint32 { return tokenID(name) & (1<<30 - 1) }

// fileFacts is what the structural check keeps of one file: its
// definitions and uses (File, whose tokens may be absent when it came
// from the cache) and one bodyFacts per definition (zero for a symbol
// without a body).
type fileFacts struct {
	File   *symbols.File
	Bodies []bodyFacts
}

// body is the facts of the definition s of the file, zero when there are
// none.
func (ff *fileFacts) body(s symbols.Symbol) bodyFacts {
	if ff == nil {
		return bodyFacts{}
	}
	for i, d := range ff.File.Defs {
		if d.Start == s.Start && d.Name == s.Name && d.Receiver == s.Receiver && i < len(ff.Bodies) {
			return ff.Bodies[i]
		}
	}
	return bodyFacts{}
}

// factsOf computes a parsed file's body facts from its tokens.
func factsOf(f *symbols.File) *fileFacts {
	ff := &fileFacts{File: f, Bodies: make([]bodyFacts, len(f.Defs))}
	for i, s := range f.Defs {
		if s.Kind.Callable() {
			ff.Bodies[i] = normalizeBody(f, s)
		}
	}
	return ff
}

// normalizeBody normalizes a callable's body: identifiers become one
// token, literals another, keywords and punctuation stay; the result is
// hashed whole and kept token by token.
func normalizeBody(f *symbols.File, s symbols.Symbol) bodyFacts {
	if !s.HasBody() {
		return bodyFacts{}
	}
	toks := f.Tokens()
	keyColon := s.Lang == symbols.Go || s.Lang == symbols.JavaScript || s.Lang == symbols.TypeScript
	i := sort.Search(len(toks), func(i int) bool { return toks[i].Off >= s.BodyStart })
	end := i + sort.Search(len(toks)-i, func(j int) bool { return toks[i+j].Off >= s.BodyEnd })
	h := fnv.New64a()
	bf := bodyFacts{Norm: make([]uint32, 0, end-i)}
	for ; i < end; i++ {
		t := toks[i].Text
		// A name after a dot (a field, a method, a package's member) or
		// before a parenthesis (a call) says what the body does and stays;
		// the others (parameters, locals) are the copier's to rename.
		// A key before a colon (a Go composite literal's field, a
		// JavaScript object's key) stays too.
		if toks[i].ID {
			id := identID(t) << 2
			called := i+1 < len(toks) && toks[i+1].Text == "("
			selected := i > 0 && toks[i-1].Text == "."
			// A JavaScript or TypeScript local's type (`const out: T`) is
			// not a key.
			key := keyColon && i+1 < len(toks) && toks[i+1].Text == ":" &&
				!(s.Lang != symbols.Go && i > 0 && (toks[i-1].Text == "let" || toks[i-1].Text == "const" || toks[i-1].Text == "var"))
			if called {
				id |= identCalled
			}
			if called || selected {
				id |= identKept
			}
			if !called && !selected && !key {
				t = "$"
			}
			bf.Idents = append(bf.Idents, id)
		}
		h.Write([]byte(t))
		h.Write([]byte{0})
		bf.Norm = append(bf.Norm, tokenID(t))
		bf.N++
	}
	bf.Hash = h.Sum64()
	return bf
}

// tokenID is a normalized token's 32-bit id (FNV-1a).
func tokenID(t string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(t); i++ {
		h ^= uint32(t[i])
		h *= 16777619
	}
	return h
}

// The facts cache. A blob never changes, so an entry keyed by the path
// (which places the symbols) and the blob's id is never stale; the file's
// name carries the format version and whether this build reads with
// tree-sitter. The entries a check used are kept together in one file,
// rewritten whole (atomicfile) when the check parsed something new: on
// the machine this was measured on, writing a file per blob cost about
// 1.7 ms of system time each (470 ms for 270 blobs), one file for all of
// them a few. The file carries a checksum of its body (against a torn or
// damaged file; whoever can write the git directory can change the
// repository itself, so a writer is trusted); one that cannot
// be read, does not check or does not decode is ignored and rewritten,
// and an entry whose path or blob is not the one asked for is not used:
// the cache can make the check faster, never change its verdict. Two
// checks at once each write what they used; the last one stays, and the
// other's new entries are parsed again next time.
const factsMagic = "ideate structure facts v3\n"

// factsCache is the cache file ("" when off).
type factsCache struct{ file string }

// defaultFactsCache is the cache under the repository's state directory:
// <common git dir>/ideate/cache/structure/.
func defaultFactsCache(g *gitstore.Store) factsCache {
	reader := "treesitter"
	if symbols.Weaker() {
		reader = "fallback"
	}
	return factsCache{file: filepath.Join(g.Repo().StateDir(), "cache", "structure", "facts-v3-"+reader)}
}

// factsEntry is one file's cached facts.
type factsEntry struct {
	Path   string
	Blob   gitstore.Hash
	File   *symbols.File
	Bodies []bodyFacts
}

type factsKey struct {
	path string
	blob gitstore.Hash
}

// load reads the cache, empty when there is none that can be trusted.
func (c factsCache) load() map[factsKey]*fileFacts {
	out := map[factsKey]*fileFacts{}
	if c.file == "" {
		return out
	}
	b, err := os.ReadFile(c.file)
	if err != nil || len(b) < len(factsMagic)+sha256.Size || string(b[:len(factsMagic)]) != factsMagic {
		return out
	}
	sum, body := b[len(factsMagic):len(factsMagic)+sha256.Size], b[len(factsMagic)+sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return out
	}
	es, ok := decodeFacts(body)
	if !ok {
		return out
	}
	for _, e := range es {
		if e.File == nil || e.File.Path != e.Path || len(e.Bodies) != len(e.File.Defs) {
			continue
		}
		if e.File.Refs == nil {
			e.File.Refs = map[string]int{}
		}
		out[factsKey{e.Path, e.Blob}] = &fileFacts{File: e.File, Bodies: e.Bodies}
	}
	return out
}

// store writes the entries; a failure to write is no failure of the
// check (the next one parses again).
func (c factsCache) store(m map[factsKey]*fileFacts) {
	if c.file == "" {
		return
	}
	es := make([]factsEntry, 0, len(m))
	for k, ff := range m {
		es = append(es, factsEntry{Path: k.path, Blob: k.blob, File: ff.File, Bodies: ff.Bodies})
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].Path != es[j].Path {
			return es[i].Path < es[j].Path
		}
		return es[i].Blob.String() < es[j].Blob.String()
	})
	body := encodeFacts(es)
	sum := sha256.Sum256(body)
	out := make([]byte, 0, len(factsMagic)+len(sum)+len(body))
	out = append(append(append(out, factsMagic...), sum[:]...), body...)
	_ = atomicfile.Replace(c.file, out, atomicfile.Options{})
}

// blobFile is one file to read: its path and blob.
type blobFile struct {
	path string
	blob gitstore.Hash
}

// loadFacts reads the facts of every file: from the cache where an entry
// is there, else by reading the blob and parsing it, in parallel (one
// worker per CPU). When it parsed anything, the cache is rewritten with
// the entries of files.
func loadFacts(ctx context.Context, g *gitstore.Store, c factsCache, files []blobFile) ([]*fileFacts, error) {
	cached := c.load()
	out := make([]*fileFacts, len(files))
	var todo []int
	for i, bf := range files {
		if ff := cached[factsKey{bf.path, bf.blob}]; ff != nil {
			out[i] = ff
		} else {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	workers := runtime.GOMAXPROCS(0)
	if workers > len(todo) {
		workers = len(todo)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs error
		next int
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if errs != nil || next >= len(todo) {
			return -1
		}
		next++
		return todo[next-1]
	}
	fail := func(err error) {
		mu.Lock()
		errs = errors.Join(errs, err)
		mu.Unlock()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := take(); i >= 0; i = take() {
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				ff, err := parseBlob(ctx, g, files[i])
				if err != nil {
					fail(err)
					return
				}
				out[i] = ff
			}
		}()
	}
	wg.Wait()
	if errs != nil {
		return nil, errs
	}
	keep := make(map[factsKey]*fileFacts, len(files))
	for i, bf := range files {
		keep[factsKey{bf.path, bf.blob}] = out[i]
	}
	c.store(keep)
	return out, nil
}

// parseBlob reads and parses one file.
func parseBlob(ctx context.Context, g *gitstore.Store, bf blobFile) (*fileFacts, error) {
	b, err := g.ReadBlob(bf.blob)
	if err != nil {
		return nil, err
	}
	f, err := symbols.Parse(ctx, bf.path, b)
	if err != nil {
		return nil, err
	}
	return factsOf(f), nil
}
