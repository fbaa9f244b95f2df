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

// A running `git gc` deletes, at its end, every pack index it finds
// without its pack: it lists objects/pack once more and treats an .idx
// whose .pack was not in that listing as garbage, and removes it together
// with the pack's other files, a .keep included (builtin/gc.c,
// clean_pack_garbage). A listing that runs while a pack is being put in
// place can see the .idx and miss the .pack: a directory read is not a
// snapshot, and a name added while it runs is returned or not depending
// on where it lands in the directory's order. The pack then stays without
// an index, and every object in it is gone for git.
//
// That loses commits beside `git gc --auto` with one pack per
// transaction (TestStore_Transact_RaceWithGitGC): git gc's last
// listing of objects/pack sees a writer's pack-X.idx and not its
// pack-X.pack, deletes the index and the .keep, and the ref then names a
// commit nobody can read. git's own pack writers (index-pack for a fetch
// or a push) have the same window; with a pack per write it is hit within
// seconds.
//
// gcRunning is the guard: a listing of that kind happens only inside a
// `git gc` that holds gc.pid (written before gc does anything, removed
// when it exits). A writer that finds no gc.pid after its .pack is in place
// knows that every gc whose listing could miss that .pack has finished, and
// that any later listing sees the .pack; so it may put the .idx in place.
// When gc.pid is there it writes loose objects instead (see flush). The
// same test comes before maintenance deletes what a pack it made replaces
// (see finishRollUp, finishRepack).
//
// gc.pid is taken as git takes it: a file older than 12 hours, or naming a
// process of this host that no longer exists, is stale.
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

// goneHere reports whether "<pid> <host>" (git's gc.pid, the maintenance
// lock's pid line) names a process of this host that no longer exists;
// false when it cannot tell (not that form, another host).
func goneHere(pidHost string) bool {
	pidText, host, _ := strings.Cut(pidHost, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	me, err := os.Hostname()
	return err == nil && host == me && osproc.Gone(pid)
}
