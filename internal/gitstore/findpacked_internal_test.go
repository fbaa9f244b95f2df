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
