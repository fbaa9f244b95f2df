//go:build unix

package symbols_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/symbols"
)

// The files of a working tree are what its workers left: a FIFO named
// like a source file, or one far past any source's size (a sparse file
// costs its maker nothing), is refused at once, not read.
func TestDir_ReadRefusesWhatIsNoSource(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.go"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	f, err := os.Create(filepath.Join(dir, "huge.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skip("no sparse file here:", err)
	}
	f.Close()
	d := symbols.Dir{Root: dir}
	for _, p := range []string{"fifo.go", "huge.go"} {
		done := make(chan error, 1)
		go func() {
			_, err := d.Read(p)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s was read as a source file", p)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10 s", p)
		}
	}
}
