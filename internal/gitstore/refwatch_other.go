//go:build !linux

package gitstore

// refWatch: directories of loose refs are watched on Linux only (see the
// Linux version); elsewhere every listing walks.
type refWatch struct{}

func (r *refReader) watchedLoose(prefix string) ([]Ref, bool, error) { return nil, false, nil }

func (r *refReader) watchedCount(prefix string) (int, bool) { return 0, false }

func (r *refReader) closeWatches() {}
