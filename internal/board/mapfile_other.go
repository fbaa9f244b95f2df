//go:build !unix

package board

import "os"

// mapFile reads path (no mapping here).
func mapFile(path string) ([]byte, error) { return os.ReadFile(path) }
