package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A tmpfs is not ext4; a directory on ext4 is, with a journal exactly when
// the kernel runs a journal thread for its device.
func TestFileSystem(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err == nil {
		if _, ext4, _ := fileSystem("/dev/shm"); ext4 {
			t.Fatal("/dev/shm (tmpfs) reported as ext4")
		}
	}
	dev, ext4, journal := fileSystem(t.TempDir())
	if dev == "" {
		t.Skip("no device for the temporary directory")
	}
	task, err := os.ReadFile(filepath.Join("/sys/fs/ext4", dev, "journal_task"))
	if (err == nil) != ext4 {
		t.Fatalf("FileSystem: device %s, ext4 %v; /sys/fs/ext4/%s/journal_task: %v", dev, ext4, dev, err)
	}
	if ext4 && journal == (string(task) == "<none>\n") {
		t.Fatalf("FileSystem: journal %v, journal_task %q", journal, task)
	}
}
