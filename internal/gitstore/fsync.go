package gitstore

import (
	"os"
	"strings"
)

// syncSet is which files a Store forces to disk before it renames them
// into place, read from git's core.fsync as git 2.39 reads it, with
// core.fsyncObjectFiles and core.fsyncMethod (writeout-only promises
// nothing after a power cut: nothing is forced). ideate.fsync=true
// (LockPolicy.Fsync) forces every file and the directories the files are
// renamed into.
//
// A write's objects are the few objects of one commit: git writes those
// loose (`git commit`; a push of fewer than transfer.unpackLimit objects
// is unpacked loose too) and forces them to disk as its loose-object
// component says. They are stored here as one pack and its index for
// fewer files, so that component decides for both; git's pack and
// pack-metadata components are about the packs git's own fetches and
// repacks write, which git forces itself.
type syncSet struct {
	objects, ref bool
	dirs         bool
}

// The components of core.fsync a Store acts on, and git's aggregates of
// them (git's default is pack, pack-metadata and commit-graph: none of
// them is an object a commit writes, nor a ref).
const (
	fsLoose = 1 << iota
	fsPack
	fsPackMeta
	fsCommitGraph
	fsIndex
	fsRef
	fsDefault = fsPack | fsPackMeta | fsCommitGraph
	fsAll     = fsLoose | fsPack | fsPackMeta | fsCommitGraph | fsIndex | fsRef
)

var fsyncComponents = map[string]int{
	"loose-object":     fsLoose,
	"pack":             fsPack,
	"pack-metadata":    fsPackMeta,
	"commit-graph":     fsCommitGraph,
	"index":            fsIndex,
	"reference":        fsRef,
	"objects":          fsLoose | fsPack,
	"derived-metadata": fsPackMeta | fsCommitGraph,
	"committed":        fsLoose | fsPack | fsRef,
	"added":            fsLoose | fsPack | fsRef | fsIndex,
	"all":              fsAll,
}

func readSyncSet(cfg *Config, all bool) syncSet {
	if all {
		return syncSet{true, true, true}
	}
	if m, _ := cfg.Get("core", "fsyncmethod"); strings.EqualFold(strings.TrimSpace(m), "writeout-only") {
		return syncSet{}
	}
	// As git 2.39 reads it: its default, reset by a last "none", less
	// every "-name", plus every "name"; a name stands for every component
	// it begins (git compares that many bytes), an unknown one for none.
	cur, plus, minus := fsDefault, 0, 0
	if vals := cfg.GetAllSub("core", "", "fsync"); len(vals) > 0 {
		toks := strings.Split(vals[len(vals)-1], ",")
		for i, tok := range toks {
			tok = strings.TrimSpace(tok)
			if tok == "none" && i == len(toks)-1 {
				cur = 0
				continue
			}
			name, neg := strings.CutPrefix(tok, "-")
			if name == "" {
				continue
			}
			for n, bits := range fsyncComponents {
				if !strings.HasPrefix(n, name) {
					continue
				}
				if neg {
					minus |= bits
				} else {
					plus |= bits
				}
			}
		}
	}
	c := cur&^minus | plus
	if cfg.Bool("core", "fsyncobjectfiles", false) {
		c |= fsLoose
	}
	return syncSet{objects: c&fsLoose != 0, ref: c&fsRef != 0}
}

// syncDir forces a directory's entries (a rename into it) to disk, when
// the set asks for directories.
func (s syncSet) syncDir(dir string) {
	if !s.dirs {
		return
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
