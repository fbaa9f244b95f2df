package benchutil

import (
	"strings"

	"github.com/ideate/git-ideate/internal/osproc"
)

// FileSystem describes the file system dir is on, for a benchmark's
// output: its block device and, for ext4, whether it has a journal (see
// osproc.FileSystem for why that matters).
func FileSystem(dir string) string {
	dev, ext4, journal := osproc.FileSystem(dir)
	switch {
	case dev == "":
		return "unknown"
	case !ext4 && strings.HasPrefix(dev, "device "):
		return dev
	case !ext4:
		return dev + " (not ext4)"
	case !journal:
		return dev + " (ext4 without a journal)"
	default:
		return dev + " (ext4 with a journal)"
	}
}
