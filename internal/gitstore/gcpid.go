package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// gcRunning guards against a running `git gc`, which at its end deletes
// every pack index whose pack its last listing of objects/pack missed
// (clean_pack_garbage); a listing made while a writer puts its pack in
// place can see the .idx and miss the .pack. So a writer that finds
// gc.pid after its .pack is in place writes loose objects instead (see
// flush), and maintenance deletes nothing then. gc.pid is judged as git
// does: past 12 hours, or naming a gone process of this host, it is stale.
func gcRunning(commonDir string) bool {
	path := filepath.Join(commonDir, "gc.pid")
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true // cannot tell: assume one runs
	}
	if time.Since(fi.ModTime()) > 12*time.Hour {
		return false
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false // it ended between the two looks
	}
	if err != nil {
		return true
	}
	// Half-written (gc writes it whole before it starts work), or another
	// host's: taken as running.
	return !goneHere(strings.TrimSpace(string(data)))
}

// goneHere reports whether "<pid> <host>" names a process of this host
// that no longer exists; false when it cannot tell.
func goneHere(pidHost string) bool {
	pidText, host, _ := strings.Cut(pidHost, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	me, err := os.Hostname()
	return err == nil && host == me && osproc.Gone(pid)
}
