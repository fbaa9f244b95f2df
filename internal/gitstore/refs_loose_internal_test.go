//go:build linux

package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func countLooseReads(t *testing.T) func() map[string]int {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	testHookReadLoose = func(name string) { mu.Lock(); seen[name]++; mu.Unlock() }
	t.Cleanup(func() { testHookReadLoose = nil })
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = map[string]int{}
		return out
	}
}

// A listing reads a loose ref's file once it is old enough to be cached,
// and then only when the file changed: a ref moved by git itself, or one
// rewritten in place by hand (same inode, same size), is read again, and
// every listing agrees with git for-each-ref.
func TestRefs_LooseValuesCachedUntilTheFileChanges(t *testing.T) {
	dir := gt.NewRepo(t)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reads := countLooseReads(t)
	var tips []Hash
	for i := 0; i < 20; i++ {
		tips = append(tips, writeOne(t, s, fmt.Sprintf("refs/ideate/items/%02d", i), fmt.Sprintf("v%d", i)))
	}
	agree := func(when string) {
		t.Helper()
		refs, err := s.Refs("refs/ideate/items/")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range refs {
			got = append(got, r.Hash.String()+" "+r.Name)
		}
		want := gt.Git(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/ideate/items/")
		if strings.Join(got, "\n") != want {
			t.Fatalf("%s: listing\n%s\ngit\n%s", when, strings.Join(got, "\n"), want)
		}
	}
	agree("fresh refs")
	// The listing read each file at some moment before t1: a file changed
	// less than racyLoose before t1 was younger than that when it was
	// read. (Taken before the listing, as it was, a stall inside the
	// listing made a file look young that was old by the time it was
	// read, and trusted rightly: a CI failure under load.)
	t1 := time.Now()
	if n := len(reads()); n != 20 {
		t.Fatalf("first listing read %d files, want 20", n)
	}
	// Those younger than racyLoose when the first listing read them (at
	// least the last ones written, on a machine not stalled for 100 ms)
	// must be read again.
	var young []string
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("refs/ideate/items/%02d", i)
		fi, err := os.Stat(filepath.Join(dir, ".git", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := looseKeyOf(fi); k.ctime > t1.Add(-racyLoose).UnixNano() {
			young = append(young, name)
		}
	}
	agree("fresh refs again")
	again := reads()
	for _, name := range young {
		if again[name] != 1 {
			t.Fatalf("%s, younger than %v when read, was trusted from the cache (read again: %v)", name, racyLoose, again)
		}
	}
	t.Logf("%d of 20 refs young at the first listing, all read again", len(young))
	time.Sleep(racyLoose + 20*time.Millisecond)
	agree("old refs")
	reads()
	agree("old refs, cached")
	if got := reads(); len(got) != 0 {
		t.Fatalf("unchanged old refs were read again: %v", got)
	}
	// git moves one; a hand rewrites another in place, same length.
	gt.Git(t, dir, "update-ref", "refs/ideate/items/03", tips[7].String())
	p := filepath.Join(dir, ".git", "refs", "ideate", "items", "05")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(tips[9].String() + "\n")
	f.Close()
	agree("after git and a hand moved two")
	got := reads()
	if len(got) != 2 || got["refs/ideate/items/03"] != 1 || got["refs/ideate/items/05"] != 1 {
		t.Fatalf("after two refs moved the listing read %v, want exactly those two", got)
	}
	// Moved many times in quick succession by our own writer, with
	// listings in between: never a stale value.
	for i := 0; i < 50; i++ {
		name := fmt.Sprintf("refs/ideate/items/%02d", i%4)
		cur, _ := s.Ref(name)
		h, err := s.Transact(context.Background(), name, func(tip Hash) (Hash, string, error) {
			tree, err := s.WriteTree(nil)
			return tree, fmt.Sprintf("move %d\n", i), err
		})
		if err != nil || h == cur {
			t.Fatalf("move %d: %v", i, err)
		}
		agree(fmt.Sprintf("move %d", i))
	}
}

func writeOne(t *testing.T, s *Store, ref, payload string) Hash {
	t.Helper()
	h, err := s.Transact(context.Background(), ref, func(tip Hash) (Hash, string, error) {
		b, err := s.WriteBlob([]byte(payload))
		if err != nil {
			return ZeroHash, "", err
		}
		tree, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f", Hash: b}})
		return tree, payload + "\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
