//go:build !linux

package benchutil

// FileSystem is "unknown" off Linux.
func FileSystem(dir string) string { return "unknown" }
