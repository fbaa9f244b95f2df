package record

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
)

// Backlinks are derived, never stored in the record: the forward edges of
// every record are gathered into an index keyed by the root tree it was
// built from. When the tree moves on, only the subtrees that differ are
// visited (a tree diff that skips equal hashes), so keeping the index
// current costs O(changed records).
//
// A Store keeps the index in memory, so a long-lived process (the MCP
// server) brings it up to date by the diff alone. The file edgesFile under
// .git/ideate/ carries it to the next process: it is written when it was
// built from nothing (no usable file), and otherwise once it is
// edgeSaveAfter records behind, at most once per edgeSaveEvery. A process
// that finds it a few records behind diffs them and leaves the file as it
// is: rewriting it on every CLI read made each read create a file, the
// costly part of a read on some file systems, and replace another (a
// deletion, which makes the next creates dearer; see docs/PERF-LOG.md).
// A lost, stale or corrupt file is only slower: it is diffed forward or
// rebuilt from the record.
const edgesFile = "record-edges.v1"

// edgeSaveEvery bounds how often a long-lived Store rewrites edgesFile.
const edgeSaveEvery = time.Second

// edgeSaveAfter is how many record files the index must have moved past
// the file's root before the file is rewritten.
const edgeSaveAfter = 32

type edge struct{ target, rel, source string }

// edgeIndex is the backlinks of one root tree: for each referenced id, its
// referrers newest first (the order sortRefs gives). It is a multiset: an
// edge carried by two files is there twice, as when each file's edges are
// listed.
type edgeIndex struct {
	root gitstore.Hash
	by   map[string][]Reference
}

func newEdgeIndex(root gitstore.Hash) *edgeIndex {
	return &edgeIndex{root: root, by: map[string][]Reference{}}
}

// refLess is sortRefs' order.
func refLess(a, b Reference) bool {
	if a.ID != b.ID {
		return a.ID > b.ID
	}
	return a.Rel < b.Rel
}

func (x *edgeIndex) add(e edge) {
	refs := x.by[e.target]
	ref := Reference{Rel: e.rel, ID: e.source}
	i := sort.Search(len(refs), func(i int) bool { return !refLess(refs[i], ref) })
	refs = append(refs, Reference{})
	copy(refs[i+1:], refs[i:])
	refs[i] = ref
	x.by[e.target] = refs
}

// remove takes one instance of e out; it reports whether there was one.
func (x *edgeIndex) remove(e edge) bool {
	refs := x.by[e.target]
	ref := Reference{Rel: e.rel, ID: e.source}
	i := sort.Search(len(refs), func(i int) bool { return !refLess(refs[i], ref) })
	if i == len(refs) || refs[i] != ref {
		return false
	}
	if len(refs) == 1 {
		delete(x.by, e.target)
		return true
	}
	x.by[e.target] = append(refs[:i:i], refs[i+1:]...)
	return true
}

// edgeState is a Store's in-memory backlinks. mu guards every field and
// every use of idx (it is updated in place).
type edgeState struct {
	mu    sync.Mutex
	idx   *edgeIndex    // nil until first needed
	saved gitstore.Hash // the root this process last wrote to edgesFile
	at    time.Time     // when it did
	// behind counts the record files the index moved since the root of
	// edgesFile as this process last read or wrote it.
	behind int
}

// Backlinks returns, for every record some record references, the
// referring {rel, id} pairs, newest referrer first.
func (sn *Snapshot) Backlinks() (map[string][]Reference, error) {
	out := map[string][]Reference{}
	err := sn.withEdges(func(x *edgeIndex) {
		for t, refs := range x.by {
			out[t] = append([]Reference(nil), refs...)
		}
	})
	return out, err
}

// BacklinksOf is Backlinks for the given ids only (the rows of a page):
// its cost follows len(ids), not the size of the record.
func (sn *Snapshot) BacklinksOf(ids []string) (map[string][]Reference, error) {
	out := make(map[string][]Reference, len(ids))
	err := sn.withEdges(func(x *edgeIndex) {
		for _, id := range ids {
			if refs, ok := x.by[id]; ok {
				out[id] = append([]Reference(nil), refs...)
			}
		}
	})
	return out, err
}

func (sn *Snapshot) edgesPath() string {
	return filepath.Join(sn.s.git.Repo().StateDir(), edgesFile)
}

