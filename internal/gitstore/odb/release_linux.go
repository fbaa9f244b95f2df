package odb

import "syscall"

// releaseMapped drops the pages of a mapping made by MapFile from the
// process's resident memory; the mapping stays, and a later read maps the
// page again from the file (MAP_SHARED: the page cache holds the same
// bytes). An error is ignored: the pages only stay.
func releaseMapped(data []byte) {
	if len(data) > 0 {
		syscall.Madvise(data, syscall.MADV_DONTNEED)
	}
}
