package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ideate/git-ideate/internal/osproc"
)

// rollUpDirect is a long-lived Store's roll-up (the MCP server's): git
// pack-objects alone, started by this process, which does the rest
// itself once git has ended — the mark, the removal of the input and of
// the lock — instead of a shell running git, mv and rm. A shell still
// runs, after git, only when there is something no call should do: the
// clone's pool of spares has empty slots to fill (a new inode each; the
// CLI calls draw on the pool), or CLI calls left retired files to free.
// Every process a roll-up starts cost about a millisecond of CPU here,
// beside the calls, and the server's roll-ups rarely need either (its
// writes take recycled spares first). A CLI call, which exits when it has
// answered, keeps the shell: it finishes the roll-up alone.
//
// If this process is killed while git runs, git finishes its pack and
// leaves the merged packs where they are (no mark, so nothing is deleted);
// the lock names git's pid and is stale once git has ended. It reports
// whether git was started; f is the lock, which it completes with git's
// pid.
func (m *maintenance) rollUpDirect(f *os.File, pdir, lock, list, input string) bool {
	in, err := os.Open(input)
	if err != nil {
		return false
	}
	var out bytes.Buffer
	cmd := detached("git", "--git-dir="+m.store.repo.CommonDir, "pack-objects", "-q", "--delta-base-offset", filepath.Join(pdir, "pack"))
	cmd.Stdin, cmd.Stdout = in, &out
	if err := cmd.Start(); err != nil {
		in.Close()
		return false
	}
	in.Close()
	rollUpsDirect.Add(1)
	lockStarted(f, cmd.Process.Pid)
	m.background(func() {
		err := cmd.Wait()
		name := strings.TrimSpace(out.String())
		if err == nil && len(name) == 40 && strings.Trim(name, "0123456789abcdef") == "" {
			// The mark, as the shell leaves it: the list and the new pack.
			if a, err := os.OpenFile(list, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				_, werr := a.WriteString("+pack-" + name + ".pack\n")
				if cerr := a.Close(); werr == nil && cerr == nil {
					osproc.Rename(list, filepath.Join(m.store.repo.StateDir(), "rolled-up"))
				}
			}
		}
		os.Remove(list) // gone already unless something failed
		os.Remove(input)
		m.finishDirect(lock)
	})
	return true
}

// finishDirect ends a long-lived Store's roll-up: a shell fills the
// clone's pool and frees what CLI calls retired, when there is any of
// that to do, and removes the lock; else this process removes it.
func (m *maintenance) finishDirect(lock string) {
	if m.store.poolShort() || m.store.sharedRetiredLeft() {
		sh := detached("sh", "-c", strings.TrimPrefix(m.store.finishShell(lock), "; "))
		if sh.Start() == nil {
			rollUpShells.Add(1)
			sh.Wait()
			return
		}
	}
	os.Remove(lock) // last: its removal says the roll-up is done
}

// poolShort reports whether a slot of the clone's pool of spares is
// empty (one listing of the spare directory).
func (s *Store) poolShort() bool {
	if !canPool {
		return false
	}
	d, err := os.Open(filepath.Join(s.repo.StateDir(), "spare"))
	if err != nil {
		return true
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, "pool-") {
			n++
		}
	}
	return n < poolSlots
}

// sharedRetiredLeft reports whether CLI calls left retired files for a
// roll-up's shell to free.
func (s *Store) sharedRetiredLeft() bool {
	d, err := os.Open(s.sharedRetiredDir())
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(1)
	return len(names) > 0
}

// rollUpsDirect counts the roll-ups that started git alone, rollUpShells
// the shells they started after it (tests).
var rollUpsDirect, rollUpShells atomic.Int64
