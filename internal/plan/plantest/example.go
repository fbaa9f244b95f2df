package plantest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ExampleDir is the example plan set (internal/plan/testdata/example): the
// playbook's small sprint that passes plan.Check with no finding.
func ExampleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "example")
}

// CopyExample copies the example plan set (its docs/ and the files beside
// it) into dst.
func CopyExample(dst string) error {
	src := ExampleDir()
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// ReplaceRunners returns standards.md's text with its `## Test runners`
// section (up to the next `## ` heading) taken out and runners appended:
// tests that bring their own runner use it on the example's standards.
func ReplaceRunners(standards []byte, runners string) []byte {
	s := string(standards)
	if i := strings.Index(s, "## Test runners"); i >= 0 {
		rest := s[i+len("## Test runners"):]
		if j := strings.Index(rest, "\n## "); j >= 0 {
			s = s[:i] + rest[j+1:]
		} else {
			s = s[:i]
		}
	}
	return []byte(s + runners)
}
