package gitstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
)

// Worktree is one working tree git knows of, as `git worktree list
// --porcelain` describes it.
type Worktree struct {
	Path   string
	Head   Hash
	Branch string // full ref name; "" when detached
	// Locked: git will neither prune nor remove it without --force
	// twice; LockReason is git's note ("initializing" while `git worktree
	// add` runs, and left so by one that was killed).
	Locked     bool
	LockReason string
}

// WorktreeAttempts bounds the runs of a `git worktree` command that fails
// beside another one: git dies on an administrative directory a concurrent
// add is still writing, and prune may remove one an add has just made.
// The same command a few milliseconds later succeeds.
const WorktreeAttempts = 12

// RetryWorktree runs op until it succeeds, fails with anything but
// GIT_FAILED, ctx ends, or WorktreeAttempts runs have failed; before each
// new run, undo (when not nil) clears the failed one, and a random pause
// lets the command it collided with finish.
func RetryWorktree(ctx context.Context, op, undo func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || attempt == WorktreeAttempts || ctx.Err() != nil || !apperr.Is(err, GitFailed) {
			return err
		}
		if undo != nil {
			if err := undo(); err != nil {
				return err
			}
		}
		if err := sleep(ctx, time.Duration(rand.Int64N(int64(attempt)*int64(5*time.Millisecond)))); err != nil {
			return err
		}
	}
}

// Worktrees lists the repository's working trees, the main one first.
func (s *Store) Worktrees(ctx context.Context) ([]Worktree, error) {
	var out []byte
	err := RetryWorktree(ctx, func() (err error) {
		out, err = s.RunGit(ctx, "", "--git-dir="+s.repo.CommonDir, "worktree", "list", "--porcelain", "-z")
		return err
	}, nil)
	if err != nil {
		return nil, err
	}
	var list []Worktree
	cur := &Worktree{} // what a line before the first worktree sets
	for _, f := range strings.Split(string(out), "\x00") {
		switch key, val, _ := strings.Cut(f, " "); key {
		case "worktree":
			list = append(list, Worktree{Path: val})
			cur = &list[len(list)-1]
		case "HEAD":
			cur.Head, _ = ParseHash(val)
		case "branch":
			cur.Branch = val
		case "locked":
			cur.Locked, cur.LockReason = true, val
		}
	}
	return list, nil
}

// FindWorktree returns the working tree at path (compared after resolving
// symlinks), or nil.
func (s *Store) FindWorktree(ctx context.Context, path string) (*Worktree, error) {
	list, err := s.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	want := CanonicalPath(path)
	for i := range list {
		if CanonicalPath(list[i].Path) == want {
			return &list[i], nil
		}
	}
	return nil, nil
}

// CanonicalPath is p absolute with its symlinks resolved (its parent's
// when p is gone), so two spellings of one worktree compare equal.
func CanonicalPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	// The directory may be gone: resolve its parent.
	if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(r, filepath.Base(abs))
	}
	return abs
}

