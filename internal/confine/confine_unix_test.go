//go:build unix

package confine_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What the command leaves is read after it ends, by the entry and by
// git: a FIFO in its object directory, as the index, or as a .gitignore
// (made there, or moved or linked from its temporary directory) would
// hold the put-back in an open for a writer that never comes. The
// entry still puts back what the role may not change.
func TestRun_AFIFOHoldsNothingBack(t *testing.T) {
	f := newFixture(t)
	prod := filepath.Join(f.wt, "pkg", "a.go")
	prodWas := read(t, prod)
	outside := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(outside, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, mk := range []string{
		`mkdir -p "$GIT_OBJECT_DIRECTORY/pack" && mkfifo "$GIT_OBJECT_DIRECTORY/pack/x.pack"`,
		`mkdir -p "$GIT_OBJECT_DIRECTORY/ab" && mkfifo "$GIT_OBJECT_DIRECTORY/ab/` + strings.Repeat("0", 38) + `"`,
		`mkfifo idx.fifo && mv idx.fifo "$(git rev-parse --git-path index)"`,
		`mkfifo "$TMPDIR/f" && mv "$TMPDIR/f" .gitignore`,
		`mkfifo "$TMPDIR/f" && ln -sf "$TMPDIR/f" "$(git rev-parse --git-path index)"`,
		// A FIFO that was there before, outside what the command may write.
		`ln -sf ` + outside + ` "$(git rev-parse --git-path index)"`,
	} {
		done := make(chan string, 1)
		go func() {
			_, out := f.run(t, "red-worker", "echo x >> pkg/a.go; "+mk)
			done <- out
		}()
		select {
		case out := <-done:
			if read(t, prod) != prodWas {
				t.Errorf("%s: the production file was not put back\n%s", mk, out)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the entry still waits on a FIFO after 20 s", mk)
		}
	}
}
