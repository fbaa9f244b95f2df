package gitstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore/odb"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// Store is the one door to git for everything above it: objects, trees,
// commits, refs and maintenance of one repository. It is safe for concurrent
// use by several goroutines; several processes may use the same repository
// at once, and git itself may run beside them.
type Store struct {
	repo *Repo
	cfg  *Config

	refs       *refReader
	lockPolicy LockPolicy

	odbOnce sync.Once
	odb     *odb.DB
	odbErr  error

	ident     Signature
	identOnce sync.Once

	maint maintenance
	cache objCache

	pend pending
	sync syncSet

	// Now is the clock; tests replace it.
	Now func() time.Time
}

// Options are the settings of a Store that its caller decides. git ideate's
// own settings (git config ideate.*) are parsed and validated by package
// config, and the composition root passes them here; gitstore never reads
// them itself. git's own settings (gc.auto, gc.autoPackLimit, user.*,
// remote.*) it reads from the git configuration, the way git does.
type Options struct {
	// Lock is the ref lock policy; zero fields take its defaults.
	Lock LockPolicy
	// Maintenance starts the background repack past gc.auto (see
	// maintenance) and the background pack-refs of PackRefsIfLoose.
	Maintenance bool
	// Config is the repository's git configuration, when the caller has
	// already read it (LoadConfig); nil reads it.
	Config *Config
}

// DefaultOptions are the settings of a Store opened without a
// configuration: the default lock policy, and background maintenance on
// unless $GIT_IDEATE_NO_MAINTENANCE is set (a switch for a whole process
// tree: tests and benchmarks set it, and package config starts from it).
func DefaultOptions() Options {
	return Options{Maintenance: os.Getenv("GIT_IDEATE_NO_MAINTENANCE") == ""}
}

