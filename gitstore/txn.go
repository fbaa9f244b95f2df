package gitstore

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/ideate/git-ideate/apperr"
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
func (s *Store) Transact(ref string, build BuildFunc) (Hash, error) {
	deadline := time.Now().Add(60 * time.Second)
	wait := 100 * time.Microsecond
	for {
		tip, err := s.Ref(ref)
		if err != nil {
			return ZeroHash, err
		}
		h, err := s.CommitOn(ref, tip, build)
		if err == nil || !errors.Is(err, ErrStale) {
			return h, err
		}
		if time.Now().After(deadline) {
			return ZeroHash, apperr.New(apperr.Conflict, "ref %s kept moving; gave up after 60s of retries", ref)
		}
		time.Sleep(wait/2 + rand.N(wait))
		if wait < 4*time.Millisecond {
			wait *= 2
		}
	}
}

// CommitOn is one attempt of Transact from a tip the caller already read:
// it fails with an apperr.Conflict wrapping ErrStale, without retrying, when
// the ref no longer holds tip. This is the primitive of a claim: the swap
// happens only from the head the claimer saw.
func (s *Store) CommitOn(ref string, tip Hash, build BuildFunc) (Hash, error) {
	tree, msg, err := build(tip)
	if err != nil {
		return ZeroHash, err
	}
	sig := s.Identity()
	c := &Commit{Tree: tree, Author: sig, Committer: sig, Message: msg}
	if tip != ZeroHash {
		c.Parents = []Hash{tip}
	}
	h, err := s.WriteCommit(c)
	if err != nil {
		return ZeroHash, err
	}
	if err := s.UpdateRef(ref, h, tip); err != nil {
		return ZeroHash, err
	}
	s.maint.committed()
	return h, nil
}
