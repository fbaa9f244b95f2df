package gitstore

import (
	"fmt"
	"path/filepath"
)

// IndexKeys reads the index of the worktree whose git directory is gitDir
// and keys each path by what the working state takes from the index for
// it: stage, mode, object name and the assume-valid, skip-worktree and
// intent-to-add flags (stat data left out). A file-system monitor compares
// two reads to name the paths an index write changed. A split or sparse
// index is an error.
func IndexKeys(gitDir string) (map[string]string, error) {
	idx, err := readIndex(filepath.Join(gitDir, "index"))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(idx.entries))
	for _, e := range idx.entries {
		out[e.path] += fmt.Sprintf("%d %o %s %t %t %t;", e.stage, e.mode, e.hash, e.assumeValid, e.skipWorktree, e.intentToAdd)
	}
	return out, nil
}