// Open discovers the repository containing dir and opens a Store on it
// with DefaultOptions.
func Open(dir string) (*Store, error) {
	r, err := Discover(dir)
	if err != nil {
		return nil, err
	}
	s := OpenRepo(r, DefaultOptions())
	if err := s.cfg.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenRepo opens a Store on an already discovered repository with opt. It
// touches no file beyond the git configuration (none when opt.Config is
// set).
func OpenRepo(r *Repo, opt Options) *Store {
	cfg := opt.Config
	if cfg == nil {
		cfg = LoadConfig(r)
	}
	s := &Store{
		repo:       r,
		cfg:        cfg,
		refs:       &refReader{dir: r.CommonDir},
		lockPolicy: opt.Lock,
		sync:       readSyncSet(cfg, opt.Lock.Fsync),
		Now:        time.Now,
	}
	s.maint = maintenance{
		enabled:   opt.Maintenance,
		threshold: cfg.Int("gc", "auto", 6700),
		store:     s,
		listed:    -1,
	}
	return s
}

// Repo returns the repository's location.
func (s *Store) Repo() *Repo { return s.repo }

// Config returns the merged git configuration read at Open.
func (s *Store) Config() *Config { return s.cfg }

// Close releases mapped pack files.
func (s *Store) Close() error {
	if s.odb != nil {
		return s.odb.Close()
	}
	return nil
}

func (s *Store) db() (*odb.DB, error) {
	s.odbOnce.Do(func() {
		s.odb, s.odbErr = odb.Open(s.repo.CommonDir + "/objects")
	})
	return s.odb, s.odbErr
}

// ReadObject returns the type and content of an object.
func (s *Store) ReadObject(h Hash) (oid.ObjectType, []byte, error) {
	if o, ok := s.cache.get(h); ok {
		return o.t, o.data, nil
	}
	if o, ok := s.pendingObject(h); ok {
		return o.t, o.data, nil
	}
	db, err := s.db()
	if err != nil {
		return oid.InvalidObject, nil, err
	}
	t, data, err := db.Read(h)
	if err != nil {
		if errors.Is(err, odb.ErrNotFound) {
			return t, nil, apperr.Wrap(apperr.NotFound, err, "object %s is missing from the repository", h)
		}
		return t, nil, fmt.Errorf("read object %s: %w", h, err)
	}
	s.cache.put(h, t, data)
	return t, data, nil
}

func (s *Store) readTyped(h Hash, want oid.ObjectType) ([]byte, error) {
	t, data, err := s.ReadObject(h)
	if err != nil {
		return nil, err
	}
	if t != want {
		return nil, fmt.Errorf("object %s is a %s, not a %s", h, t, want)
	}
	return data, nil
}

// ReadBlob returns a blob's content.
func (s *Store) ReadBlob(h Hash) ([]byte, error) { return s.readTyped(h, oid.BlobObject) }

// ReadTree returns a tree's entries in stored order.
func (s *Store) ReadTree(h Hash) ([]TreeEntry, error) {
	data, err := s.readTyped(h, oid.TreeObject)
	if err != nil {
		return nil, err
	}
	return ParseTree(data)
}

// ReadCommit returns a parsed commit.
func (s *Store) ReadCommit(h Hash) (*Commit, error) {
	data, err := s.readTyped(h, oid.CommitObject)
	if err != nil {
		return nil, err
	}
	return ParseCommit(data)
}

// WriteObject stores an object and returns its name. Inside a
// transaction (Transact, TransactGuarded, CommitOn) the objects are stored
// together as one pack before the ref moves (see pending); outside one,
// as a loose object (see writeLoose). Either way the object is readable
// through this Store at once, and on disk before this Store moves a ref or
// starts git.
func (s *Store) WriteObject(t oid.ObjectType, data []byte) (Hash, error) {
	h := oid.ComputeHash(t, data)
	if !s.buffer(h, t, data) {
		if err := s.writeLoose(h, t, data); err != nil {
			return ZeroHash, err
		}
		s.maint.wrote()
	}
	s.cache.put(h, t, data)
	return h, nil
}

// WriteBlob stores a blob.
func (s *Store) WriteBlob(data []byte) (Hash, error) { return s.WriteObject(oid.BlobObject, data) }

// WriteTree sorts and stores a tree.
func (s *Store) WriteTree(entries []TreeEntry) (Hash, error) {
	return s.WriteObject(oid.TreeObject, EncodeTree(entries))
}

// WriteCommit stores a commit. A commit git fsck --strict would reject
// (a NUL in the message, a malformed identity) is refused with
// apperr.Internal and nothing is written.
func (s *Store) WriteCommit(c *Commit) (Hash, error) {
	if err := checkCommit(c); err != nil {
		return ZeroHash, err
	}
	return s.WriteObject(oid.CommitObject, EncodeCommit(c))
}

// Ref returns the commit a ref names, or ZeroHash when it does not exist.
func (s *Store) Ref(name string) (Hash, error) {
	if !ValidRefName(name) {
		return ZeroHash, apperr.New(apperr.Schema, "%q is not a valid ref name", name)
	}
	return s.refs.read(name)
}

// Refs lists the refs under prefix ("refs/ideate/board/items/"), sorted.
func (s *Store) Refs(prefix string) ([]Ref, error) {
	return s.refs.list(dirPrefix(prefix))
}

// dirPrefix is prefix ending in "/".
func dirPrefix(prefix string) string {
	if strings.HasSuffix(prefix, "/") {
		return prefix
	}
	return prefix + "/"
}

// RefPartsVersion is Refs(prefix) in two parts, each sorted by name: the
// packed refs (the store's shared parsed copy: read only) and the loose
// refs, whose values replace packed ones, with the version of packed-refs
// (a name of its content) the packed part was read from. A caller that
// lists thousands of refs often (a board's claims) keeps the packed part
// while the version stays.
func (s *Store) RefPartsVersion(prefix string) (packed, loose []Ref, version string, err error) {
	return s.refs.listParts(dirPrefix(prefix))
}

// PackedRefsVersion is the packed part of RefPartsVersion alone: no loose
// ref is read.
func (s *Store) PackedRefsVersion(prefix string) (packed []Ref, version string, err error) {
	return s.refs.packedUnder(dirPrefix(prefix))
}

// LooseRefsAt lists the loose refs under prefix, sorted by name, when
// packed-refs still holds what it held at version (from RefPartsVersion);
// ok is false when it does not. It hashes packed-refs instead of parsing it.
func (s *Store) LooseRefsAt(prefix, version string) (loose []Ref, ok bool, err error) {
	now, key, err := s.refs.packedVersionNow()
	if err != nil || version == "" || now != version {
		return nil, false, err
	}
	_, loose, _, err = s.refs.listOnce(dirPrefix(prefix), false)
	if err != nil {
		return nil, false, err
	}
	// A pack-refs may have moved a loose ref into packed-refs meanwhile.
	if after, _ := statKey(filepath.Join(s.refs.dir, "packed-refs")); after != key {
		return nil, false, nil
	}
	return loose, true, nil
}

// UpdateRef moves name from oldH to newH atomically with git's lockfile
// protocol: oldH == ZeroHash creates (the ref must not exist), newH ==
// ZeroHash deletes. It returns an apperr.Conflict wrapping ErrStale when
// the ref does not hold oldH, and apperr.Locked when its lock stays held.
//
// ctx bounds the wait for a held lock (and the git process a delete runs);
// when it is done first, UpdateRef returns ctx.Err() and the ref is as it was.
func (s *Store) UpdateRef(ctx context.Context, name string, newH, oldH Hash) error {
	return s.updateRefChecked(ctx, name, newH, oldH, nil)
}

// Identity is the signature commits are made with: $GIT_COMMITTER_* or
// $GIT_AUTHOR_*, else user.name/user.email from git config, else the fixed
// tool identity "git-ideate <git-ideate@localhost>". A missing identity
// never stops a write.
func (s *Store) Identity() Signature {
	s.identOnce.Do(func() {
		name, _ := s.cfg.Get("user", "name")
		email, _ := s.cfg.Get("user", "email")
		s.ident = Signature{
			Name:  cmp.Or(sanitizeIdent(cmp.Or(os.Getenv("GIT_COMMITTER_NAME"), os.Getenv("GIT_AUTHOR_NAME"), name)), "git-ideate"),
			Email: cmp.Or(sanitizeIdent(cmp.Or(os.Getenv("GIT_COMMITTER_EMAIL"), os.Getenv("GIT_AUTHOR_EMAIL"), email)), "git-ideate@localhost"),
		}
	})
	sig := s.ident
	sig.When = s.Now()
	return sig
}

func sanitizeIdent(v string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || unicode.IsControl(r) { // newline and NUL among them
			return -1
		}
		return r
	}, v))
}
