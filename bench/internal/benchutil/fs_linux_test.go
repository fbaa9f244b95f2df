package benchutil

import (
	"os"
	"strings"
	"testing"
)

// TestFileSystem names the block device of a directory as /proc/self/mountinfo
// does for the file system it is on.
func TestFileSystem(t *testing.T) {
	dir := t.TempDir()
	got := FileSystem(dir)
	if got == "unknown" || strings.HasPrefix(got, "device ") {
		t.Skipf("no block device for %s: %s", dir, got)
	}
	dev := strings.Fields(got)[0]
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skip(err)
	}
	if !strings.Contains(string(info), "/dev/"+dev) {
		t.Fatalf("FileSystem(%s) = %q, but no mount of /dev/%s in /proc/self/mountinfo", dir, got, dev)
	}
}