// AddWorktree creates a linked working tree at path on branch: a new
// branch at base when it does not exist, else the existing branch at its
// tip; an empty branch makes a detached worktree at base. It runs `git
// worktree add --no-checkout` (git's "initializing" lock is held only
// while it writes the administrative files), then CompleteCheckout, so a
// process killed during the long checkout leaves an unlocked worktree
// that CompleteCheckout or RemoveWorktree finish. A detached add, whose
// path is the caller's alone, is run again after a collision.
func (s *Store) AddWorktree(ctx context.Context, path, branch string, base Hash) error {
	args := []string{"--git-dir=" + s.repo.CommonDir, "worktree", "add", "--quiet", "--no-checkout"}
	var undo func() error // set where a failed add may be run again
	switch {
	case branch == "":
		args = append(args, "--detach", path, base.String())
		undo = func() error { return s.DiscardWorktree(ctx, path) }
	case !ValidRefName("refs/heads/" + branch):
		return apperr.New(apperr.Schema, "%q is not a valid branch name", branch)
	default:
		exists, err := s.Ref("refs/heads/" + branch)
		if err != nil {
			return err
		}
		if exists == ZeroHash {
			args = append(args, "-b", branch, path, base.String())
		} else {
			args = append(args, path, branch)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create %s", filepath.Dir(path))
	}
	add := func() error {
		if _, err := s.RunGit(ctx, "", args...); err != nil {
			return err
		}
		return s.CompleteCheckout(ctx, path, false)
	}
	if undo == nil {
		return add()
	}
	return RetryWorktree(ctx, add, undo)
}

// CompleteCheckout writes the index and files of the worktree at path
// from its HEAD (`git read-tree --reset -u HEAD`, which moves no ref),
// discarding anything in the tree. With breakLock, an index.lock a killed
// checkout left is removed first: only for a caller that knows no git runs
// there.
func (s *Store) CompleteCheckout(ctx context.Context, path string, breakLock bool) error {
	if breakLock {
		gd, err := WorktreeGitDir(path)
		if err != nil {
			return err
		}
		if err := os.Remove(filepath.Join(gd, "index.lock")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return apperr.Wrap(apperr.Write, err, "cannot remove the stale index.lock of %s", path)
		}
	}
	_, err := s.RunGit(ctx, path, "read-tree", "--reset", "-u", "HEAD")
	return err
}

// RemoveWorktree removes the working tree at path, when git lists it, as
// DiscardWorktree does: its files, uncommitted changes included, and its
// administrative files, even when git left it locked. Its branch is kept.
func (s *Store) RemoveWorktree(ctx context.Context, path string) error {
	wt, err := s.FindWorktree(ctx, path)
	if err != nil || wt == nil {
		return err
	}
	return s.discard(ctx, wt, path)
}

// DiscardWorktree deletes the worktree at path with everything in it and
// its administrative files, whatever state a killed `git worktree add`
// left it in (which `git worktree remove` refuses). Only for a worktree
// nothing was handed out from.
func (s *Store) DiscardWorktree(ctx context.Context, path string) error {
	wt, err := s.FindWorktree(ctx, path)
	if err != nil {
		return err
	}
	return s.discard(ctx, wt, path)
}

// discard is DiscardWorktree of wt (nil: git does not list it) at path.
func (s *Store) discard(ctx context.Context, wt *Worktree, path string) error {
	if wt != nil && wt.Locked {
		if _, err := s.RunGit(ctx, "", "--git-dir="+s.repo.CommonDir, "worktree", "unlock", wt.Path); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(path); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot remove %s", path)
	}
	// The administrative files of a tree whose directory is gone go too.
	return RetryWorktree(ctx, func() error {
		_, err := s.RunGit(ctx, "", "--git-dir="+s.repo.CommonDir, "worktree", "prune")
		return err
	}, nil)
}

// WorktreeGitDir is the administrative directory of the linked worktree
// at path (where its HEAD and index live), read from its .git file.
func WorktreeGitDir(path string) (string, error) {
	r, err := Discover(path)
	if err != nil {
		return "", err
	}
	if r.GitDir == r.CommonDir || CanonicalPath(r.WorkTree) != CanonicalPath(path) {
		return "", apperr.New(apperr.NotARepo, "%s is not a linked worktree", path)
	}
	return r.GitDir, nil
}

// LockState takes an exclusive flock on the file name under the per-clone
// state directory (.git/ideate/), waiting until ctx ends, and returns its
// release; the kernel drops it when the process dies.
func (s *Store) LockState(ctx context.Context, name string) (func(), error) {
	f, err := s.lockState(ctx, name)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lockState is LockState returning the flocked file, which the caller
// closes to release it (or passes on to a process that must hold it).
func (s *Store) lockState(ctx context.Context, name string) (*os.File, error) {
	if strings.ContainsAny(name, "/\\") || name == "" || name[0] == '.' {
		return nil, apperr.New(apperr.Schema, "%q is not a lock name", name)
	}
	if err := os.MkdirAll(s.repo.StateDir(), 0o777); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot create %s", s.repo.StateDir())
	}
	f, err := os.OpenFile(filepath.Join(s.repo.StateDir(), name), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot open the lock %s", name)
	}
	if err := osproc.LockContext(ctx, f, osproc.Exclusive); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, apperr.Wrap(apperr.Locked, err, "cannot lock %s", name)
	}
	return f, nil
}
