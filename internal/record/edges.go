package record

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore"
)

// Backlinks are derived, never stored in the record: the forward edges of
// every record are gathered into a cache file under .git/ideate/, keyed by
// the root tree it was built from. When the tree moves on, only the
// subtrees that differ are visited (a tree diff that skips equal hashes),
// so keeping the cache current costs O(new records), and a lost or corrupt
// cache is rebuilt from the record itself.
const edgesFile = "record-edges.v1"

type edge struct{ target, rel, source string }

type edgeCache struct {
	root  gitstore.Hash
	edges []edge
}

// Backlinks returns, for every record some record references, the
// referring {rel, id} pairs, newest referrer first.
func (sn *Snapshot) Backlinks() (map[string][]Reference, error) {
	c, err := sn.edges()
	if err != nil {
		return nil, err
	}
	out := map[string][]Reference{}
	for _, e := range c.edges {
		out[e.target] = append(out[e.target], Reference{Rel: e.rel, ID: e.source})
	}
	for _, refs := range out {
		sortRefs(refs)
	}
	return out, nil
}

func (sn *Snapshot) edgesPath() string {
	return filepath.Join(sn.s.git.Repo().StateDir(), edgesFile)
}

func (sn *Snapshot) edges() (*edgeCache, error) {
	old := readEdgeCache(sn.edgesPath())
	if old.root == sn.Root {
		return old, nil
	}
	next := &edgeCache{root: sn.Root, edges: old.edges}
	err := sn.diffTrees(old.root, sn.Root, func(blob gitstore.Hash) error {
		r, err := sn.load(blob)
		if err != nil {
			return nil // unparseable files carry no edges
		}
		for _, ref := range r.References {
			next.edges = append(next.edges, edge{target: ref.ID, rel: ref.Rel, source: r.ID})
		}
		return nil
	})
	if err != nil {
		// The cached tree may be gone (a different clone's cache, a
		// rewritten ref): rebuild from nothing.
		if old.root == gitstore.ZeroHash {
			return nil, err
		}
		next = &edgeCache{root: sn.Root}
		if err := sn.diffTrees(gitstore.ZeroHash, sn.Root, func(blob gitstore.Hash) error {
			r, err := sn.load(blob)
			if err == nil {
				for _, ref := range r.References {
					next.edges = append(next.edges, edge{target: ref.ID, rel: ref.Rel, source: r.ID})
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	writeEdgeCache(sn.edgesPath(), next) // best effort: a read-only .git still reads
	return next, nil
}

// diffTrees calls fn for each record file in newT that is not in oldT.
// Records are immutable, so only added files matter.
func (sn *Snapshot) diffTrees(oldT, newT gitstore.Hash, fn func(gitstore.Hash) error) error {
	return sn.s.git.DiffTrees(oldT, newT, func(path string, old, new gitstore.TreeEntry) error {
		if old.Hash == gitstore.ZeroHash && new.Hash != gitstore.ZeroHash && strings.HasSuffix(path, ".md") {
			return fn(new.Hash)
		}
		return nil
	})
}

func readEdgeCache(path string) *edgeCache {
	data, err := os.ReadFile(path)
	if err != nil {
		return &edgeCache{}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	if !sc.Scan() {
		return &edgeCache{}
	}
	var rootHex string
	if _, err := fmt.Sscanf(sc.Text(), "ideate-record-edges 1 %s", &rootHex); err != nil {
		return &edgeCache{}
	}
	root, err := gitstore.ParseHash(rootHex)
	if err != nil {
		return &edgeCache{}
	}
	c := &edgeCache{root: root}
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return &edgeCache{}
		}
		c.edges = append(c.edges, edge{target: f[0], rel: unescapeTab(f[1]), source: f[2]})
	}
	if sc.Err() != nil {
		return &edgeCache{}
	}
	return c
}

func escapeTab(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`).Replace(s)
}

func unescapeTab(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n").Replace(s)
}

func writeEdgeCache(path string, c *edgeCache) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "ideate-record-edges 1 %s\n", c.root)
	for _, e := range c.edges {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", e.target, escapeTab(e.rel), e.source)
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
