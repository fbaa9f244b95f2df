package gitstore

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// inflate reads one zlib stream of appendDeflated's back, Adler-32 checked.
func inflate(t *testing.T, stream []byte) []byte {
	t.Helper()
	r, err := zlib.NewReader(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}

// randomBytes returns a maker of n random bytes, seeded with seed.
func randomBytes(seed uint64) func(n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	return func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
}

func deflated(data []byte) []byte {
	var buf bytes.Buffer
	appendDeflated(&buf, data)
	return buf.Bytes()
}

// TestAppendDeflated_InflatesToItsInput: every kind of input comes back
// whole through compress/zlib's reader, which checks the Adler-32 trailer;
// text shrinks, and what does not shrink is stored instead.
func TestAppendDeflated_InflatesToItsInput(t *testing.T) {
	random := randomBytes(1)
	item := []byte(`{"schema":1,"id":"01JD8Y3K6Q2V7T9XW4M5N0PQRS","title":"Wire the gate's verdict into the execution log",` +
		`"status":"in_progress","claim":{"holder":{"human":"bench","agent":"claude"},"claim_token":3,` +
		`"acquired_at":"2026-12-02T04:21:00.000Z","lease_expires":"2026-12-02T04:51:00.000Z"},"depends_on":[]}`)
	far := append(append(bytes.Repeat([]byte("a record line that repeats\n"), 10), random(40000)...), bytes.Repeat([]byte("a record line that repeats\n"), 10)...)
	cases := map[string][]byte{
		"empty":        {},
		"one byte":     {'x'},
		"three bytes":  []byte("abc"),
		"four equal":   []byte("aaaa"),
		"five equal":   []byte("aaaaa"),
		"a run":        bytes.Repeat([]byte{'z'}, 1000), // copies overlapping their source (distance 1)
		"run of 258+4": bytes.Repeat([]byte{0}, 262),
		"all bytes": func() []byte {
			b := make([]byte, 512)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}(),
		"item json":             item,
		"items":                 bytes.Repeat(item, 40),
		"random":                random(3000),
		"random, large":         random(70000), // past a stored block: deflated however long
		"farther than a window": far,
		"high bytes":            bytes.Repeat([]byte{0xff, 0x90, 0xfe}, 300),
	}
	for name, data := range cases {
		out := deflated(data)
		if got := inflate(t, out); !bytes.Equal(got, data) {
			t.Fatalf("%s: inflated %d bytes, not the %d given", name, len(got), len(data))
		}
		if len(data) <= maxStoredBlock && len(out) > len(data)+11 {
			t.Errorf("%s: %d bytes from %d, longer than stored", name, len(out), len(data))
		}
	}
	if n := len(deflated(bytes.Repeat(item, 40))); n > 2*len(item) {
		t.Errorf("40 copies of a %d-byte item deflated to %d bytes", len(item), n)
	}
	if n, of := len(deflated(item)), len(item); n*20 > of*19 {
		t.Errorf("an item of %d bytes deflated to %d: under 5 %% saved", of, n)
	}
}

// TestAppendDeflated_EveryLengthAndDistanceCode: a copy of each length
// from 4 to 258, and of each distance code's least and greatest distance,
// inflates to its input (a wrong code or extra-bit count would not).
func TestAppendDeflated_EveryLengthAndDistanceCode(t *testing.T) {
	random := randomBytes(3)
	check := func(what string, data []byte) {
		t.Helper()
		if got := inflate(t, deflated(data)); !bytes.Equal(got, data) {
			t.Fatalf("%s: did not come back", what)
		}
	}
	for n := 4; n <= maxMatch; n++ {
		src := random(300)
		check(fmt.Sprintf("length %d", n), append(append(append([]byte{}, src...), src[:n]...), random(5)...))
	}
	var dists []int
	for i, b := range distBase {
		dists = append(dists, int(b))
		dists = append(dists, int(b)+(1<<distExtra[i])-1)
	}
	for _, d := range dists {
		if d < 4 {
			d = 4 // a copy of four bytes needs them first
		}
		src := random(d)
		check(fmt.Sprintf("distance %d", d), append(append(append([]byte{}, src...), src[:min(d, 40)]...), random(3)...))
	}
}

// FuzzAppendDeflated: whatever the input, the stream inflates to it.
func FuzzAppendDeflated(f *testing.F) {
	f.Add([]byte("a record"))
	f.Add(bytes.Repeat([]byte("ab"), 200))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if got := inflate(t, deflated(data)); !bytes.Equal(got, data) {
			t.Fatal("did not come back")
		}
	})
}

// TestWritePack_DeflatedObjectsReadByGit: a write's pack holding objects
// deflated by appendDeflated (and one past deflateBelow, by compress/zlib)
// reads back byte for byte through git cat-file, and passes fsck --strict.
func TestWritePack_DeflatedObjectsReadByGit(t *testing.T) {
	s, dir := packStore(t, false)
	blobs := [][]byte{
		[]byte(strings.Repeat("The lockfile CAS held under contention. ", 10)),
		bytes.Repeat([]byte(`{"k":"v","n":12}`), 500),
		[]byte(strings.Repeat("x", deflateBelow+100)),
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
