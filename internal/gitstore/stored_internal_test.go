package gitstore

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
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

// TestWritePack_TreesStored: a write's pack stores its trees (up to a
// stored block's limit) and its small objects, and deflates the rest; git
// reads the pack (verify-pack, fsck --strict).
func TestWritePack_TreesStored(t *testing.T) {
	s, dir := packStore(t, false)
	prose := strings.Repeat("The lockfile CAS held under contention. ", 10) // 400 bytes
	var small, big []TreeEntry
	var blob Hash
	_, err := s.Transact(t.Context(), "refs/ideate/t", func(tip Hash) (Hash, string, error) {
		var err error
		if blob, err = s.WriteBlob([]byte(prose)); err != nil {
			return ZeroHash, "", err
		}
		for i := 0; i < 2500; i++ { // about 31 bytes each: past a stored block
			e := TreeEntry{Mode: ModeFile, Name: fmt.Sprintf("f%05d", i), Hash: blob}
			if i < 20 {
				small = append(small, e)
			}
			big = append(big, e)
		}
		st, err := s.WriteTree(small)
		if err != nil {
			return ZeroHash, "", err
		}
		bt, err := s.WriteTree(big)
		if err != nil {
			return ZeroHash, "", err
		}
		root, err := s.WriteTree([]TreeEntry{{Mode: ModeDir, Name: "big", Hash: bt}, {Mode: ModeDir, Name: "small", Hash: st}})
		return root, "trees\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
	pdir := filepath.Join(dir, ".git", "objects", "pack")
	packs := packNames(t, pdir)
	if len(packs) != 1 {
		t.Fatalf("packs %v; want the write's one", packs)
	}
	stored := func(size int) int { // the object's header, zlib's 2, the block's 5, Adler-32's 4
		h := 1
		for size >>= 4; size != 0; size >>= 7 {
			h++
		}
		return h + 2 + 5 + 4
	}
	seen := map[string]int{}
	for _, line := range strings.Split(gt.Git(t, dir, "verify-pack", "-v", filepath.Join(pdir, packs[0])), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || (f[1] != "tree" && f[1] != "blob" && f[1] != "commit") {
			continue
		}
		size, _ := strconv.Atoi(f[2])
		inPack, _ := strconv.Atoi(f[3])
		isStored := inPack == size+stored(size)
		want := size < storedBelow || (f[1] == "tree" && size <= maxStoredBlock)
		if isStored != want {
			t.Errorf("%s of %d bytes: %d in the pack, stored %v; want stored %v", f[1], size, inPack, isStored, want)
		}
		seen[f[1]+map[bool]string{true: " stored", false: " deflated"}[isStored]]++
	}
	// The two trees that fit a block and the root; the tree past it; the
	// prose; the commit (deflated or stored by its size).
	if seen["tree stored"] != 2 || seen["tree deflated"] != 1 || seen["blob deflated"] != 1 || seen["commit stored"]+seen["commit deflated"] != 1 {
		t.Fatalf("objects in the pack: %v", seen)
	}
	gt.Git(t, dir, "fsck", "--strict", "--no-dangling")
}
