package gitstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
)

// ErrStale is wrapped by the apperr.Conflict error UpdateRef returns when
// the ref no longer holds the expected old value.
var ErrStale = errors.New("ref changed since it was read")

// errMoved is the apperr.Conflict wrapping ErrStale for ref, which moved
// while (the rest of the sentence) something was done from its old value.
func errMoved(ref, while string) error {
	return &apperr.Error{Code: apperr.Conflict, Msg: fmt.Sprintf("ref %s moved while %s", ref, while), Err: ErrStale}
}

// LockPolicy governs waiting for and breaking <ref>.lock files.
//
// git ideate holds <ref>.lock for microseconds, with an flock(2) on it,
// and marks it (lockMode). A lock file is stale, and is
// removed, only when all three are true: git ideate made it (the mark), nobody
// holds an flock on it (its creator died), and it is older than
// StaleAfter. A lock git made is never broken, however old: git never
// flocks, holds a ref's lock for as long as its transaction is open (a
// `git pack-refs` prunes a loose ref under it, a stopped or starved git
// longer), and acts on what it checked under the lock when it commits, so
// a swap made after breaking it would be undone while its writer believed
// it had landed. A lock that is held, young or not ours is waited for
// until Timeout and then reported as apperr.Locked naming the file.
type LockPolicy struct {
	Timeout    time.Duration // how long to wait for a held lock (default DefaultLockTimeout)
	StaleAfter time.Duration // minimum age of an unheld lock before it is broken (default DefaultStaleAfter)
	Fsync      bool          // fsync every file and directory written, whatever core.fsync says (see syncSet)
}

// The defaults of LockPolicy.
const (
	DefaultLockTimeout = 10 * time.Second
	DefaultStaleAfter  = time.Second
)

// lockMode is the mode git ideate creates a lock file with, its mark:
// writable by nobody (the file's creator writes through the descriptor
// it opened). git creates its locks with 0666 less the umask, writable by
// their owner. The mark comes with the file and stays until it goes, so
// a lock of ours left by a writer killed anywhere is known as ours,
// without a file more per update. A ref git ideate wrote keeps the mode.
const lockMode = 0o444

func (p LockPolicy) withDefaults() LockPolicy {
	if p.Timeout <= 0 {
		p.Timeout = DefaultLockTimeout
	}
	if p.StaleAfter <= 0 {
		p.StaleAfter = DefaultStaleAfter
	}
	return p
}

// updateRefChecked is UpdateRef that, holding the ref's lock and having
// found oldH, runs check (when set) and gives up with its error.
func (s *Store) updateRefChecked(ctx context.Context, name string, newH, oldH Hash, check func() error) error {
	if !ValidRefName(name) {
		return apperr.New(apperr.Schema, "%q is not a valid ref name", name)
	}
	if newH == ZeroHash {
		return s.deleteRef(ctx, name, oldH)
	}
	pol := s.lockPolicy.withDefaults()
	path := filepath.Join(s.repo.CommonDir, filepath.FromSlash(name))
	lockPath := path + ".lock"
	// The pack of the objects the ref is to name is written while the
	// lock is taken and the ref read, and put in place after (see flush).
	staged := make(chan *packFiles, 1)
	go func() { staged <- s.stagePack() }()
	flushed := false
	defer func() {
		if !flushed {
			(<-staged).discard()
		}
	}()
	f, err := acquireLock(ctx, lockPath, pol)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.Remove(lockPath)
		}
		f.Close()
	}()
	cur, err := s.refs.readExact(name)
	if err != nil {
		return err
	}
	if cur != oldH {
		return errMoved(name, "this update was prepared")
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	// The objects the ref is to name go to disk last, holding its lock,
	// so their pack appears only renames before the ref names them: a
	// `git repack -a -d` cannot take them as unreachable in between
	// unless it lists the pack and reads the refs within those
	// microseconds (see flush).
	flushed = true
	keep, err := s.flush(<-staged)
	if err != nil {
		return err
	}
	defer s.dropKeep(keep)
	if _, err := f.WriteString(newH.String() + "\n"); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s", lockPath)
	}
	if s.sync.ref {
		if err := f.Sync(); err != nil {
			return apperr.Wrap(apperr.Write, err, "cannot fsync %s", lockPath)
		}
	}
	if runtime.GOOS == "windows" {
		// Where a read-only file cannot be renamed over, the ref is
		// left writable, as git leaves its own.
		f.Chmod(0o666)
	}
	if err := os.Rename(lockPath, path); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot rename %s into place", lockPath)
	}
	done = true
	s.sync.syncDir(filepath.Dir(path))
	return nil
}

