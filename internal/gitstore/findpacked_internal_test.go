package gitstore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// findPacked agrees with a parse of the whole file for every name in it and
// for names around each (before the first, after the last, between two, a
// prefix of one, one longer than one), on files git wrote: annotated tags
// (peeled lines), nested names, one ref and many.
func TestFindPacked_GitsOwnFile(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	head := strings.TrimSpace(gt.Git(t, dir, "rev-parse", "HEAD"))
	var b strings.Builder
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 700 {
		name := fmt.Sprintf("refs/ideate/board/items/01K%06d%03d", rng.IntN(1000000), i)
		if i%7 == 0 {
			name = fmt.Sprintf("refs/ideate/a/%d/b", i)
		}
		fmt.Fprintf(&b, "create %s %s\n", name, head)
	}
	gt.GitStdin(t, dir, b.String(), "update-ref", "--stdin")
	for i := range 30 {
		gt.Git(t, dir, "tag", "-a", "-m", "t", fmt.Sprintf("v%d", i*13%30))
	}
	gt.Git(t, dir, "pack-refs", "--all")
	data, err := os.ReadFile(filepath.Join(dir, ".git", "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n^") || !strings.Contains(strings.SplitN(string(data), "\n", 2)[0], " sorted") {
		t.Fatalf("git wrote no peeled line or no sorted trait:\n%.300s", data)
	}
	checkFindPacked(t, data, true)
}

// The same on made-up files: sorted with peeled lines and CRLF, and a
// file without the trait (in order or not) is scanned.
func TestFindPacked_EveryNameAndItsNeighbours(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := rng.IntN(40)
		names := map[string]bool{}
		for len(names) < n {
			names[fmt.Sprintf("refs/x/%s", strings.Repeat("ab", rng.IntN(3))+fmt.Sprint(rng.IntN(50)))] = true
		}
		sorted := make([]string, 0, n)
		for k := range names {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		crlf := round%5 == 4
		var b strings.Builder
		header := "# pack-refs with: peeled fully-peeled sorted "
		switch round % 4 {
		case 1:
			header = "# pack-refs with: peeled"
		case 2:
			rng.Shuffle(len(sorted), func(i, j int) { sorted[i], sorted[j] = sorted[j], sorted[i] })
			header = "# pack-refs with: peeled fully-peeled"
		}
		eol := "\n"
		if crlf {
			eol = "\r\n"
		}
		b.WriteString(header + eol)
		for _, name := range sorted {
			fmt.Fprintf(&b, "%040x %s%s", rng.Uint64(), name, eol)
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "^%040x%s", rng.Uint64(), eol)
			}
		}
		data := []byte(b.String())
		if rng.IntN(2) == 0 {
			data = []byte(strings.TrimSuffix(string(data), eol))
		}
		checkFindPacked(t, data, round%4 == 0 || round%4 == 3)
	}
}

func checkFindPacked(t *testing.T, data []byte, trustOrder bool) {
	t.Helper()
	refs := parsePacked(data)
	want := map[string]Hash{}
	for _, r := range refs {
		want[r.Name] = r.Hash
	}
	var probes []string
	for _, r := range refs {
		probes = append(probes, r.Name, r.Name+"0", r.Name[:len(r.Name)-1], r.Name+"/x", r.Name[:len(r.Name)-1]+"~")
	}
	probes = append(probes, "refs/", "refs/zzzz", "a", "refs/ideate/board/items/")
	for _, p := range probes {
		if got := findPacked(data, p); got != want[p] {
			t.Fatalf("findPacked(%q) = %v, want %v in:\n%s", p, got, want[p], data)
		}
		if _, ok := searchSorted(data, p); ok != trustOrder {
			t.Fatalf("searchSorted(%q) searched: %v, want %v (a sorted file in git's form is searched, never scanned)", p, ok, trustOrder)
		}
	}
}

// RefPartsVersion names the packed-refs its packed part came from by its
// content, and LooseRefsAt lists the loose refs only while packed-refs
// holds that content: a pack-refs, a deletion or a rewrite in place with
// the same size declines it; a rewrite back to the same content does not.
func TestLooseRefsAt_OnlyWhilePackedRefsHoldsTheVersion(t *testing.T) {
	dir := gt.NewRepo(t)
	head := strings.TrimSpace(gt.Git(t, dir, "rev-parse", "HEAD"))
	for i := range 5 {
		gt.Git(t, dir, "update-ref", fmt.Sprintf("refs/ideate/x/%d", i), head)
	}
	gt.Git(t, dir, "pack-refs", "--all")
	gt.Git(t, dir, "update-ref", "refs/ideate/x/loose", head)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	packed, loose, v, err := s.RefPartsVersion("refs/ideate/x/")
	if err != nil || len(packed) != 5 || len(loose) != 1 || v == "" {
		t.Fatalf("RefPartsVersion = %d packed, %d loose, %q, %v", len(packed), len(loose), v, err)
	}
	if l, ok, err := s.LooseRefsAt("refs/ideate/x/", v); err != nil || !ok || len(l) != 1 || l[0] != loose[0] {
		t.Fatalf("LooseRefsAt at its own version = %v, %v, %v", l, ok, err)
	}
	decline := func(step string) {
		t.Helper()
		if _, ok, err := s.LooseRefsAt("refs/ideate/x/", v); err != nil || ok {
			t.Fatalf("%s: LooseRefsAt listed at a version packed-refs no longer holds (%v)", step, err)
		}
	}
	path := filepath.Join(dir, ".git", "packed-refs")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Same size, same inode: one value changed in place.
	other := strings.Replace(string(orig), head[:8], "00000000", 1)
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	decline("rewritten in place")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.LooseRefsAt("refs/ideate/x/", v); !ok {
		t.Fatal("the same content again is not the same version")
	}
	gt.Git(t, dir, "pack-refs", "--all")
	decline("after pack-refs")
	os.Remove(path)
	if _, _, v2, _ := s.RefPartsVersion("refs/ideate/x/"); v2 != "none" {
		t.Fatalf("no packed-refs is version %q, want none", v2)
	}
	if _, ok, _ := s.LooseRefsAt("refs/ideate/x/", "none"); !ok {
		t.Fatal("no packed-refs, named none, declined")
	}
}

// contentHash tells apart every file that differs from another in one
// byte, one bit of it, or its length (lengths 0 to 300: the tail loop and
// both lanes).
func TestContentHash_OneByteApart(t *testing.T) {
	seen := map[uint64]string{}
	add := func(b []byte) {
		h := contentHash(b)
		if prev, ok := seen[h]; ok && prev != string(b) {
			t.Fatalf("%q and %q hash alike", prev, b)
		}
		seen[h] = string(b)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 300; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = byte(rng.IntN(256))
		}
		add(base)
		for i := 0; i < n; i++ {
			for _, flip := range []byte{1, 0x80, 0xff} {
				b := append([]byte(nil), base...)
				b[i] ^= flip
				add(b)
			}
		}
	}
}

func BenchmarkContentHash100KB(b *testing.B) {
	data := make([]byte, 100<<10)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		contentHash(data)
	}
}
