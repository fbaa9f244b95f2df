//go:build !(linux && amd64)

package gitstore

import "context"

// scanIndex is left to git on this platform (the in-process scan reads
// Linux stat data).
func (w *wtScan) scanIndex(ctx context.Context) ([]wentry, error) {
	return nil, errIndexUnsupported
}
