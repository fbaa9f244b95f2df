//go:build unix

package transcript

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Summarize refuses a FIFO, /dev/zero and a symlink to it at once.
func TestSummarize_RefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "t.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "z.jsonl")
	os.Symlink("/dev/zero", link)
	for _, p := range []string{fifo, "/dev/zero", link} {
		t0 := time.Now()
		if _, err := Summarize(p, Options{}); err == nil {
			t.Errorf("Summarize(%s) read it", p)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("Summarize(%s) took %v", p, d)
		}
	}
}
