package benchutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FileSystem describes the file system dir is on, for a benchmark's
// output: its block device and, for ext4, whether it has a journal. Without
// one, ext4's inode allocator passes over every recently deleted inode, so
// file creation costs more there (docs/ARCHITECTURE.md, issue 19).
func FileSystem(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return "unknown"
	}
	major, minor := (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	if err != nil {
		return fmt.Sprintf("device %d:%d", major, minor)
	}
	dev := filepath.Base(link)
	task, err := os.ReadFile(filepath.Join("/sys/fs/ext4", dev, "journal_task"))
	switch {
	case err != nil:
		return dev + " (not ext4)"
	case strings.TrimSpace(string(task)) == "<none>":
		return dev + " (ext4 without a journal)"
	default:
		return dev + " (ext4 with a journal)"
	}
}
