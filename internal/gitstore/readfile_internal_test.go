package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileInto: whole files of every size come back, in a given
// buffer's storage when it is large enough, in a new one when not.
func TestReadFileInto(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	buf := make([]byte, 0, 2048)
	for _, n := range []int{0, 1, 1535, 1536, 1537, 2048, 5000, 100} {
		data := bytes.Repeat([]byte{byte(n)}, n)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readFileInto(path, buf)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read %d, %v", n, len(got), err)
		}
		same := cap(got) > 0 && &got[:1][0] == &buf[:1][0]
		if fits := n+512 <= cap(buf); same != fits {
			t.Fatalf("%d bytes: read into the given buffer %v, want %v", n, same, fits)
		}
	}
	if _, err := readFileInto(filepath.Join(t.TempDir(), "none"), buf); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}
