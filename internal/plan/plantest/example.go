package plantest

import (
	"os"
	"path/filepath"
	"runtime"
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
