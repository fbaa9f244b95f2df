package board

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
)

// An item's referenced_by names every item that references it, archived
// ones included: the edge is part of the board's history, and a follow-up
// done and archived still explains the item it names. The archive keeps
// an archived item's references beside it (references/<id[24:26]>/<id>,
// for items that have any), and a per-clone cache, archive-refs.v1 in the
// state directory, holds them keyed by the archive commit: a first line
// "ideate-archive-refs 1 <archive commit>", then "<id>\t<references as
// JSON>" per item. A newer archive moves it by a diff of the two
// references/ trees, so a read costs what the archive's references add.
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
// commit a that has any, by item id, as the archive keeps them under
// references/ (archiveReferencesPath).
func (s *Store) archiveRefs(a gitstore.Hash) (map[string][]Reference, error) {
	path := filepath.Join(s.git.Repo().StateDir(), archiveRefsFile)
	from, refs := readArchiveRefs(path)
	if from == a {
		return refs, nil
	}
	now, err := s.referencesTree(a)
	if err != nil {
		return nil, err
	}
	was := gitstore.ZeroHash
	if from != gitstore.ZeroHash {
		if was, err = s.referencesTree(from); err != nil {
			was, refs = gitstore.ZeroHash, map[string][]Reference{} // gone (a rewritten archive): read anew
		}
	}
	err = s.git.DiffTrees(was, now, func(p string, _, e gitstore.TreeEntry) error {
		id := p[strings.LastIndexByte(p, '/')+1:]
		delete(refs, id)
		if e.Hash == gitstore.ZeroHash || checkID(id) != nil {
			return nil
		}
		data, err := s.git.ReadBlob(e.Hash)
		if err != nil {
			return err
		}
		var rs []Reference
		if json.Unmarshal(data, &rs) == nil && len(rs) > 0 {
			refs[id] = rs
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	writeArchiveRefs(path, a, refs) // a cache: a failed write is read anew next time
	return refs, nil
}

// referencesTree is the references/ tree of archive commit a (ZeroHash:
// none).
func (s *Store) referencesTree(a gitstore.Hash) (gitstore.Hash, error) {
	root, err := s.git.RootTree(a, archiveFormat)
	if err != nil || root == gitstore.ZeroHash {
		return gitstore.ZeroHash, err
	}
	e, ok, err := s.git.Lookup(root, []string{"references"})
	if err != nil || !ok || !e.IsDir() {
		return gitstore.ZeroHash, err
	}
	return e.Hash, nil
}

// readArchiveRefs reads the cache; from is ZeroHash (and refs empty) when
// it is absent or does not parse.
func readArchiveRefs(path string) (from gitstore.Hash, refs map[string][]Reference) {
	refs = map[string][]Reference{}
	f, _, err := osproc.OpenRegular(path) // a state file: never a FIFO that blocks
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
