//go:build unix

package transcripts

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A transcript path from the host that names a FIFO with no writer,
// /dev/zero or a symlink to it is refused at once, and nothing is copied.
func TestStore_Copy_RefusesWhatIsNotAFile(t *testing.T) {
	s := Open(t.TempDir())
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero.jsonl")
	os.Symlink("/dev/zero", link)
	dest, _ := SessionCopy("s1", "")
	for _, src := range []string{fifo, "/dev/zero", link} {
		t0 := time.Now()
		r, err := s.Copy(ctx, src, dest)
		if err == nil || r.Bytes != 0 {
			t.Errorf("Copy(%s) = %+v, %v; want a refusal", src, r, err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("Copy(%s) took %v", src, d)
		}
	}
}
