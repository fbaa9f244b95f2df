package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ideate/git-ideate/internal/osproc"
)

// A long-lived Store (the MCP server) merges a small set of packs itself
// instead of having git pack-objects do it: the roll-ups' processes used
// about as much CPU as the server's own calls (3,000 calls of append,
// create and claim in one server on the root file system: the server
// 1.3–1.6 ms of CPU a call, its children 1.0–1.3 ms more), and on a
// 2-core machine that is taken from the calls. In process a roll-up reads
// the merged packs' objects through the Store's reader and writes them as
// one pack the way a write does (spare files, often recycled ones), then
// retires the merged packs at once. Measured against git doing it, same
// run: the children's CPU a call 0.79–0.82 ms against 0.96–1.03 (what is
// left is mostly git pack-refs), the wall time a call 6 % less; bench/mcpab
// medians within noise (0.97–1.03). Its pack holds no deltas, as a
// write's does not, so only small sets are merged here (the bounds
// below): larger ones, rarer by the geometric choice, go to git
// pack-objects, which makes deltas of everything it merges.
//
// rollUpHereObjects and rollUpHereBytes bound the packs a long-lived
// Store merges itself: their objects, as their indexes count them, and
// the bytes of their .pack files. Larger sets go to git pack-objects.
var (
	rollUpHereObjects int64 = 2048
	rollUpHereBytes   int64 = 1 << 20
)

// rollUpsHere counts the roll-ups merged in process (tests).
var rollUpsHere atomic.Int64

// rollUpHere merges the packs named (file names in objects/pack) in this
// process, in the background, and reports whether it started: only a
// long-lived Store does, and only for a set within the bounds above.
func (m *maintenance) rollUpHere(merged []string) bool {
	s := m.store
	if s.spareWant <= 0 || !rollUpSmall(filepath.Join(s.repo.CommonDir, "objects", "pack"), merged) {
		return false
	}
	dir := s.repo.StateDir()
	lock := filepath.Join(dir, "maintenance.lock")
	if err := os.MkdirAll(dir, 0o777); err != nil || !breakStaleMaintenance(lock) {
		return true // another roll-up runs: nothing to start
	}
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return true
	}
	f.WriteString("roll-up\n")
	lockStarted(f, os.Getpid())
	f.Close()
	m.background(func() {
		if m.mergeHere(merged) {
			rollUpsHere.Add(1)
		}
		m.finishDirect(lock)
	})
	return true
}

// rollUpSmall reports whether the packs named in pdir are few enough
// objects and bytes to merge in process.
func rollUpSmall(pdir string, merged []string) bool {
	var objects, size int64
	for _, name := range merged {
		base := filepath.Join(pdir, strings.TrimSuffix(name, ".pack"))
		idx, err := os.Lstat(base + ".idx")
		if err != nil {
			return false
		}
		pack, err := os.Lstat(base + ".pack")
		if err != nil {
			return false
		}
		objects += idxObjects(idx.Size())
		size += pack.Size()
		if objects > rollUpHereObjects || size > rollUpHereBytes {
			return false
		}
	}
	return true
}

// mergeHere writes every object of the packs named into one new pack,
// leaves the "rolled-up" mark a roll-up's shell leaves, and finishes the
// roll-up as the next commit would (finishRollUp). Any failure leaves the
// packs as they were.
func (m *maintenance) mergeHere(merged []string) bool {
	s := m.store
	db, err := s.db()
	if err != nil {
		return false
	}
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	var objs []pendObj
	seen := map[Hash]bool{}
	for _, name := range merged {
		idx, err := os.ReadFile(filepath.Join(pdir, strings.TrimSuffix(name, ".pack")+".idx"))
		if err != nil {
			return false
		}
		names, ok := idxNames(idx)
		if !ok {
			return false
		}
		for i := 0; i < len(names); i += 20 {
			var h Hash
			copy(h[:], names[i:i+20])
			if seen[h] {
				continue
			}
			seen[h] = true
			t, data, err := db.Read(h)
			if err != nil {
				return false
			}
			objs = append(objs, pendObj{h, t, bytes.Clone(data)})
		}
	}
	keep, held, err := s.writePack(objs)
	if err != nil || keep == "" {
		return false // a git gc runs, or the same pack is there already
	}
	base := strings.TrimSuffix(keep, ".keep")
	// Its objects are all in the merged packs too, which no .keep
	// protected: the new pack needs none.
	os.Remove(keep)
	if held == nil || db.AddPackBytes(base, held.idx, held.data) != nil {
		db.AddPack(base)
	}
	dir := s.repo.StateDir()
	list := filepath.Join(dir, "rollup.list")
	if s.writeState(list, []byte(strings.Join(merged, "\n")+"\n+"+filepath.Base(base)+".pack\n")) != nil {
		return false
	}
	if osproc.Rename(list, filepath.Join(dir, "rolled-up")) != nil {
		os.Remove(list)
		return false
	}
	m.finishRollUp()
	return true
}
