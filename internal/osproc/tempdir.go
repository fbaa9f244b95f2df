package osproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempDir makes a temporary directory of this process,
// ideate-<kind>-<pid>-*, in the system's temporary directory, after
// removing every ideate-*-<pid>-* one whose process no longer exists: a
// run killed (SIGKILL, a timeout of its caller) cannot remove its own, so
// the next one does. kind is a word without '-'. Its caller removes it
// when done.
func TempDir(kind string) (string, error) {
	base := os.TempDir()
	SweepTempDirs(base)
	return os.MkdirTemp(base, fmt.Sprintf("ideate-%s-%d-", kind, os.Getpid()))
}

// SweepTempDirs removes the ideate-<kind>-<pid>-* directories in base whose
// process is gone.
func SweepTempDirs(base string) {
	old, _ := filepath.Glob(filepath.Join(base, "ideate-*-*-*"))
	for _, d := range old {
		parts := strings.SplitN(filepath.Base(d), "-", 4)
		if len(parts) < 4 {
			continue
		}
		pid, err := strconv.Atoi(parts[2])
		if err == nil && pid > 0 && pid != os.Getpid() && Gone(pid) {
			os.RemoveAll(d)
		}
	}
}
