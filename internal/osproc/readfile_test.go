//go:build unix

package osproc_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// A FIFO with no writer, /dev/zero and a symlink to it are refused at
// once; a regular file is read, up to its cap.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", link, dir} {
		t0 := time.Now()
		if _, err := osproc.ReadRegular(p, 1<<20); !errors.Is(err, osproc.ErrNotRegular) {
			t.Errorf("ReadRegular(%s) = %v, want ErrNotRegular", p, err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("ReadRegular(%s) took %v", p, d)
		}
	}
	f := filepath.Join(dir, "f")
	os.WriteFile(f, []byte("hello"), 0o644)
	if b, err := osproc.ReadRegular(f, 5); err != nil || string(b) != "hello" {
		t.Errorf("ReadRegular(f, 5) = %q, %v", b, err)
	}
	if _, err := osproc.ReadRegular(f, 4); !errors.Is(err, osproc.ErrTooLarge) {
		t.Errorf("ReadRegular(f, 4) = %v, want ErrTooLarge", err)
	}
}
