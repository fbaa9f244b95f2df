package gitstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadSmall: whole files of every size come back, in a given
// buffer's storage when it is large enough, in a new one when not.
func TestReadSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	buf := make([]byte, 0, 2048)
	for _, n := range []int{0, 1, 2046, 2047, 2048, 2049, 5000, 100} {
		data := bytes.Repeat([]byte{byte(n)}, n)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readSmall(path, buf, 0, nil)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read %d, %v", n, len(got), err)
		}
		same := cap(got) > 0 && &got[:1][0] == &buf[:1][0]
		if fits := n+1 <= cap(buf); same != fits {
			t.Fatalf("%d bytes: read into the given buffer %v, want %v", n, same, fits)
		}
	}
	if _, err := readSmall(filepath.Join(t.TempDir(), "none"), buf, 0, nil); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestReadSmall_StatAndErrors: the stat is the file's that was read; a
// limit reads no more than it; a directory and a missing file fail as os.ReadFile fails (the ref readers
// tell them apart with errors.Is).
func TestReadSmall_StatAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ref")
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st os.FileInfo
	var buf [128]byte
	got, err := readSmall(path, buf[:0], 0, &st)
	want, _ := os.Stat(path)
	if err != nil || string(got) != "x\n" || !os.SameFile(st, want) || st.Size() != 2 {
		t.Fatalf("read %q, stat %v, %v; want the file's", got, st, err)
	}
	big := bytes.Repeat([]byte("0123456789"), 1000)
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, refFileMax, len(big) - 1, len(big), len(big) + 1} {
		got, err := readSmall(path, buf[:0], limit, nil)
		if want := big[:min(limit, len(big))]; err != nil || !bytes.Equal(got, want) {
			t.Fatalf("limit %d: read %d bytes (%v), want the first %d", limit, len(got), err, len(want))
		}
	}
	if _, err := readSmall(dir, nil, 0, nil); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("a directory: %v, want EISDIR", err)
	}
	if _, err := readSmall(filepath.Join(dir, "none"), nil, 0, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v, want not-exist", err)
	}
}
