package gitstore

import (
	"os"
	"strings"
)

// syncSet is which files a Store forces to disk before it renames them
// into place, read from git's core.fsync as git reads it (by default the
// .pack of a write only), core.fsyncObjectFiles and core.fsyncMethod
// (writeout-only promises nothing after a power cut: nothing is forced).
// ideate.fsync=true (LockPolicy.Fsync) forces every component and the
// directories the files are renamed into.
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
