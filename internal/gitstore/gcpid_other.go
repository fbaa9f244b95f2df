//go:build !unix

package gitstore

// processGone cannot tell here: a gc.pid of this host counts as running
// until it is 12 hours old.
func processGone(int) bool { return false }
