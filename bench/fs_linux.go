package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// fileSystem names the block device dir is on and, for ext4, whether it
// has a journal (ext4 is false for any other file system; dev is "" when
// the device cannot be named). Without a journal, ext4's inode allocator
// passes over every inode deleted in the last minutes, so creating a file
// costs more the more files were deleted lately (docs/PERF-LOG.md): a
// run names the file system its scratch directory is on for that reason.
func fileSystem(dir string) (dev string, ext4, journal bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return "", false, false
	}
	major, minor := (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	if err != nil {
		return fmt.Sprintf("device %d:%d", major, minor), false, false
	}
	dev = filepath.Base(link)
	task, err := os.ReadFile(filepath.Join("/sys/fs/ext4", dev, "journal_task"))
	if err != nil {
		return dev, false, false
	}
	return dev, true, strings.TrimSpace(string(task)) != "<none>"
}
