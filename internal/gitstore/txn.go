package gitstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
)

// BuildFunc computes the next commit of a ref from its current tip (ZeroHash
// when the ref does not exist yet). It returns the new root tree and the
// commit message. It may be called several times, once per tip it is
// offered, and must not have side effects beyond writing objects.
type BuildFunc func(tip Hash) (tree Hash, message string, err error)

// Transact appends one commit to ref: it reads the tip, calls build, writes
// the commit with the tip as its only parent and moves the ref from the tip
// to it. When another writer moved the ref in between, build runs again on
// the new tip, so whatever build checks is checked against the state the
// commit lands on. It returns the new commit.
//
// ctx bounds the whole transaction: it is checked before every attempt and
// cuts short the backoff between attempts and the wait for a held lock;
// a cancelled transaction returns ctx.Err() and leaves the ref as it was
// (objects written by build stay, unreachable, for gc).
func (s *Store) Transact(ctx context.Context, ref string, build BuildFunc) (Hash, error) {
	return s.TransactGuarded(ctx, ref, func(tip Hash) (Hash, string, []Guard, error) {
		tree, msg, err := build(tip)
		return tree, msg, nil, err
	})
}

// Guard is a ref a transaction reads but does not write: the commit lands
// only if the guard still names Want when the ref moves. It makes a
// decision taken on other refs (a claim checks that its dependencies are
// done) part of the compare-and-swap.
type Guard struct {
	Ref  string
	Want Hash
	// Check, when set on a guard whose Ref is the transaction's own ref,
	// runs while that ref's lock is held, just before it moves: a last
	// look at state that other writers change only under this ref's lock
	// (a claim checks its item has no open child; creating a child holds
	// the parent's lock as a guard). Its error aborts the transaction.
	Check func() error
}

// GuardedBuildFunc is a BuildFunc that also names the guards of the commit
// it builds.
type GuardedBuildFunc func(tip Hash) (tree Hash, message string, guards []Guard, err error)

// TransactGuarded is Transact whose commit also depends on guards: their
// locks are held (in name order, before the ref's own) while the ref moves,
// and a guard that no longer names its Want sends build round again, as a
// moved tip does.
func (s *Store) TransactGuarded(ctx context.Context, ref string, build GuardedBuildFunc) (Hash, error) {
	s.begin()
	defer s.end()
	deadline := time.Now().Add(60 * time.Second)
	wait := 100 * time.Microsecond
	for {
		if err := ctx.Err(); err != nil {
			return ZeroHash, err
		}
		tip, err := s.Ref(ref)
		if err != nil {
			return ZeroHash, err
		}
		h, err := s.commitOn(ctx, ref, tip, build)
		if err == nil || !errors.Is(err, ErrStale) {
			return h, err
		}
		if time.Now().After(deadline) {
			return ZeroHash, apperr.New(apperr.Conflict, "ref %s kept moving; gave up after 60s of retries", ref)
		}
		if err := sleep(ctx, wait/2+rand.N(wait)); err != nil {
			return ZeroHash, err
		}
		if wait < 4*time.Millisecond {
			wait *= 2
		}
	}
}

// CommitOn is one attempt of Transact from a tip the caller already read:
// it fails with an apperr.Conflict wrapping ErrStale, without retrying, when
// the ref no longer holds tip. This is the primitive of a claim: the swap
// happens only from the head the claimer saw.
func (s *Store) CommitOn(ctx context.Context, ref string, tip Hash, build BuildFunc) (Hash, error) {
	s.begin()
	defer s.end()
	return s.commitOn(ctx, ref, tip, func(tip Hash) (Hash, string, []Guard, error) {
		tree, msg, err := build(tip)
		return tree, msg, nil, err
	})
}

func (s *Store) commitOn(ctx context.Context, ref string, tip Hash, build GuardedBuildFunc) (Hash, error) {
	tree, msg, guards, err := build(tip)
	if err != nil {
		// A build refuses on what tip holds, and tip may come from a
		// stale parsed packed-refs (its key can repeat; see readExact):
		// a refusal stands only when the ref holds tip on disk, else the
		// attempt lost like a swap would have.
		if cur, rerr := s.refs.readExact(ref); rerr == nil && cur != tip {
			return ZeroHash, errMoved(ref, "this update was prepared")
		}
		return ZeroHash, err
	}
	h, err := s.CommitTree(tree, tip, msg)
	if err != nil {
		return ZeroHash, err
	}
	release, err := s.holdGuards(ctx, ref, guards)
	if err != nil {
		return ZeroHash, err
	}
	var check func() error
	for _, g := range guards {
		if g.Ref == ref && g.Check != nil {
			check = g.Check
		}
	}
	err = s.updateRefChecked(ctx, ref, h, tip, check)
	release()
	if err != nil {
		return ZeroHash, err
	}
	s.maint.committed(ctx)
	return h, nil
}

// holdGuards takes the lock of every guard ref (sorted, so two
// transactions never wait on each other in opposite orders), checks each
// still names its Want, and returns the function that lets them go
// without changing them.
func (s *Store) holdGuards(ctx context.Context, ref string, guards []Guard) (func(), error) {
	if len(guards) == 0 {
		return func() {}, nil
	}
	gs := append([]Guard(nil), guards...)
	sort.Slice(gs, func(i, j int) bool { return gs[i].Ref < gs[j].Ref })
	pol := s.lockPolicy.withDefaults()
	var locks []*os.File
	release := func() {
		for _, f := range locks {
			os.Remove(f.Name())
			f.Close()
		}
	}
	for i, g := range gs {
		if g.Ref == ref || i > 0 && g.Ref == gs[i-1].Ref {
			continue
		}
		if !ValidRefName(g.Ref) {
			release()
			return nil, apperr.New(apperr.Schema, "%q is not a valid ref name", g.Ref)
		}
		path := filepath.Join(s.repo.CommonDir, filepath.FromSlash(g.Ref)) + ".lock"
		f, err := acquireLock(ctx, path, pol)
		if err != nil {
			release()
			return nil, err
		}
		locks = append(locks, f)
		cur, err := s.refs.readExact(g.Ref)
		if err != nil {
			release()
			return nil, err
		}
		if cur != g.Want {
			release()
			return nil, errMoved(g.Ref, "a transaction depended on it")
		}
	}
	return release, nil
}
