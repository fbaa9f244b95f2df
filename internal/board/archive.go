package board

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// ArchiveRef holds the items (and other refs, such as finished tasks')
// that left the live namespace: every ref under ItemsPrefix is advertised
// by every push and fetch, so finished work is folded into this one ref
// and the live refs grow with open work, not with history.
//
// Each commit's tree is
//
//	ideate-format            "ideate-board-archive 1\n"
//	items/<id[24:26]>/<id>   blob "<tip>\n": the item's last commit
//	<kind>/<name>            blob "<tip>\n": another archived ref (tasks/…)
//
// and its parents are the previous archive commit (or, for a sync's
// merge, both sides') and the tips it adds, so every archived chain stays
// reachable, is fetched and pushed with the ref, and `git log <tip>` is the
// item's audit trail as before. An item whose ref exists is live and its
// ref stands over any archive entry: a reopened item gets its ref back.
const ArchiveRef = "refs/ideate/board/archive"

var archiveFormat = gitstore.Format{File: FormatFile, Kind: "ideate-board-archive", Version: 1,
	Code: SchemaVersion, What: "the board's archive"}

// archiveBatch bounds the tips one archive commit adds as parents.
const archiveBatch = 1000

// Archived is one ref folded into the archive: its path in the archive
// tree and the commit its ref was at.
type Archived struct {
	Path []string
	Tip  gitstore.Hash
	data []byte // the entry's blob when it is not "<tip>\n" (references/…)
}

// archiveReferencesPath is where the archive keeps the forward references
// of archived item id, when it has any (archiverefs.go).
func archiveReferencesPath(id string) []string { return []string{"references", id[24:26], id} }

// ArchivePath is where item id lives in the archive tree: two characters
// of its random part as a directory, so a directory holds about n/1024 of
// n archived items.
func ArchivePath(id string) []string { return []string{"items", id[24:26], id} }

// ArchivedAt is the tip item id was archived at in archive commit archive
// (ZeroHash: none there).
func (s *Store) ArchivedAt(archive gitstore.Hash, id string) (gitstore.Hash, error) {
	if checkID(id) != nil {
		return gitstore.ZeroHash, nil
	}
	return ArchivedIn(s.git, archive, ArchivePath(id))
}

// ArchivedIn is the tip archived at path in archive commit archive
// (ZeroHash: none, or no archive).
func ArchivedIn(g *gitstore.Store, archive gitstore.Hash, path []string) (gitstore.Hash, error) {
	if archive == gitstore.ZeroHash {
		return gitstore.ZeroHash, nil
	}
	root, err := g.RootTree(archive, archiveFormat)
	if err != nil || root == gitstore.ZeroHash {
		return gitstore.ZeroHash, err
	}
	e, ok, err := g.Lookup(root, path)
	if err != nil || !ok || e.IsDir() {
		return gitstore.ZeroHash, err
	}
	return archiveBlob(g, e.Hash)
}

// Unarchive gives ref, archived at path of this clone's archive, its ref
// back at the archived tip, and returns the ref's tip (ZeroHash: neither a
// ref nor archived). A ref that exists is left as it is.
func Unarchive(ctx context.Context, g *gitstore.Store, ref string, path []string) (gitstore.Hash, error) {
	tip, err := g.Ref(ref)
	if err != nil || tip != gitstore.ZeroHash {
		return tip, err
	}
	arch, err := g.Ref(ArchiveRef)
	if err != nil {
		return tip, err
	}
	a, err := ArchivedIn(g, arch, path)
	if err != nil || a == gitstore.ZeroHash {
		return a, err
	}
	if err := g.UpdateRef(ctx, ref, a, gitstore.ZeroHash); err != nil && !apperr.Is(err, apperr.Conflict) {
		return gitstore.ZeroHash, err
	}
	return g.Ref(ref)
}

func archiveBlob(g *gitstore.Store, h gitstore.Hash) (gitstore.Hash, error) {
	data, err := g.ReadBlob(h)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	tip, err := gitstore.ParseHash(strings.TrimSpace(string(data)))
	if err != nil {
		return gitstore.ZeroHash, apperr.Wrap(apperr.Internal, err, "an archive entry (%s) names no commit", h)
	}
	return tip, nil
}

// archivedTip is the tip of item id in this clone's archive.
func (s *Store) archivedTip(id string) (gitstore.Hash, error) {
	a, err := s.git.Ref(ArchiveRef)
	if err != nil || a == gitstore.ZeroHash {
		return gitstore.ZeroHash, err
	}
	return s.ArchivedAt(a, id)
}

