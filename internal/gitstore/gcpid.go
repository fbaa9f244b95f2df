package gitstore

import (
	"errors"
	"io"
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
	f, fi, err := osproc.OpenRegular(filepath.Join(commonDir, "gc.pid"))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true // cannot tell: assume one runs
	}
	defer f.Close()
	if time.Since(fi.ModTime()) > 12*time.Hour {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<10))
	if err != nil {
		return true
	}
	// "<pid> <host>": running unless it names a gone process of this host
	// (half-written, or another host's, it is taken as running).
	pidText, host, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	pid, err := strconv.Atoi(pidText)
	me, herr := os.Hostname()
	return err != nil || pid <= 0 || herr != nil || host != me || !osproc.Gone(pid)
}
