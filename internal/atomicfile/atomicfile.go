// Package atomicfile writes files so that a reader sees the old content or
// the new, never a part: the data goes to a temporary file beside the
// target, which is then renamed over it (Replace) or hard-linked into place
// only if nothing is there yet (Create, of which one writer wins).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Options tune Replace.
type Options struct {
	// Mode of the new file; 0 keeps the mode of the file it replaces, or
	// 0644 for a new one.
	Mode fs.FileMode
	// Sync flushes the data to disk before the rename (files a user
	// edits, such as settings and plans); caches and per-clone state
	// skip it.
	Sync bool
}

// Replace writes data to path atomically, over whatever was there,
// creating the directory. Errors are apperr.Write.
func Replace(path string, data []byte, o Options) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create %s: %v", dir, err)
	}
	mode := o.Mode
	if mode == 0 {
		mode = 0o644
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil && o.Sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path, err)
	}
	return nil
}

// SweepStale removes the temporary files Replace left beside path when
// its process was killed between writing and renaming (".<name>.tmp-*"),
// those last changed more than age ago: a writer still at work is newer.
func SweepStale(path string, age time.Duration) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	for _, p := range old {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > age {
			os.Remove(p)
		}
	}
}

// Create writes data to path only if path does not exist: written aside
// and hard-linked into place, so nobody reads it half-written and of two
// writers exactly one wins. exists reports that path was there already
// (nothing was written). Errors are apperr.Write.
func Create(path string, data []byte) (exists bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return false, apperr.Wrap(apperr.Write, err, "cannot create %s: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return false, apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path)
		if errors.Is(err, os.ErrExist) {
			return true, nil
		}
	}
	if err != nil {
		return false, apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path, err)
	}
	return false, nil
}