// ArchiveCommit writes the commits that add refs to the archive at base
// (ZeroHash: there is none yet), at most archiveBatch tips a commit, and
// returns the last. An entry already at a path is replaced: the caller
// archives a ref's current tip, which contains any earlier one.
func (s *Store) ArchiveCommit(base gitstore.Hash, add []Archived) (gitstore.Hash, error) {
	head := base
	for len(add) > 0 {
		n := min(len(add), archiveBatch)
		var err error
		if head, err = s.archiveOne(head, add[:n]); err != nil {
			return gitstore.ZeroHash, err
		}
		add = add[n:]
	}
	return head, nil
}

func (s *Store) archiveOne(base gitstore.Hash, add []Archived) (gitstore.Hash, error) {
	root, err := s.git.RootTree(base, archiveFormat)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if root, err = s.git.EnsureFormat(root, archiveFormat); err != nil {
		return gitstore.ZeroHash, err
	}
	finished := len(add)
	add = append([]Archived(nil), add...) // the caller's slice goes on past add
	// An archived item's references go beside it, so referenced_by reads
	// them without loading every archived item.
	for _, a := range add[:finished] {
		if len(a.Path) != 3 || a.Path[0] != "items" {
			continue
		}
		it, err := s.load(a.Tip)
		if apperr.Is(err, SchemaVersion) {
			continue
		}
		if err != nil {
			return gitstore.ZeroHash, err
		}
		if len(it.References) > 0 {
			js, err := json.Marshal(it.References)
			if err != nil {
				return gitstore.ZeroHash, err
			}
			add = append(add, Archived{Path: archiveReferencesPath(a.Path[2]), data: js})
		}
	}
	byDir := map[string][]Archived{}
	for _, a := range add {
		byDir[strings.Join(a.Path[:len(a.Path)-1], "/")] = append(byDir[strings.Join(a.Path[:len(a.Path)-1], "/")], a)
	}
	if root, err = s.insertAll(root, "", byDir); err != nil {
		return gitstore.ZeroHash, err
	}
	parents := []gitstore.Hash{}
	if base != gitstore.ZeroHash {
		parents = append(parents, base)
	}
	seen := map[gitstore.Hash]bool{}
	for _, a := range add {
		if a.Tip != gitstore.ZeroHash && !seen[a.Tip] {
			seen[a.Tip] = true
			parents = append(parents, a.Tip)
		}
	}
	sig := s.git.Identity()
	sig.When = s.Now()
	msg := fmt.Sprintf("archive: %d finished\n\nIdeate-Archived: %d\n", finished, finished)
	return s.git.WriteCommit(&gitstore.Commit{Tree: root, Parents: parents, Author: sig, Committer: sig, Message: msg})
}

// insertAll writes, under the tree at dir (ZeroHash: none), the entries of
// byDir whose directory is dir or below it, and returns the new tree.
func (s *Store) insertAll(tree gitstore.Hash, dir string, byDir map[string][]Archived) (gitstore.Hash, error) {
	var entries []gitstore.TreeEntry
	if tree != gitstore.ZeroHash {
		var err error
		if entries, err = s.git.ReadTree(tree); err != nil {
			return gitstore.ZeroHash, err
		}
	}
	at := map[string]int{}
	for i, e := range entries {
		at[e.Name] = i
	}
	put := func(e gitstore.TreeEntry) {
		if i, ok := at[e.Name]; ok {
			entries[i] = e
			return
		}
		at[e.Name] = len(entries)
		entries = append(entries, e)
	}
	for _, a := range byDir[dir] {
		data := a.data
		if data == nil {
			data = []byte(a.Tip.String() + "\n")
		}
		b, err := s.git.WriteBlob(data)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		put(gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: a.Path[len(a.Path)-1], Hash: b})
	}
	subs := map[string]bool{}
	prefix := dir + "/"
	if dir == "" {
		prefix = ""
	}
	for d := range byDir {
		if d != dir && strings.HasPrefix(d, prefix) {
			name, _, _ := strings.Cut(d[len(prefix):], "/")
			subs[name] = true
		}
	}
	names := make([]string, 0, len(subs))
	for n := range subs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var cur gitstore.Hash
		if i, ok := at[name]; ok && entries[i].IsDir() {
			cur = entries[i].Hash
		}
		h, err := s.insertAll(cur, prefix+name, byDir)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		put(gitstore.TreeEntry{Mode: gitstore.ModeDir, Name: name, Hash: h})
	}
	return s.git.WriteTree(entries)
}

