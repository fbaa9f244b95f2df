package gitstore

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
	"github.com/ideate/git-ideate/internal/osproc"
)

// A notes tree maps the 40-hex name of each annotated object to a blob;
// git fans a large one out (the first two hex digits become a directory,
// and so on). Readers here accept any mix of levels, as git does, and the
// writer keeps the layout it finds, so `git notes` can take turns with it.

// ReadNote returns the note attached to obj on the notes ref, with ok false
// when there is none (or the ref does not exist).
func (s *Store) ReadNote(ref string, obj Hash) (note []byte, ok bool, err error) {
	tip, err := s.Ref(ref)
	if err != nil || tip == ZeroHash {
		return nil, false, err
	}
	root, err := s.treeOf(tip)
	if err != nil {
		return nil, false, err
	}
	loc, err := s.findNote(root, obj)
	if err != nil || !loc.found {
		return nil, false, err
	}
	data, err := s.ReadBlob(loc.entry.Hash)
	return data, err == nil, err
}

// AppendNote adds text (ended by a newline) on the line after the note on
// obj in the notes ref, creating the note and the ref when there is none,
// as one commit made with Transact, which it returns.
func (s *Store) AppendNote(ctx context.Context, ref string, obj Hash, text string) (Hash, error) {
	if obj == ZeroHash {
		return ZeroHash, apperr.New(apperr.Schema, "a note needs the object it is about")
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return s.Transact(ctx, ref, func(tip Hash) (Hash, string, error) {
		root, err := s.treeOf(tip)
		if err != nil {
			return ZeroHash, "", err
		}
		loc, err := s.findNote(root, obj)
		if err != nil {
			return ZeroHash, "", err
		}
		var body []byte
		if loc.found {
			old, err := s.ReadBlob(loc.entry.Hash)
			if err != nil {
				return ZeroHash, "", err
			}
			body = append(body, old...)
			if len(body) > 0 && body[len(body)-1] != '\n' {
				body = append(body, '\n')
			}
		}
		body = append(body, text...)
		blob, err := s.WriteBlob(body)
		if err != nil {
			return ZeroHash, "", err
		}
		newRoot, err := s.Insert(root, loc.dirs, TreeEntry{Mode: ModeFile, Name: loc.name, Hash: blob}, true)
		return newRoot, "Notes appended by git ideate\n", err
	})
}

// noteLoc is where the note on one object is, or would go.
type noteLoc struct {
	dirs  []string  // fan-out directories from the root
	name  string    // the entry's name inside the last of them
	entry TreeEntry // the note's blob entry, when found
	found bool
}

// findNote looks for the note on obj below root. When there is none, the
// location returned is where a new one belongs: inside the fan-out
// directories that exist for obj's prefix, one level deeper when the tree
// reached there is itself fanned out.
func (s *Store) findNote(root, obj Hash) (noteLoc, error) {
	rest := obj.String()
	loc := noteLoc{name: rest}
	cur := root
	for cur != ZeroHash {
		entries, err := s.ReadTree(cur)
		if err != nil {
			return loc, err
		}
		var sub *TreeEntry
		fanned := false
		for i, e := range entries {
			if e.Name == rest && !e.IsDir() {
				loc.name, loc.entry, loc.found = rest, e, true
				return loc, nil
			}
			if e.IsDir() && len(e.Name) == 2 && strings.Trim(e.Name, "0123456789abcdef") == "" { // a fan-out level
				fanned = true
				if len(rest) > 2 && e.Name == rest[:2] {
					sub = &entries[i]
				}
			}
		}
		if sub == nil {
			if fanned && len(rest) > 2 {
				loc.dirs = append(loc.dirs, rest[:2])
				rest = rest[2:]
			}
			loc.name = rest
			return loc, nil
		}
		loc.dirs = append(loc.dirs, sub.Name)
		rest = rest[2:]
		loc.name = rest
		cur = sub.Hash
	}
	return loc, nil
}

// ResolveCommit names the commit that spec means: "HEAD" (or ""), a full
// object name, or an abbreviated one (at least 4 hex digits; a prefix of
// HEAD, the common case, without starting git). A name that resolves to
// no commit is apperr.NotFound, one that is not hex apperr.Schema.
func (s *Store) ResolveCommit(ctx context.Context, spec string) (Hash, error) {
	spec = strings.ToLower(strings.TrimSpace(spec))
	if spec == "" || spec == "head" {
		h, err := s.Head()
		if err == nil && h == ZeroHash {
			return ZeroHash, apperr.New(apperr.NotFound, "HEAD names no commit yet")
		}
		return h, err
	}
	if len(spec) < 4 || len(spec) > 40 || strings.Trim(spec, "0123456789abcdef") != "" {
		return ZeroHash, apperr.New(apperr.Schema, "%q is not an object name", spec)
	}
	var h Hash
	if len(spec) == 40 {
		h, _ = ParseHash(spec)
	} else if head, err := s.Head(); err == nil && head != ZeroHash && strings.HasPrefix(head.String(), spec) {
		h = head
	} else {
		// --git-dir is the worktree's own: HEAD and its reflog live there.
		out, err := s.RunGit(ctx, "", "--git-dir="+s.repo.GitDir, "rev-parse", "--verify", "--quiet", spec+"^{commit}")
		if ctx.Err() != nil {
			return ZeroHash, ctx.Err()
		}
		if err != nil {
			return ZeroHash, apperr.New(apperr.NotFound, "%s names no commit in this repository", spec)
		}
		if h, err = ParseHash(string(bytes.TrimSpace(out))); err != nil {
			return ZeroHash, err
		}
	}
	t, _, err := s.ReadObject(h)
	if apperr.Is(err, apperr.NotFound) || err == nil && t != oid.CommitObject {
		return ZeroHash, apperr.New(apperr.NotFound, "%s names no commit in this repository", spec)
	}
	return h, err
}

// Head returns the commit HEAD names: through the branch it points at, or
// detached. It is ZeroHash on an unborn branch.
func (s *Store) Head() (Hash, error) {
	b, err := osproc.ReadRegular(filepath.Join(s.repo.GitDir, "HEAD"), smallFileMax)
	if err != nil {
		return ZeroHash, apperr.Wrap(apperr.NotARepo, err, "cannot read HEAD of %s", s.repo.GitDir)
	}
	if h, ok := parseHashLine(b); ok {
		return h, nil
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:")
	if !ok {
		return ZeroHash, apperr.New(apperr.Internal, "HEAD of %s holds neither a ref nor an object name", s.repo.GitDir)
	}
	return s.Ref(strings.TrimSpace(target)) // ZeroHash on an unborn branch
}
