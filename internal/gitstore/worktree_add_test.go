package gitstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// Throwaway checkouts (a gate's run at a task's base) made at the same
// time in one repository, each named base in a directory of its own, as
// concurrent gates make them: git derives each administrative directory
// from the name (base, base1, …) and reads the others' files while one is
// being written ("failed to read …/worktrees/base/commondir"), so an add
// can fail beside another; each must still end up checked out, and none
// left registered once discarded.
func TestAddWorktree_DetachedAddsAtOnceInOneRepository(t *testing.T) {
	gt.Isolate(t)
	dir := gt.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	base, err := gitstore.ParseHash(gt.Git(t, dir, "rev-parse", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := gitstore.Open(dir) // a store of its own, as each gate's process has
			if err != nil {
				errs <- err
				return
			}
			for r := 0; r < rounds; r++ {
				path := filepath.Join(t.TempDir(), "base")
				if err := g.AddWorktree(context.Background(), path, "", base); err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", w, r, err)
					continue
				}
				if b, err := os.ReadFile(filepath.Join(path, "f.txt")); err != nil || string(b) != "base\n" {
					errs <- fmt.Errorf("worker %d round %d: f.txt %q %v", w, r, b, err)
				}
				if err := g.DiscardWorktree(context.Background(), path); err != nil {
					errs <- fmt.Errorf("worker %d round %d: discard: %w", w, r, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if out := gt.Git(t, dir, "worktree", "list", "--porcelain"); strings.Count("\n"+out, "\nworktree ") != 1 {
		t.Fatalf("worktrees left registered:\n%s", out)
	}
}
