//go:build !(linux && amd64)

package gitstore

import "context"

// scanIndex is left to git on this platform (the in-process scan reads
// Linux stat data).
func (w *wtScan) scanIndex(ctx context.Context) ([]wentry, error) {
	return nil, errIndexUnsupported
}

type diffFunc func(fn func(path, om, nm string, oh, nh Hash)) error

// prepareAmong leaves the candidates to the full scan on this platform.
func (w *wtScan) prepareAmong(ctx context.Context, baseTree Hash, cands []string) (diffFunc, bool, error) {
	if cands == nil {
		return nil, false, nil
	}
	return nil, false, errIndexUnsupported
}