// Archivable lists the items whose refs are at a done or cancelled tip
// committed before before (the transition that finished them), oldest
// first, at most max.
func (s *Store) Archivable(before time.Time, max int) ([]Archived, []string, error) {
	idx, err := s.index()
	if err != nil {
		return nil, nil, err
	}
	type cand struct {
		id  string
		tip gitstore.Hash
		at  time.Time
	}
	var cs []cand
	for _, e := range idx.byID {
		if e.status != StatusDone && e.status != StatusCancelled {
			continue
		}
		c, err := s.git.ReadCommit(e.tip)
		if err != nil {
			return nil, nil, err
		}
		if c.Committer.When.Before(before) {
			cs = append(cs, cand{e.id, e.tip, c.Committer.When})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if !cs[i].at.Equal(cs[j].at) {
			return cs[i].at.Before(cs[j].at)
		}
		return cs[i].id < cs[j].id
	})
	if max >= 0 && len(cs) > max {
		cs = cs[:max]
	}
	out := make([]Archived, len(cs))
	ids := make([]string, len(cs))
	for i, c := range cs {
		out[i] = Archived{Path: ArchivePath(c.id), Tip: c.tip}
		ids[i] = c.id
	}
	return out, ids, nil
}

// restore gives an archived item its ref back, at the tip it was archived
// at, so a verb on it (a reopen) writes on top of its chain. An item with
// a ref, or none in the archive, is left alone.
func (s *Store) restore(ctx context.Context, id string) error {
	_, err := Unarchive(ctx, s.git, RefName(id), ArchivePath(id))
	return err
}

// archiveCache is the archived items' index entries of one archive
// commit, for listings (built on first use, kept by a long-lived process).
type archiveCache struct {
	mu      sync.Mutex
	tip     gitstore.Hash
	entries map[string]*entry
}

// archivedEntries is an index entry for every archived item of this
// clone's archive.
func (s *Store) archivedEntries() (map[string]*entry, error) {
	a, err := s.git.Ref(ArchiveRef)
	if err != nil || a == gitstore.ZeroHash {
		return nil, err
	}
	s.arch.mu.Lock()
	defer s.arch.mu.Unlock()
	if s.arch.tip == a {
		return s.arch.entries, nil
	}
	root, err := s.git.RootTree(a, archiveFormat)
	if err != nil {
		return nil, err
	}
	items, ok, err := s.git.Lookup(root, []string{"items"})
	if err != nil || !ok {
		return nil, err
	}
	out := map[string]*entry{}
	old := s.arch.entries
	dirs, err := s.git.ReadTree(items.Hash)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		leaves, err := s.git.ReadTree(d.Hash)
		if err != nil {
			return nil, err
		}
		for _, l := range leaves {
			tip, err := archiveBlob(s.git, l.Hash)
			if err != nil {
				return nil, err
			}
			if e, ok := old[l.Name]; ok && e.tip == tip {
				out[l.Name] = e
				continue
			}
			it, err := s.load(tip)
			if err != nil {
				if apperr.Is(err, SchemaVersion) {
					continue
				}
				return nil, err
			}
			out[l.Name] = entryOf(tip, it)
		}
	}
	s.arch.tip, s.arch.entries = a, out
	return out, nil
}

// archivedStatus returns the status of an archived item by id ("" when it
// is not in the archive), each looked up once.
func (s *Store) archivedStatus() func(id string) string {
	seen := map[string]string{}
	return func(id string) string {
		if st, ok := seen[id]; ok {
			return st
		}
		st := ""
		if a, err := s.archivedTip(id); err == nil && a != gitstore.ZeroHash {
			if it, err := s.load(a); err == nil {
				st = it.Status
			}
		}
		seen[id] = st
		return st
	}
}

// Known reports whether item id is on the board of g: a live ref or an
// archive entry (for readers without a Store, such as the record's id
// check).
func Known(g *gitstore.Store, id string) (bool, error) {
	if checkID(id) != nil {
		return false, nil
	}
	h, err := g.Ref(RefName(id))
	if err != nil || h != gitstore.ZeroHash {
		return h != gitstore.ZeroHash, err
	}
	arch, err := g.Ref(ArchiveRef)
	if err != nil {
		return false, err
	}
	a, err := ArchivedIn(g, arch, ArchivePath(id))
	return a != gitstore.ZeroHash, err
}
