package gitstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// stateName is what a caller's state file may be called: one plain name
// of lower-case letters, digits, '.' and '-', never a path.
var stateName = textfmt.BoundedRegexp(`^[a-z][a-z0-9.-]*$`, 100)

func (s *Store) statePath(name string) (string, error) {
	if !stateName().MatchString(name) {
		return "", apperr.New(apperr.Schema, "%q is not a state file name", name)
	}
	return filepath.Join(s.repo.StateDir(), name), nil
}

// PutState writes a small per-clone state file under .git/ideate (a hook's
// note to a later hook of the same session), replacing it whole: it is
// written to a temporary file and renamed.
func (s *Store) PutState(name string, data []byte) error {
	p, err := s.statePath(name)
	if err != nil {
		return err
	}
	return atomicfile.Replace(p, data, atomicfile.Options{})
}

// TakeState reads the state file name and removes it; nil, nil when there
// is none. Of two takers, one gets it.
func (s *Store) TakeState(name string) ([]byte, error) {
	p, err := s.statePath(name)
	if err != nil {
		return nil, err
	}
	data, err := take(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot take state %s", name)
	}
	return data, nil
}

// take renames the file at path to a name of its own, so that of two
// takers one gets it, and returns what it held (at most 4 MiB), removing
// it; the error wraps os.ErrNotExist when there was none.
func take(path string) ([]byte, error) {
	taken := path + ".taken-" + strconv.FormatUint(rand.Uint64(), 36)
	if err := os.Rename(path, taken); err != nil {
		return nil, err
	}
	defer os.Remove(taken)
	return osproc.ReadRegular(taken, 4<<20)
}
