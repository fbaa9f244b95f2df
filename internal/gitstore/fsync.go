package gitstore

import (
	"os"
	"strings"
)

// syncSet is which files a Store forces to disk before it renames them
// into place, read from git's own settings the way git reads them:
// core.fsync names components (loose-object, pack, pack-metadata,
// reference, and the aggregates objects, committed, added, all; "-x"
// removes one, "none" clears), each occurrence starting again from git's
// default, committed without loose-object: the .pack of a write, nothing
// else. core.fsyncObjectFiles=true adds loose-object, as in git.
// core.fsyncMethod=writeout-only asks only for a write-back, which
// promises nothing after a power cut, so nothing is forced then; fsync and
// batch are fsync(2) here.
//
// ideate.fsync=true (LockPolicy.Fsync) forces every component and also
// the directories the files are renamed into, as it did before git's
// settings were read.
type syncSet struct {
	loose, pack, packMeta, ref bool
	dirs                       bool
}

func readSyncSet(cfg *Config, all bool) syncSet {
	if all {
		return syncSet{true, true, true, true, true}
	}
	s := syncSet{pack: true}
	if vals := cfg.GetAllSub("core", "", "fsync"); len(vals) > 0 {
		s = syncSet{pack: true}
		for _, tok := range strings.Split(vals[len(vals)-1], ",") {
			tok = strings.ToLower(strings.TrimSpace(tok))
			on := !strings.HasPrefix(tok, "-")
			switch strings.TrimPrefix(tok, "-") {
			case "":
			case "none":
				s = syncSet{}
			case "loose-object":
				s.loose = on
			case "pack":
				s.pack = on
			case "pack-metadata", "derived-metadata":
				s.packMeta = on
			case "reference":
				s.ref = on
			case "objects", "committed", "added":
				s.loose, s.pack = on, on
			case "all":
				s = syncSet{on, on, on, on, false}
			}
		}
	}
	if cfg.Bool("core", "fsyncobjectfiles", false) {
		s.loose = true
	}
	if m, _ := cfg.Get("core", "fsyncmethod"); strings.EqualFold(strings.TrimSpace(m), "writeout-only") {
		return syncSet{}
	}
	return s
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
