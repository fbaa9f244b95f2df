package gitstore

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/osproc"
)

// The shared spares: a CLI call lives for one write, too short for spares
// of its own (see spares), yet it makes the same three files an MCP call
// does — its pack, its index and its ref lock — and on the CI machine's
// root file system each new inode cost 0.7–1.8 ms inside the call (strace
// of CLI claims; see docs/ARCHITECTURE.md). So the clone keeps a pool of
// empty files for its short-lived processes, <common dir>/ideate/spare/
// pool-0 … pool-<poolSlots-1>, made by the background roll-up or repack
// that CLI writes start anyway (poolShell), outside anyone's call.
//
// A CLI write with maintenance on takes one by renaming a slot to a name
// of its own (<pid>-<store>-<n>, as the MCP server's spares are named)
// and only then opens it: a rename moves a name atomically, so of two
// processes trying one slot exactly one gets the file, and the file it
// opens under its own name is no one else's. From there it is an ordinary
// spare: filled and renamed into objects/pack, or flocked and renamed
// without replacing to a ref's .lock. When the slots tried are empty (the
// first writes of a clone, maintenance off, another file system) the write
// creates its files as before.
//
// A long-lived Store (the MCP server) draws on the pool too, before its own
// spares, where its spare directory is on ext4 without a journal
// (spares.poolFirst): there the files its own goroutine makes beside its
// calls cost the calls more than files a roll-up's shell makes in another
// process (bench/mcpab: claim 0.59, complete 0.59 of their medians with
// only its own spares); on a journaled ext4 the take's extra rename and
// open cost 5–10 %, so there it keeps to its own.
//
// poolSlots: a roll-up starts after about 16 writes, which take three
// files each from the pool the last roll-up filled; 48 slots left the
// pool empty just when the write that starts the next roll-up wanted its
// three and the roll-up's list and input two more, and that write made
// 4–6 files (writebench, 20 traced CLI calls of each kind). With 64 it
// made 2–3, but for the clone's first roll-up, before any pool.
const poolSlots = 64

// poolTries is how many slots a take tries, in order from a random one.
const poolTries = 6

// canPool reports whether shared spares can be used here: their lock
// takes need a rename that does not replace.
var canPool = osproc.HasRenameNoReplace

// poolSlot names slot k of the pool in dir.
func poolSlot(dir string, k int) string { return filepath.Join(dir, "pool-"+strconv.Itoa(k)) }

// pooledSpares are the spares of a short-lived Store: none of its own, no
// goroutine; take draws on the pool in dir.
func pooledSpares(dir string) *spares {
	return &spares{dir: dir, pooled: true, poolFirst: true, done: make(chan struct{}),
		prefix: strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(spareStores.Add(1), 10) + "-"}
}

// takePooled moves a pool slot's file in dir to own and opens it; nil
// when the slots tried are empty. A file this process cannot open (another
// user's) goes back to its slot; one that is not an empty regular file
// (written to by hand) is removed; neither is used.
func takePooled(dir, own string) *os.File {
	first := rand.N(poolSlots)
	for i := 0; i < poolTries; i++ {
		slot := poolSlot(dir, (first+i)%poolSlots)
		if osproc.Rename(slot, own) != nil {
			continue // taken by another process, or not made yet
		}
		f, err := openSpare(own)
		if err != nil {
			if osproc.RenameNoReplace(own, slot) != nil {
				os.Remove(own)
			}
			continue
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			return f
		}
		f.Close()
		os.Remove(own)
	}
	return nil
}

// returnToPool puts a taken file, still empty and at its own name, back
// into a free slot, or removes it when every slot is taken (a refill ran
// meanwhile). It runs only when a lock was found held.
func returnToPool(dir string, f *os.File) {
	f.Close()
	first := rand.N(poolSlots)
	for i := 0; i < poolSlots; i++ {
		if osproc.RenameNoReplace(f.Name(), poolSlot(dir, (first+i)%poolSlots)) == nil {
			return
		}
	}
	os.Remove(f.Name())
}

// poolShell is the shell a background roll-up or repack ends with (see
// finishShell): it makes the pool's missing files. `: >>` creates an
// empty file and never truncates one: a slot taken between the test and
// the open is made anew, and a file opened just before a take moves it is
// left as it was. Only builtins run, but for the first refill of a clone:
// a file of the spare directory must be able to move into the pack
// directory and the refs, and a hard link fails across mounts exactly as
// a rename does (EXDEV), so one probe link to each decides, and its
// success is marked (spare.probed beside the spare directory) so that the
// next refills start no process for it. Every process a roll-up starts
// cost about a millisecond of CPU here (the dynamic loader, libselinux,
// the locale files), beside a server that has two cores to share.
func (s *Store) poolShell() string {
	if !canPool {
		return ""
	}
	dir := shellQuote(filepath.Join(s.repo.StateDir(), "spare"))
	mark := shellQuote(filepath.Join(s.repo.StateDir(), "spare.probed"))
	probe := shellQuote(filepath.Join(s.repo.StateDir(), "spare", "probe-")) + "$$"
	pack := shellQuote(filepath.Join(s.repo.CommonDir, "objects", "pack", "tmp_pool_probe_")) + "$$"
	lock := shellQuote(filepath.Join(s.repo.CommonDir, "refs", "ideate-pool-probe-")) + "$$.lock"
	ks := make([]string, poolSlots)
	for k := range ks {
		ks[k] = strconv.Itoa(k)
	}
	return "; { [ -d " + dir + " ] || mkdir -p " + dir + "; } && { [ -e " + mark + " ] || { : >> " + probe +
		" && ln " + probe + " " + pack + " && ln " + probe + " " + lock + "; r=$?; rm -f " + probe + " " + pack + " " + lock +
		"; [ $r = 0 ] && : > " + mark + "; }; } && for k in " + strings.Join(ks, " ") +
		"; do [ -e " + dir + "/pool-$k ] || : >> " + dir + "/pool-$k; done"
}
