package odb

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// residentKiB is the resident memory of this process's mappings of path,
// from /proc/self/smaps.
func residentKiB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-") && strings.Contains(fs[3], ":"):
			in = len(fs) >= 6 && fs[5] == path
		case in && fs[0] == "Rss:":
			n, _ := strconv.Atoi(fs[1])
			sum += n
		}
	}
	return sum
}

// A read of more than releaseEvery bytes of objects lets go of the mapped
// pages: the pack's mapping holds none resident just after, and every
// object still reads as git has it (the pages come back from the file).
func TestReleasePages_MappedPagesLeaveAndComeBack(t *testing.T) {
	repo := initRepo(t, filepath.Join(t.TempDir(), "r"))
	deepHistory(t, repo, 120, "main")
	runGit(t, repo, nil, "repack", "-a", "-d", "-q", "--window=0") // no deltas: every blob read is its whole size
	packs := packFiles(t, objectsDir(repo))
	if len(packs) != 1 {
		t.Fatalf("%d packs, want 1", len(packs))
	}
	db, err := Open(objectsDir(repo))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := releaseCount.Load()
	compareAll(t, repo, db)
	if releaseCount.Load() == before {
		t.Fatalf("no release while reading every object (%d KiB resident)", residentKiB(t, packs[0]))
	}
	db.mu.RLock()
	db.releasePages()
	db.mu.RUnlock()
	if kib := residentKiB(t, packs[0]); kib != 0 {
		t.Fatalf("%d KiB of the pack resident just after a release", kib)
	}
	compareAll(t, repo, db)
	if kib := residentKiB(t, packs[0]); kib == 0 {
		t.Fatal("no page of the pack resident after reading it again: the test reads nothing")
	}
}

// Readers on several goroutines while the pages are released under them
// (every releaseEvery bytes any of them reads) each read what git has.
func TestReleasePages_ConcurrentReaders(t *testing.T) {
	repo := initRepo(t, filepath.Join(t.TempDir(), "r"))
	deepHistory(t, repo, 80, "main")
	runGit(t, repo, nil, "repack", "-a", "-d", "-q")
	objs := allObjects(t, repo)
	db, err := Open(objectsDir(repo))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := releaseCount.Load()
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for round := range 3 {
				for i := range objs {
					o := objs[(i+g*len(objs)/4)%len(objs)]
					_, data, err := db.Read(o.hash)
					if err != nil {
						errs <- err
						return
					}
					if string(data) != string(o.data) {
						errs <- fmt.Errorf("goroutine %d round %d: %s differs from git", g, round, o.hash)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if releaseCount.Load()-before < 2 {
		t.Fatalf("%d releases while four readers read everything three times", releaseCount.Load()-before)
	}
}
