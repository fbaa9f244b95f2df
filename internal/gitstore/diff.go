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
	var al, bl []TreeEntry
	var err error
	if a != ZeroHash {
		if al, err = s.ReadTree(a); err != nil {
			return err
		}
	}
	if b != ZeroHash {
		if bl, err = s.ReadTree(b); err != nil {
			return err
		}
	}
	am := make(map[string]TreeEntry, len(al))
	for _, e := range al {
		am[e.Name] = e
	}
	var none TreeEntry
	// side walks one side of a pair: a file is reported, a directory
	// descended into (its other side absent).
	side := func(p string, old, new TreeEntry) error {
		switch {
		case new.Hash != ZeroHash && new.IsDir():
			return s.diffTrees(ZeroHash, new.Hash, p+"/", fn)
		case old.Hash != ZeroHash && old.IsDir():
			return s.diffTrees(old.Hash, ZeroHash, p+"/", fn)
		}
		return fn(p, old, new)
	}
	for _, e := range bl {
		old, had := am[e.Name]
		if had && old.Hash == e.Hash && old.Mode == e.Mode {
			continue
		}
		p := prefix + e.Name
		switch {
		case !had:
			err = side(p, none, e)
		case old.IsDir() && e.IsDir():
			err = s.diffTrees(old.Hash, e.Hash, p+"/", fn)
		case old.IsDir() == e.IsDir():
			err = fn(p, old, e)
		case e.IsDir(): // a file replaced by a directory
			if err = fn(p, old, none); err == nil {
				err = side(p, none, e)
			}
		default: // a directory replaced by a file
			if err = fn(p, none, e); err == nil {
				err = side(p, old, none)
			}
		}
		if err != nil {
			return err
		}
	}
	if len(al) == 0 {
		return nil
	}
	bm := make(map[string]bool, len(bl))
	for _, e := range bl {
		bm[e.Name] = true
	}
	var gone []TreeEntry
	for _, e := range al {
		if !bm[e.Name] {
			gone = append(gone, e)
		}
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].Name < gone[j].Name })
	for _, e := range gone {
		if err := side(prefix+e.Name, e, none); err != nil {
			return err
		}
	}
	return nil
}

// ChangedPaths lists the file paths that differ between commits from and
// to, sorted; from ZeroHash means the empty tree, so a root commit's
// paths are all its files. It reads at most max paths (max <= 0: no
// limit) and reports more when it stopped there. Only subtrees that differ
// are read.
func (s *Store) ChangedPaths(from, to Hash, max int) (paths []string, more bool, err error) {
	trees := [2]Hash{}
	for i, h := range []Hash{from, to} {
		if h == ZeroHash {
			continue
		}
		c, err := s.ReadCommit(h)
		if err != nil {
			return nil, false, err
		}
		trees[i] = c.Tree
	}
	err = s.DiffTrees(trees[0], trees[1], func(p string, _, _ TreeEntry) error {
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
