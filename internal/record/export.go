package record

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
)

// ExportStats counts what an export did.
type ExportStats struct {
	Written, Unchanged, Total int
}

// Export writes every record of the current tip to dir as YYYY/MM/<id>.md
// in the file format, so tools that read the existing implementation's
// record directory keep working. Files already present with the same bytes
// are left alone; each file is written to a temporary name and renamed, so
// an interrupted export leaves no partial file. progress, when set, is
// called after each record with the number done so far.
func (s *Store) Export(dir string, progress func(done int)) (ExportStats, error) {
	var st ExportStats
	sn, err := s.Snapshot()
	if err != nil {
		return st, err
	}
	made := map[string]bool{}
	err = sn.WalkIDs("", func(id string, blob gitstore.Hash) (bool, error) {
		data, err := s.git.ReadBlob(blob)
		if err != nil {
			return false, err
		}
		st.Total++
		path := filepath.Join(dir, filepath.FromSlash(ExportPath(id)))
		if old, err := osproc.ReadRegular(path, int64(len(data))); err == nil && bytes.Equal(old, data) {
			st.Unchanged++
		} else {
			d := filepath.Dir(path)
			if !made[d] {
				if err := os.MkdirAll(d, 0o777); err != nil {
					return false, err
				}
				made[d] = true
			}
			tmp, err := os.CreateTemp(d, ".export-*")
			if err != nil {
				return false, err
			}
			_, werr := tmp.Write(data)
			cerr := tmp.Close()
			if werr != nil || cerr != nil {
				os.Remove(tmp.Name())
				if werr != nil {
					return false, werr
				}
				return false, cerr
			}
			if err := os.Rename(tmp.Name(), path); err != nil {
				os.Remove(tmp.Name())
				return false, err
			}
			st.Written++
		}
		if progress != nil {
			progress(st.Total)
		}
		return true, nil
	})
	return st, err
}
