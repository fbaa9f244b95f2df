package gitstore

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"
)

// TestAppendStored: the hand-written stored stream inflates to its input
// for every size it is used for, a reader that checks the Adler-32
// trailer and the block lengths accepts it, and it is as long as a stored
// stream must be.
func TestAppendStored(t *testing.T) {
	for _, n := range []int{0, 1, 2, 127, 128, 200, storedBelow - 1} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + n)
		}
		var buf bytes.Buffer
		buf.WriteString("prefix")
		appendStored(&buf, data)
		r, err := zlib.NewReader(bytes.NewReader(buf.Bytes()[len("prefix"):]))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: inflated %d bytes, %v", n, len(got), err)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if want := len("prefix") + 2 + 5 + n + 4; buf.Len() != want {
			t.Fatalf("%d bytes: stream of %d bytes, want %d", n, buf.Len()-len("prefix"), want-len("prefix"))
		}
	}
}