// withEdges brings the Store's index to this snapshot's root and calls fn
// with it, under the index's lock.
func (sn *Snapshot) withEdges(fn func(*edgeIndex)) error {
	st := &sn.s.edges
	st.mu.Lock()
	defer st.mu.Unlock()
	x := st.idx
	st.idx = nil // until it is whole again
	if x == nil {
		x = readEdgeCache(sn.edgesPath())
		st.behind = 0
	}
	rebuilt := x.root == gitstore.ZeroHash // no usable file: built from nothing
	if x.root != sn.Root {
		moved, err := sn.moveEdges(x, sn.Root)
		st.behind += moved
		if err != nil {
			// The indexed tree may be gone (a different clone's cache, a
			// rewritten ref), or half applied: rebuild from nothing.
			if x.root == gitstore.ZeroHash {
				return err
			}
			x = newEdgeIndex(gitstore.ZeroHash)
			if _, err := sn.moveEdges(x, sn.Root); err != nil {
				return err
			}
			rebuilt = true
		}
	}
	st.idx = x
	if x.root != st.saved && (rebuilt || st.behind >= edgeSaveAfter && (st.at.IsZero() || time.Since(st.at) >= edgeSaveEvery)) {
		writeEdgeCache(sn.edgesPath(), x) // best effort: a read-only .git still reads
		st.saved, st.at, st.behind = x.root, time.Now(), 0
	}
	fn(x)
	return nil
}

// moveEdges changes x from the edges of its root to those of root: a
// record file added brings its edges, one removed (an older snapshot than
// the index, a rewritten ref) takes its edges away, one replaced does
// both. It returns how many record files it moved past. On an error x is
// half moved and must be dropped.
func (sn *Snapshot) moveEdges(x *edgeIndex, root gitstore.Hash) (int, error) {
	moved := 0
	err := sn.s.git.DiffTrees(x.root, root, func(path string, old, new gitstore.TreeEntry) error {
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		moved++
		if old.Hash != gitstore.ZeroHash && !old.IsDir() {
			r, err := sn.load(old.Hash)
			switch {
			case err == ErrUnparseable: // it carried no edges
			case err != nil:
				return err // its edges cannot be taken away: rebuild
			default:
				for _, ref := range r.References {
					if !x.remove(edge{target: ref.ID, rel: ref.Rel, source: r.ID}) {
						return fmt.Errorf("edge index of %s lacks an edge of %s", x.root, path)
					}
				}
			}
		}
		if new.Hash != gitstore.ZeroHash && !new.IsDir() {
			r, err := sn.load(new.Hash)
			if err != nil {
				return nil // unparseable files carry no edges
			}
			for _, ref := range r.References {
				x.add(edge{target: ref.ID, rel: ref.Rel, source: r.ID})
			}
		}
		return nil
	})
	if err != nil {
		return moved, err
	}
	x.root = root
	return moved, nil
}

// readEdgeCache reads the cache at path; one that cannot be read, or is
// past edgeCacheMax, is rebuilt.
func readEdgeCache(path string) *edgeIndex {
	data, err := osproc.ReadRegular(path, edgeCacheMax)
	if err != nil {
		return newEdgeIndex(gitstore.ZeroHash)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	if !sc.Scan() {
		return newEdgeIndex(gitstore.ZeroHash)
	}
	var rootHex string
	if _, err := fmt.Sscanf(sc.Text(), "ideate-record-edges 1 %s", &rootHex); err != nil {
		return newEdgeIndex(gitstore.ZeroHash)
	}
	root, err := gitstore.ParseHash(rootHex)
	if err != nil {
		return newEdgeIndex(gitstore.ZeroHash)
	}
	x := newEdgeIndex(root)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return newEdgeIndex(gitstore.ZeroHash)
		}
		x.by[f[0]] = append(x.by[f[0]], Reference{Rel: unescapeTab(f[1]), ID: f[2]})
	}
	if sc.Err() != nil {
		return newEdgeIndex(gitstore.ZeroHash)
	}
	for _, refs := range x.by {
		sortRefs(refs)
	}
	return x
}

// The edge file escapes a rel's backslash, tab and newline.
var (
	tabEscaper   = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)
	tabUnescaper = strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n")
)

func escapeTab(s string) string { return tabEscaper.Replace(s) }

func unescapeTab(s string) string { return tabUnescaper.Replace(s) }

// edgeCacheMax bounds the edge cache read back (a line per edge, about
// 60 bytes).
const edgeCacheMax = 1 << 30

func writeEdgeCache(path string, x *edgeIndex) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "ideate-record-edges 1 %s\n", x.root)
	targets := make([]string, 0, len(x.by))
	for t := range x.by {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		for _, ref := range x.by[t] {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", t, escapeTab(ref.Rel), ref.ID)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".edges-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b.Bytes())
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
