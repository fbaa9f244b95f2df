package gitstore_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// TestMaintenance_FsckNeverSeesMissingObjects: appends with the background
// repack on (gc.auto and gc.autoPackLimit low, so it runs every few
// writes, both the plain and the -a kind), and `git fsck` run right after
// each burst of writes, while a repack may be running. fsck must never
// report a missing object: maintenance may not take away a loose object
// or a pack that a reader which listed it a moment ago still looks for.
func TestMaintenance_FsckNeverSeesMissingObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	dir := gt.NewRepo(t)
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "")
	gt.Git(t, dir, "config", "gc.auto", "20")
	gt.Git(t, dir, "config", "gc.autoPackLimit", "3")
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const rounds, burst = 30, 40
	const ref = "refs/ideate/counter"
	bad := 0
	for r := 0; r < rounds; r++ {
		for i := 0; i < burst; i++ {
			if _, err := s.Transact(t.Context(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
				blob, err := s.WriteBlob([]byte(fmt.Sprintf("%d %d", r, i)))
				if err != nil {
					return gitstore.ZeroHash, "", err
				}
				tree, err := s.WriteTree([]gitstore.TreeEntry{{Mode: gitstore.ModeFile, Name: "n", Hash: blob}})
				return tree, fmt.Sprintf("round %d seq %d\n", r, i), err
			}); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", "fsck", "--no-progress", "--no-dangling")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "missing") {
			bad++
			t.Errorf("round %d: git fsck: %v\n%s", r, err, out)
		}
	}
	// Let the last repack finish, then the repository is whole.
	lock := filepath.Join(dir, ".git", "ideate", "maintenance.lock")
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(lock); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d of %d fsck runs saw a broken repository", bad, rounds)
	gt.Fsck(t, dir)
}
