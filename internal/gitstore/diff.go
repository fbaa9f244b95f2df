package gitstore

import (
	"errors"
	"sort"
)

// ErrStopDiff, returned by a DiffTrees callback, ends the walk early;
// DiffTrees then returns nil.
var ErrStopDiff = errors.New("stop the tree diff")

// DiffFunc hears of one file that differs between two trees: old is its
// entry in the first tree and new in the second, a zero TreeEntry where it
// is absent.
type DiffFunc func(path string, old, new TreeEntry) error

// DiffTrees calls fn for every file path that differs between trees a and
// b (either may be ZeroHash). Subtrees with equal hashes are skipped
// unread, so the cost follows what changed, not the size of the trees.
// Within a directory, entries of b come in tree order, then those only in
// a by name; a file replaced by a directory (or the reverse) is reported,
// then the directory's files.
func (s *Store) DiffTrees(a, b Hash, fn DiffFunc) error {
	err := s.diffTrees(a, b, "", fn)
	if errors.Is(err, ErrStopDiff) {
		return nil
	}
	return err
}

func (s *Store) diffTrees(a, b Hash, prefix string, fn DiffFunc) error {
	if a == b {
		return nil
	}
	al, err := s.readTreeOrEmpty(a)
	if err != nil {
		return err
	}
	bl, err := s.readTreeOrEmpty(b)
	if err != nil {
		return err
	}
	am := make(map[string]TreeEntry, len(al))
	for _, e := range al {
		am[e.Name] = e
	}
	bm := make(map[string]TreeEntry, len(bl))
	names := make([]string, 0, len(bl))
	for _, e := range bl {
		bm[e.Name] = e
		names = append(names, e.Name)
	}
	var gone []string
	for _, e := range al {
		if _, ok := bm[e.Name]; !ok {
			gone = append(gone, e.Name)
		}
	}
	sort.Strings(gone)
	for _, name := range append(names, gone...) {
		old, new := am[name], bm[name]
		if old.Hash == new.Hash && old.Mode == new.Mode {
			continue
		}
		// The file side is reported first, then the directory side walked.
		var oldFile, newFile TreeEntry
		var oldDir, newDir Hash
		if old.IsDir() {
			oldDir = old.Hash
		} else {
			oldFile = old
		}
		if new.IsDir() {
			newDir = new.Hash
		} else {
			newFile = new
		}
		if oldFile.Hash != ZeroHash || newFile.Hash != ZeroHash {
			if err := fn(prefix+name, oldFile, newFile); err != nil {
				return err
			}
		}
		if err := s.diffTrees(oldDir, newDir, prefix+name+"/", fn); err != nil {
			return err
		}
	}
	return nil
}

// readTreeOrEmpty is ReadTree, and no entries for ZeroHash.
func (s *Store) readTreeOrEmpty(h Hash) ([]TreeEntry, error) {
	if h == ZeroHash {
		return nil, nil
	}
	return s.ReadTree(h)
}

// ChangedPaths lists the file paths that differ between commits from and
// to, sorted; from ZeroHash means the empty tree, so a root commit's
// paths are all its files. It reads at most max paths (max <= 0: no
// limit) and reports more when it stopped there. Only subtrees that differ
// are read.
func (s *Store) ChangedPaths(from, to Hash, max int) (paths []string, more bool, err error) {
	a, err := s.treeOf(from)
	if err != nil {
		return nil, false, err
	}
	b, err := s.treeOf(to)
	if err != nil {
		return nil, false, err
	}
	err = s.DiffTrees(a, b, func(p string, _, _ TreeEntry) error {
		if max > 0 && len(paths) >= max {
			more = true
			return ErrStopDiff
		}
		paths = append(paths, p)
		return nil
	})
	sort.Strings(paths)
	return paths, more, err
}
