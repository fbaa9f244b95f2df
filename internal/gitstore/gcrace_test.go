package gitstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
)

// The fact the writer's gc.pid test rests on (see gcRunning): git gc
// deletes a pack index it lists without its pack, the pack's .keep with
// it. A listing that runs while a writer puts a pack in place can be
// such a listing.
func TestGitGC_DeletesAnIndexItListsWithoutItsPack(t *testing.T) {
	src := gt.NewRepo(t)
	gt.Git(t, src, "commit", "-q", "--allow-empty", "-m", "another history")
	gt.Git(t, src, "repack", "-q", "-a", "-d")
	idx, _ := filepath.Glob(filepath.Join(src, ".git", "objects", "pack", "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("source packs: %v", idx)
	}
	dir := gt.NewRepo(t)
	name := strings.TrimSuffix(filepath.Base(idx[0]), ".idx")
	pdir := filepath.Join(dir, ".git", "objects", "pack")
	os.MkdirAll(pdir, 0o777)
	data, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, body string }{{name + ".idx", string(data)}, {name + ".keep", "kept\n"}} {
		if err := os.WriteFile(filepath.Join(pdir, f.name), []byte(f.body), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(pdir, name+".pack")); err == nil {
		t.Fatal("the pack is there")
	}
	gt.Git(t, dir, "gc", "-q")
	for _, ext := range []string{".idx", ".keep"} {
		if _, err := os.Stat(filepath.Join(pdir, name+ext)); err == nil {
			t.Errorf("git gc left %s%s: the premise of gcRunning no longer holds", name, ext)
		}
	}
}

// Eight writer processes append with a pack per transaction while `git gc
// --auto` runs back to back (gc.auto=50, so each one repacks): every
// commit the ref reaches stays readable. Before writers checked gc.pid,
// one round in about nine lost a commit (git gc's last listing saw a
// writer's .idx without its .pack and deleted it). GITSTORE_GC_ROUNDS
// runs more rounds.
func TestStore_Transact_RaceWithGitGC(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("GITSTORE_GC_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	for r := 0; r < rounds && !t.Failed(); r++ {
		gcRaceRound(t)
	}
}

func gcRaceRound(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "gc.auto", "50")
	const ref = "refs/ideate/counter"
	const workers, each = 8, 80
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var gcErr error
	gcs := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			gcs++
			if out, err := gt.GitErr(dir, "gc", "--auto", "--quiet"); err != nil && gcErr == nil {
				gcErr = fmt.Errorf("git gc --auto: %v %s", err, out)
			}
		}
	}()
	var ps []*proctest.Proc
	for i := 0; i < workers; i++ {
		ps = append(ps, spawn(t, "counter", dir, "GITSTORE_TEST_REF="+ref, "GITSTORE_TEST_N="+strconv.Itoa(each)))
	}
	for _, p := range ps {
		if err := p.WaitErr(); err != nil {
			t.Errorf("worker: %v\n%s", err, p.Stderr())
		}
	}
	close(stop)
	wg.Wait()
	if gcErr != nil {
		t.Fatal(gcErr)
	}
	out, err := gt.GitErr(dir, "rev-list", "--count", ref)
	if err != nil {
		t.Fatalf("git rev-list (after %d gc runs): %v\n%s", gcs, err, out)
	}
	if got, _ := strconv.Atoi(out); got != workers*each {
		t.Fatalf("chain has %s commits, want %d", out, workers*each)
	}
	gt.Fsck(t, dir)
}