// acquireLock creates lockPath exclusively and flocks it, waiting for (and
// breaking stale) locks per pol. It gives up with ctx.Err() when ctx is
// done while it waits.
func acquireLock(ctx context.Context, lockPath string, pol LockPolicy) (*os.File, error) {
	deadline := time.Now().Add(pol.Timeout)
	wait := 50 * time.Microsecond
	for {
		f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, lockMode)
		if err == nil {
			// A breaker that found it unheld and old (this process
			// stopped since it made it) may flock it first, or have
			// removed it before this flock: then it is another's to go.
			err = osproc.Lock(f, osproc.Exclusive|osproc.NoWait)
			if err == nil {
				held, err1 := f.Stat()
				now, err2 := os.Stat(lockPath)
				if err1 == nil && err2 == nil && os.SameFile(held, now) {
					return f, nil
				}
			}
			f.Close()
			if err != nil && !errors.Is(err, osproc.ErrLocked) {
				os.Remove(lockPath)
				return nil, apperr.Wrap(apperr.Write, err, "cannot take %s", lockPath)
			}
			continue
		}
		switch {
		case errors.Is(err, os.ErrExist):
			if breakStaleLock(lockPath, pol.StaleAfter) {
				continue
			}
		case errors.Is(err, os.ErrNotExist):
			if err := mkdirAll(filepath.Dir(lockPath)); err != nil {
				return nil, apperr.Wrap(apperr.Write, err, "cannot create %s", filepath.Dir(lockPath))
			}
			continue
		default:
			return nil, apperr.Wrap(apperr.Write, err, "cannot create %s", lockPath)
		}
		if time.Now().After(deadline) {
			age := "unknown age"
			if fi, err := os.Stat(lockPath); err == nil {
				age = time.Since(fi.ModTime()).Round(time.Millisecond).String() + " old"
			}
			return nil, apperr.New(apperr.Locked,
				"%s is held by another process (%s); if no git or git-ideate process is running, remove that file", lockPath, age)
		}
		// Jittered exponential backoff, capped at 5ms.
		if err := sleep(ctx, wait/2+rand.N(wait)); err != nil {
			return nil, err
		}
		if wait < 5*time.Millisecond {
			wait *= 2
		}
	}
}

// breakStaleLock removes lockPath when git ideate made it, it is unheld
// and older than staleAfter (see LockPolicy), and reports whether it did.
func breakStaleLock(lockPath string, staleAfter time.Duration) bool {
	fi, err := os.Stat(lockPath)
	if err != nil {
		return errors.Is(err, os.ErrNotExist) // gone: retry at once
	}
	if time.Since(fi.ModTime()) < staleAfter {
		return false
	}
	if fi.Mode().Perm()&0o200 != 0 {
		return false // git's: never broken
	}
	f, err := os.Open(lockPath)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	if err := osproc.Lock(f, osproc.Exclusive|osproc.NoWait); err != nil {
		return false // a live git-ideate process holds it
	}
	// Remove it only if the path still names the inode we flocked: another
	// contender may have broken it and created a fresh lock meanwhile.
	held, err1 := f.Stat()
	now, err2 := os.Stat(lockPath)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		return false
	}
	return os.Remove(lockPath) == nil
}

// deleteRef removes name if it still holds oldH. Deleting may rewrite
// packed-refs, so it is done by git itself (under packed-refs.lock), to
// its end (gitToEnd).
func (s *Store) deleteRef(ctx context.Context, name string, oldH Hash) error {
	cur, err := s.refs.read(name)
	if err != nil {
		return err
	}
	if cur != oldH {
		return errMoved(name, "this delete was prepared")
	}
	if oldH == ZeroHash {
		return nil
	}
	// A writer killed while it held the ref's lock left it; git never
	// breaks one, so the rule every update here follows (an unheld lock
	// older than the stale age is dead) is applied before git runs.
	breakStaleLock(filepath.Join(s.repo.CommonDir, filepath.FromSlash(name))+".lock", s.lockPolicy.withDefaults().StaleAfter)
	// Without the warning about refs named like object names, git reads
	// packed-refs first under the ref's lock; with it, it reads the file
	// while parsing oldH and trusts that copy under the lock while a stat
	// finds the file unchanged, which a rewrite can leave it (same inode,
	// size and second), and would delete a ref that has moved.
	if out, err := s.gitToEnd(ctx, nil, nil, "-c", "core.warnAmbiguousRefs=false", "update-ref", "-d", name, oldH.String()); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if c, _ := s.refs.read(name); c != oldH {
			return errMoved(name, "it was being deleted")
		}
		return apperr.Wrap(apperr.Write, err, "git update-ref -d %s failed: %s", name, firstLine(string(out), err))
	}
	return nil
}

// mkdirAll is os.MkdirAll that survives a concurrent git removing empty
// directories (pack-refs, prune) between our creating a parent and its
// child, or between MkdirAll's EEXIST and its lstat ("file exists").
func mkdirAll(dir string) error {
	var err error
	for i := 0; i < 100; i++ {
		if err = os.MkdirAll(dir, 0o777); err == nil || !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	return err
}
