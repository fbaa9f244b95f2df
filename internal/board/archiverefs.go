package board

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// An item's referenced_by names every item that references it, archived
// ones included: the edge is part of the board's history, and a follow-up
// done and archived still explains the item it names. The archive's
// references are read from a per-clone cache, archive-refs.v1 in the state
// directory: a first line "ideate-archive-refs 1 <archive commit>", then
// one line per archived item that references any, "<id>\t<references as
// JSON>". A newer archive moves it by a diff of the two archive trees, so
// only the entries a sync added or replaced are read; without the cache
// (or when its commit is gone) it is built from the whole archive once.
const (
	archiveRefsFile = "archive-refs.v1"
	archiveRefsHead = "ideate-archive-refs 1 "
	archiveRefsMax  = 256 << 20
)

// archivedBacklinks maps each item id to the archived items that reference
// it (not those with a live ref: a ref stands over its archive entry).
func (s *Store) archivedBacklinks(live map[string]*entry) (map[string][]Reference, error) {
	a, err := s.git.Ref(ArchiveRef)
	if err != nil || a == gitstore.ZeroHash {
		return nil, err
	}
	refs, err := s.archiveRefs(a)
	if err != nil {
		return nil, err
	}
	out := map[string][]Reference{}
	for id, rs := range refs {
		if live[id] != nil {
			continue
		}
		for _, r := range rs {
			out[r.ID] = append(out[r.ID], Reference{Rel: r.Rel, ID: id})
		}
	}
	return out, nil
}

// archiveRefs is the forward references of every archived item of archive
// commit a that has any, by item id.
func (s *Store) archiveRefs(a gitstore.Hash) (map[string][]Reference, error) {
	path := filepath.Join(s.git.Repo().StateDir(), archiveRefsFile)
	from, refs := readArchiveRefs(path)
	if from == a {
		return refs, nil
	}
	newRoot, err := s.git.RootTree(a, archiveFormat)
	if err != nil {
		return nil, err
	}
	oldRoot := gitstore.ZeroHash
	if from != gitstore.ZeroHash {
		if oldRoot, err = s.git.RootTree(from, archiveFormat); err != nil {
			oldRoot, refs = gitstore.ZeroHash, map[string][]Reference{} // gone (a rewritten archive): build anew
		}
	}
	err = s.git.DiffTrees(oldRoot, newRoot, func(p string, _, now gitstore.TreeEntry) error {
		parts := strings.Split(p, "/")
		if len(parts) != 3 || parts[0] != "items" {
			return nil
		}
		id := parts[2]
		delete(refs, id)
		if now.Hash == gitstore.ZeroHash {
			return nil
		}
		tip, err := archiveBlob(s.git, now.Hash)
		if err != nil {
			return err
		}
		it, err := s.load(tip)
		if apperr.Is(err, SchemaVersion) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(it.References) > 0 {
			refs[id] = it.References
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	writeArchiveRefs(path, a, refs) // a cache: a failed write is rebuilt next time
	return refs, nil
}

// readArchiveRefs reads the cache; from is ZeroHash (and refs empty) when
// it is absent or does not parse.
func readArchiveRefs(path string) (from gitstore.Hash, refs map[string][]Reference) {
	refs = map[string][]Reference{}
	f, err := os.Open(path)
	if err != nil {
		return gitstore.ZeroHash, refs
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, archiveRefsMax))
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, archiveRefsHead) {
		return gitstore.ZeroHash, refs
	}
	from, err = gitstore.ParseHash(strings.TrimSpace(strings.TrimPrefix(head, archiveRefsHead)))
	if err != nil {
		return gitstore.ZeroHash, refs
	}
	for {
		line, err := r.ReadString('\n')
		if errors.Is(err, io.EOF) && line == "" {
			return from, refs
		}
		id, js, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		var rs []Reference
		if err != nil || !ok || checkID(id) != nil || json.Unmarshal([]byte(js), &rs) != nil {
			return gitstore.ZeroHash, map[string][]Reference{}
		}
		refs[id] = rs
	}
}

func writeArchiveRefs(path string, a gitstore.Hash, refs map[string][]Reference) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s\n", archiveRefsHead, a)
	for id, rs := range refs {
		js, err := json.Marshal(rs)
		if err != nil {
			return
		}
		fmt.Fprintf(&b, "%s\t%s\n", id, js)
	}
	_ = atomicfile.Replace(path, b.Bytes(), atomicfile.Options{})
}
