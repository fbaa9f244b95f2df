package steering

import (
	"sort"

	"github.com/ideate/git-ideate/internal/gitstore"
)

// MergeFiles merges two versions of one item's file that two clones
// amended independently, losing no amendment: every version either side
// has seen (its current statement and its history) is kept once, the
// newest by updated_at becomes current and the rest its history, newest
// first. Kind, domain and references come from the side whose version is
// newest. A file that does not parse loses to one that does; when neither
// parses, ours is kept.
func MergeFiles(ours, theirs []byte) []byte {
	a, errA := Parse(ours)
	b, errB := Parse(theirs)
	switch {
	case errA != nil && errB != nil:
		return ours
	case errA != nil:
		return theirs
	case errB != nil:
		return ours
	}
	type version struct{ at, status, statement string }
	seen := map[version]bool{}
	var all []version
	add := func(v version) {
		if !seen[v] {
			seen[v] = true
			all = append(all, v)
		}
	}
	for _, it := range []*Item{a, b} {
		add(version{it.UpdatedAt, it.Status, it.Statement})
		for _, h := range it.History {
			add(version{h.At, h.Status, h.Statement})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].at != all[j].at {
			return all[i].at > all[j].at
		}
		return all[i].statement < all[j].statement
	})
	top := a
	if b.UpdatedAt > a.UpdatedAt {
		top = b
	}
	out := &Item{ID: top.ID, Kind: top.Kind, Domain: top.Domain, References: top.References,
		UpdatedAt: all[0].at, Status: all[0].status, Statement: all[0].statement, History: []Amendment{}}
	for _, v := range all[1:] {
		out.History = append(out.History, Amendment{At: v.at, Status: v.status, Statement: v.statement})
	}
	out.normalize()
	return Marshal(out)
}

// Resolve is the gitstore.ResolveFunc of a steering tree union: item files
// merge with MergeFiles; any other file keeps ours.
func Resolve(g *gitstore.Store) gitstore.ResolveFunc {
	return func(path string, ours, theirs gitstore.TreeEntry) (gitstore.TreeEntry, error) {
		if len(path) < len(itemsDir)+1 || path[:len(itemsDir)+1] != itemsDir+"/" {
			return ours, nil
		}
		a, err := g.ReadBlob(ours.Hash)
		if err != nil {
			return ours, err
		}
		b, err := g.ReadBlob(theirs.Hash)
		if err != nil {
			return ours, err
		}
		h, err := g.WriteBlob(MergeFiles(a, b))
		if err != nil {
			return ours, err
		}
		ours.Hash = h
		return ours, nil
	}
}
