package gitstore

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// TestWritePack_DeflatedObjectsReadByGit: a write's pack holding objects
// deflated by compress/zlib
// reads back byte for byte through git cat-file, and passes fsck --strict.
func TestWritePack_DeflatedObjectsReadByGit(t *testing.T) {
	s, dir := packStore(t, false)
	blobs := [][]byte{
		[]byte(strings.Repeat("The lockfile CAS held under contention. ", 10)),
		bytes.Repeat([]byte(`{"k":"v","n":12}`), 500),
		[]byte(strings.Repeat("x", 20000)),
	}
	var hashes []Hash
	_, err := s.Transact(t.Context(), "refs/ideate/t", func(tip Hash) (Hash, string, error) {
		var entries []TreeEntry
		for i, b := range blobs {
			h, err := s.WriteBlob(b)
			if err != nil {
				return ZeroHash, "", err
			}
			hashes = append(hashes, h)
			entries = append(entries, TreeEntry{Mode: ModeFile, Name: fmt.Sprintf("b%d", i), Hash: h})
		}
		tree, err := s.WriteTree(entries)
		return tree, "blobs\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hashes {
		out, err := exec.Command("git", "-C", dir, "cat-file", "blob", h.String()).Output()
		if err != nil || !bytes.Equal(out, blobs[i]) {
			t.Fatalf("blob %d: git read %d bytes (%v), want %d", i, len(out), err, len(blobs[i]))
		}
	}
	gt.Git(t, dir, "fsck", "--strict", "--no-dangling")
}
