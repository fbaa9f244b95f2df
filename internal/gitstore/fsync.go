package gitstore

import (
	"os"
	"slices"
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

// The components of core.fsync (and git's aggregates of them) that cover
// a loose object and a ref. git's default holds neither (it is pack,
// pack-metadata and commit-graph), and git computes default &^ negated |
// named, so "none" and "-name" cannot add or take away either: a Store
// forces what a name in the last core.fsync value covers. A name stands
// for every component it begins (git compares that many bytes).
var (
	fsyncLoose = []string{"loose-object", "objects", "committed", "added", "all"}
	fsyncRef   = []string{"reference", "committed", "added", "all"}
)

func readSyncSet(cfg *Config, all bool) syncSet {
	if all {
		return syncSet{true, true, true}
	}
	if m, _ := cfg.Get("core", "fsyncmethod"); strings.EqualFold(strings.TrimSpace(m), "writeout-only") {
		return syncSet{}
	}
	var set syncSet
	if vals := cfg.GetAllSub("core", "", "fsync"); len(vals) > 0 {
		for _, tok := range strings.Split(vals[len(vals)-1], ",") {
			tok = strings.TrimSpace(tok)
			begins := func(n string) bool { return strings.HasPrefix(n, tok) }
			if tok != "" && tok[0] != '-' {
				set.objects = set.objects || slices.ContainsFunc(fsyncLoose, begins)
				set.ref = set.ref || slices.ContainsFunc(fsyncRef, begins)
			}
		}
	}
	set.objects = set.objects || cfg.Bool("core", "fsyncobjectfiles", false)
	return set
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
