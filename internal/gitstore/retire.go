package gitstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ideate/git-ideate/internal/osproc"
)

// Retiring a replaced file: freeing a file's data blocks is, on the CI
// machine's root file system (ext4 without a journal, mounted with
// "discard"), a discard request the deleting system call waits for. Every
// ref update renames the lock over the ref, and the replaced ref file's
// block is freed inside that rename: 0.17–0.30 ms a rename in a quiet
// directory, against 0.02–0.06 ms when the replaced file has no block,
// and one discard per rename in /sys/block/<dev>/stat (300 renames, 300
// discards). With a journal the discards wait for the journal's commit;
// without one they happen in the caller's time.
//
// So a write keeps the inode alive past its call: just before the rename
// it links the current ref file into <common dir>/ideate/retired, and
// the rename only drops a name. The file's blocks are freed when that
// link is removed, outside a call: by the long-lived Store's spares
// goroutine right after the write (the MCP server, which makes a spare of
// it instead when no one else holds it: see spares.recycle), or by the next
// background roll-up or repack (a CLI call, which only retires when
// maintenance is on). A roll-up's merged packs are moved there the same
// way when the next commit takes them out of objects/pack.
//
// A retired file is nothing but a name for an inode nobody else names any
// more (or, when a rename failed after the link, a second name of the
// current ref file): anyone may remove any of them at any time, and git
// never looks there. The directory holds at most retiredSlots names: a
// file takes the first free slot from a random one on; when the
// retireTries slots tried are taken the file is freed in the caller's
// time, as before.
const retiredSlots = 256

// retireTries is how many slots a retirement tries: from a random one
// on, in order, so a free slot near it is found even when many are taken.
const retireTries = 16

// sharedRetiredDir is where the replaced files of short-lived processes
// wait to be freed (a roll-up's shell removes what it holds).
func (s *Store) sharedRetiredDir() string { return filepath.Join(s.repo.StateDir(), "retired") }

// retiredDir is where this Store's replaced files wait: the shared
// directory, or for a Store with spares of its own (the MCP server) a
// directory of its own, <spare dir>/<pid>-<store>-retired, which no
// other process empties (a shell's rm -f of the shared one's names does
// not touch a directory), so that its spares goroutine can make spares of
// them where they are (see spares.recycle).
func (s *Store) retiredDir() string {
	if sp := s.spares(); sp != nil && !sp.pooled {
		return sp.held
	}
	return s.sharedRetiredDir()
}

// retiring reports whether this Store's replaced files wait in the
// retired directory, and who frees them: its spares goroutine (sp non-nil)
// or a later roll-up (maintenance on). Neither: they are freed at once.
func (s *Store) retiring() (sp *spares, ok bool) {
	if !canRetire {
		return nil, false
	}
	if sp := s.spares(); sp != nil && !sp.pooled {
		if sp.isClosed() {
			return nil, false // closed (the process ends): freed at once
		}
		return sp, true
	}
	return nil, s.maint.enabled
}

// keepReplaced links the file at path (a ref about to be replaced) into
// the retired directory and returns the link's name, "" when it did not
// (no such file, no slot free, or not retiring). The caller passes the
// name to retired once the replacement is done.
func (s *Store) keepReplaced(path string) string {
	if _, ok := s.retiring(); !ok {
		return ""
	}
	return s.intoSlot(func(slot string) error { return os.Link(path, slot) })
}

// retireFile moves the file at path (a merged pack's file) into the
// retired directory, or removes it when it cannot; it reports whether
// path is gone.
func (s *Store) retireFile(path string) bool {
	if _, ok := s.retiring(); ok && osproc.HasRenameNoReplace {
		if name := s.intoSlot(func(slot string) error { return osproc.RenameNoReplace(path, slot) }); name != "" {
			s.retired(name)
			return true
		}
	}
	return os.Remove(path) == nil
}

// intoSlot runs put with slots of the retired directory, from a random
// one on, until one is free, making the directory when it is missing. In
// a Store's own directory the names are a count instead: nobody else
// takes them.
func (s *Store) intoSlot(put func(slot string) error) string {
	dir := s.retiredDir()
	sp := s.spares()
	own := sp != nil && !sp.pooled
	made := false
	first := rand.N(retiredSlots)
	for i := 0; i < retireTries; i++ {
		var slot string
		if own {
			slot = filepath.Join(dir, strconv.FormatInt(sp.heldN.Add(1), 36))
		} else {
			slot = filepath.Join(dir, strconv.FormatUint(uint64((first+i)%retiredSlots), 16))
		}
		err := put(slot)
		switch {
		case err == nil:
			return slot
		case errors.Is(err, os.ErrExist):
			continue // taken: another slot
		case errors.Is(err, os.ErrNotExist) && !made:
			// The directory is missing (first use, or removed by hand),
			// or the file is: making the directory tells which.
			if _, serr := os.Stat(dir); serr == nil || mkdirAll(dir) != nil {
				return ""
			}
			made = true
			i--
		default:
			return ""
		}
	}
	return ""
}

// retired hands the name of a retired file to whoever frees it: the
// spares goroutine, which removes it after the call, or (nil spares) the
// next roll-up.
func (s *Store) retired(name string) {
	if name == "" {
		return
	}
	if sp, _ := s.retiring(); sp != nil {
		sp.reapLater(name)
	}
}

// finishShell is the shell a background roll-up or repack ends with: it
// refills the pool of shared spares (poolShell), then, in one rm, frees
// every retired file and removes the files named in last (the maintenance
// lock last of all: its removal says the job is done).
func (s *Store) finishShell(last ...string) string {
	cmd := s.poolShell() + "; rm -f " + shellQuote(s.sharedRetiredDir()) + "/*"
	for _, f := range last {
		cmd += " " + shellQuote(f)
	}
	return cmd
}
