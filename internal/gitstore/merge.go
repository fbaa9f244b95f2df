package gitstore

import "github.com/ideate/git-ideate/internal/apperr"

// ResolveFunc decides the entry at path when both sides of a union hold a
// file of that name with different content. It may write a new blob.
type ResolveFunc func(path string, ours, theirs TreeEntry) (TreeEntry, error)

// UnionTrees returns a tree holding every entry of ours and of theirs
// (either may be ZeroHash). Directories present on both sides are merged
// recursively; identical subtrees are shared, not re-read, so the cost is
// proportional to what differs. Two different files at one path go to
// resolve; a file against a directory is an apperr.Conflict.
func (s *Store) UnionTrees(ours, theirs Hash, resolve ResolveFunc) (Hash, error) {
	return s.union("", ours, theirs, resolve)
}

func (s *Store) union(prefix string, ours, theirs Hash, resolve ResolveFunc) (Hash, error) {
	switch {
	case ours == theirs || theirs == ZeroHash:
		return ours, nil
	case ours == ZeroHash:
		return theirs, nil
	}
	a, err := s.ReadTree(ours)
	if err != nil {
		return ZeroHash, err
	}
	b, err := s.ReadTree(theirs)
	if err != nil {
		return ZeroHash, err
	}
	idx := make(map[string]int, len(a))
	out := append([]TreeEntry(nil), a...)
	for i, e := range out {
		idx[e.Name] = i
	}
	changed := false
	for _, t := range b {
		i, ok := idx[t.Name]
		if !ok {
			out = append(out, t)
			changed = true
			continue
		}
		o := out[i]
		if o.Hash == t.Hash && o.Mode == t.Mode {
			continue
		}
		path := prefix + t.Name
		switch {
		case o.IsDir() && t.IsDir():
			h, err := s.union(path+"/", o.Hash, t.Hash, resolve)
			if err != nil {
				return ZeroHash, err
			}
			if h != o.Hash {
				out[i].Hash = h
				changed = true
			}
		case o.IsDir() != t.IsDir():
			return ZeroHash, apperr.New(apperr.Conflict, "%s is a file on one side and a directory on the other", path)
		default:
			r, err := resolve(path, o, t)
			if err != nil {
				return ZeroHash, err
			}
			if r != o {
				out[i] = r
				changed = true
			}
		}
	}
	if !changed {
		return ours, nil
	}
	return s.WriteTree(out)
}

// CommitTree writes a commit of tree on parent (ZeroHash: a root commit).
func (s *Store) CommitTree(tree, parent Hash, message string) (Hash, error) {
	sig := s.Identity()
	c := &Commit{Tree: tree, Author: sig, Committer: sig, Message: message}
	if parent != ZeroHash {
		c.Parents = []Hash{parent}
	}
	return s.WriteCommit(c)
}
