package gitstore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore/oid"

	"github.com/ideate/git-ideate/internal/apperr"
)

// ErrExists is wrapped when an insert finds its path already taken.
var ErrExists = fmt.Errorf("path already exists")

// Lookup finds the entry at path (slash-free components) below root. ok is
// false when any component is missing.
func (s *Store) Lookup(root Hash, path []string) (e TreeEntry, ok bool, err error) {
	cur := root
	for i, name := range path {
		if cur == ZeroHash {
			return e, false, nil
		}
		entries, err := s.ReadTree(cur)
		if err != nil {
			return e, false, err
		}
		at := slices.IndexFunc(entries, func(te TreeEntry) bool { return te.Name == name })
		if at < 0 {
			return e, false, nil
		}
		e = entries[at]
		if i < len(path)-1 {
			if !e.IsDir() {
				return e, false, nil
			}
			cur = e.Hash
		}
	}
	return e, len(path) > 0, nil
}

// Insert returns a new root tree equal to root (ZeroHash = empty) plus leaf
// at path (the directories, then leaf.Name). Only the trees on the path are
// rewritten. When replace is false an existing entry of that name is an
// apperr.Conflict wrapping ErrExists.
func (s *Store) Insert(root Hash, dirs []string, leaf TreeEntry, replace bool) (Hash, error) {
	return s.InsertWithRootFile(root, dirs, leaf, replace, "", nil)
}

// InsertWithRootFile is Insert that also adds a file named file holding
// data at the top level when root lacks one (a store's format-version
// entry), in the same rewrite of the root, which leaves no dangling tree
// between.
func (s *Store) InsertWithRootFile(root Hash, dirs []string, leaf TreeEntry, replace bool, file string, data []byte) (Hash, error) {
	entries, err := s.readTreeOrEmpty(root)
	if err != nil {
		return ZeroHash, err
	}
	if file != "" && !slices.ContainsFunc(entries, func(e TreeEntry) bool { return e.Name == file }) {
		h, err := s.WriteBlob(data)
		if err != nil {
			return ZeroHash, err
		}
		entries = append(entries, TreeEntry{Mode: ModeFile, Name: file, Hash: h})
	}
	name := leaf.Name
	if len(dirs) > 0 {
		name = dirs[0]
	}
	idx := slices.IndexFunc(entries, func(e TreeEntry) bool { return e.Name == name })
	var newEntry TreeEntry
	if len(dirs) == 0 {
		if idx >= 0 && !replace {
			return ZeroHash, &apperr.Error{Code: apperr.Conflict, Msg: fmt.Sprintf("%s already exists", name), Err: ErrExists}
		}
		newEntry = leaf
	} else {
		sub := ZeroHash
		if idx >= 0 {
			if !entries[idx].IsDir() {
				return ZeroHash, &apperr.Error{Code: apperr.Conflict, Msg: fmt.Sprintf("%s is a file, not a directory", name), Err: ErrExists}
			}
			sub = entries[idx].Hash
		}
		h, err := s.Insert(sub, dirs[1:], leaf, replace)
		if err != nil {
			return ZeroHash, err
		}
		newEntry = TreeEntry{Mode: ModeDir, Name: name, Hash: h}
	}
	if idx >= 0 {
		entries[idx] = newEntry
	} else {
		entries = append(entries, newEntry)
	}
	return s.WriteTree(entries)
}

// Format is the version entry a store keeps at the root of its trees: a
// blob named File holding "<Kind> <Version>\n". A reader meeting a newer
// version, or one it cannot read, stops with an error of code Code naming
// the store as What, instead of misreading it.
type Format struct {
	File, Kind string
	Version    int
	Code       apperr.Code
	What       string
}

// Blob is the entry's content for this version.
func (f Format) Blob() []byte { return []byte(f.Kind + " " + strconv.Itoa(f.Version) + "\n") }

// CheckFormat returns an error of code f.Code (a sentence naming f.What)
// when the tree entry e holds a version newer than f's, or one that does
// not parse.
func (s *Store) CheckFormat(e TreeEntry, f Format) error {
	if e.Hash == oid.ComputeHash(oid.BlobObject, f.Blob()) {
		return nil
	}
	data, err := s.ReadBlob(e.Hash)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(data), "\uFFFD"))
	var v int
	if _, err := fmt.Sscanf(text, f.Kind+" %d", &v); err != nil || v > f.Version {
		if len(text) > 40 {
			text = text[:40]
		}
		return apperr.New(f.Code, "%s was written by a newer git ideate (format %q); upgrade to use it", f.What, text)
	}
	return nil
}

// CheckRootFormat is CheckFormat for the entry at the top of root; a root
// without one (an empty or pre-format store) passes.
func (s *Store) CheckRootFormat(root Hash, f Format) error {
	e, ok, err := s.Lookup(root, []string{f.File})
	if err != nil || !ok {
		return err
	}
	return s.CheckFormat(e, f)
}

// RootTree returns the root tree of the commit tip after CheckRootFormat
// has passed it, and ZeroHash for ZeroHash (a store with no commit yet).
func (s *Store) RootTree(tip Hash, f Format) (Hash, error) {
	root, err := s.treeOf(tip)
	if err != nil {
		return ZeroHash, err
	}
	return root, s.CheckRootFormat(root, f)
}

// treeOf is the root tree of commit, ZeroHash for ZeroHash.
func (s *Store) treeOf(commit Hash) (Hash, error) {
	if commit == ZeroHash {
		return ZeroHash, nil
	}
	c, err := s.ReadCommit(commit)
	if err != nil {
		return ZeroHash, err
	}
	return c.Tree, nil
}

// EnsureFormat returns root with f's entry at its top level, adding it
// only when it is missing, so every commit of the store carries its version.
func (s *Store) EnsureFormat(root Hash, f Format) (Hash, error) {
	if _, ok, err := s.Lookup(root, []string{f.File}); err != nil || ok {
		return root, err
	}
	h, err := s.WriteBlob(f.Blob())
	if err != nil {
		return root, err
	}
	return s.Insert(root, nil, TreeEntry{Mode: ModeFile, Name: f.File, Hash: h}, true)
}
