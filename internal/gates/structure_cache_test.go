package gates

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// plantedRepo commits every language's planted case into one real
// repository: the bases, then the task's files. It returns the store,
// the two trees and the changed paths.
func plantedRepo(t *testing.T) (*gitstore.Store, gitstore.Hash, gitstore.Hash, []string) {
	t.Helper()
	dir := gt.NewRepo(t)
	put := func(files map[string]string, prefix string) []string {
		var ps []string
		for p, s := range files {
			full := filepath.Join(dir, prefix, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, prefix+"/"+p)
		}
		return ps
	}
	for lang, c := range structCases {
		put(c.base, lang)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	base := gt.Git(t, dir, "rev-parse", "HEAD^{tree}")
	var changed []string
	for lang, c := range structCases {
		changed = append(changed, put(c.added, lang)...)
	}
	sort.Strings(changed)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "task")
	head := gt.Git(t, dir, "rev-parse", "HEAD^{tree}")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	bh, _ := gitstore.ParseHash(base)
	hh, _ := gitstore.ParseHash(head)
	return g, bh, hh, changed
}

// TestCheckStructure_CacheColdWarmCorrupt: the verdict is the same with
// no cache, a cold one, a warm one, a corrupt one and one that is not a
// file; and the warm check reads the cache rather than the blobs.
func TestCheckStructure_CacheColdWarmCorrupt(t *testing.T) {
	g, base, head, changed := plantedRepo(t)
	ctx := context.Background()
	sf := StructureFacts{Git: g, Base: base, Head: head, Changed: changed, Config: DefaultStructure}
	check := func(sf StructureFacts) string {
		t.Helper()
		res, err := CheckStructure(ctx, sf)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	noCache := sf
	noCache.NoCache = true
	want := check(noCache)
	// The planted cases: each language's orphan, copy and helper.
	for _, c := range structCases {
		for _, n := range []string{c.orphan, c.copyOf, c.helper} {
			if !strings.Contains(want, n) {
				t.Fatalf("no finding on %s: %s", n, want)
			}
		}
	}
	cache := defaultFactsCache(g).file
	if _, err := os.Stat(cache); err == nil {
		t.Fatalf("NoCache wrote %s", cache)
	}
	if got := check(sf); got != want {
		t.Fatalf("cold cache:\n%s\nwant:\n%s", got, want)
	}
	st, err := os.Stat(cache)
	if err != nil {
		t.Fatalf("the cold check left no cache: %v", err)
	}
	if got := check(sf); got != want {
		t.Fatalf("warm cache:\n%s\nwant:\n%s", got, want)
	}
	if st2, _ := os.Stat(cache); !st2.ModTime().Equal(st.ModTime()) || st2.Size() != st.Size() {
		t.Errorf("a warm check with nothing new rewrote the cache")
	}
	// The warm check reads no blob: every entry comes from the cache.
	cached := factsCache{file: cache}.load()
	src, err := newTreeSource(g, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range src.paths {
		if cached[factsKey{p, src.blobs[p]}] == nil {
			t.Errorf("%s is not in the cache", p)
		}
	}
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := map[string][]byte{
		"empty":       {},
		"truncated":   good[:len(good)/2],
		"flipped":     flip(good, len(good)-10),
		"bad sum":     flip(good, len(factsMagic)+3),
		"other magic": append([]byte("ideate structure facts v0\n"), good[len(factsMagic):]...),
	}
	for name, b := range corrupt {
		if err := os.WriteFile(cache, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := check(sf); got != want {
			t.Fatalf("%s cache:\n%s\nwant:\n%s", name, got, want)
		}
		if again, _ := os.ReadFile(cache); string(again) == string(b) {
			t.Errorf("%s cache: not rewritten", name)
		}
	}
	// An entry holding another path's facts is not used. (The checksum
	// guards against a torn or damaged file, not against a writer that
	// lies about a blob: whoever can write the git directory can change
	// the repository itself.)
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	lie := map[factsKey]*fileFacts{}
	for k, ff := range cached {
		lie[factsKey{k.path, k.blob}] = ff
	}
	// Swap two planted files' facts between their keys.
	a, b := factsKey{"go/util/util.go", src.blobs["go/util/util.go"]}, factsKey{"go/report/report.go", src.blobs["go/report/report.go"]}
	if lie[a] == nil || lie[b] == nil {
		t.Fatalf("no entries for %v and %v", a, b)
	}
	lie[a], lie[b] = lie[b], lie[a]
	factsCache{file: cache}.store(lie)
	if got := check(sf); got != want {
		t.Fatalf("swapped entries:\n%s\nwant:\n%s", got, want)
	}
	// A cache path that is a directory: no cache, same verdict.
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := check(sf); got != want {
		t.Fatalf("cache is a directory:\n%s\nwant:\n%s", got, want)
	}
}

func flip(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0xff
	return out
}
