package gitstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// TestDeleteRef_GitRunsToItsEnd: the git that deletes a ref is stopped by
// nothing its caller goes through, neither the caller's death (kill -9 of
// its process group) nor its ctx's end; it deletes the ref and leaves no
// lock. Signalled, git can leave its lock behind: it creates a lock file
// before it registers it for removal (seen as a packed-refs.lock that
// failed every later deletion). Here git waits for packed-refs.lock, which
// the test holds, while its caller is killed or cancelled; the test then
// lets it go.
func TestDeleteRef_GitRunsToItsEnd(t *testing.T) {
	for _, how := range []string{"caller killed", "ctx cancelled"} {
		t.Run(how, func(t *testing.T) {
			dir := gt.NewRepo(t)
			gt.Git(t, dir, "update-ref", "refs/ideate/x", "HEAD")
			gt.Git(t, dir, "pack-refs", "--all")
			gt.Git(t, dir, "config", "core.packedRefsTimeout", "60000")
			old := gt.Git(t, dir, "rev-parse", "refs/ideate/x")
			oldH, err := gitstore.ParseHash(old)
			if err != nil {
				t.Fatal(err)
			}
			packedLock := filepath.Join(dir, ".git", "packed-refs.lock")
			refLock := filepath.Join(dir, ".git", "refs", "ideate", "x.lock")
			if err := os.WriteFile(packedLock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(packedLock) })
			waitFor := func(what string, ok func() bool) {
				t.Helper()
				for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s: not within 20s", what)
					}
				}
			}
			exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
			var answer func() string
			if how == "caller killed" {
				p := spawn(t, "delete-ref", dir, "GITSTORE_TEST_REF=refs/ideate/x", "GITSTORE_TEST_OLD="+old)
				waitFor("git took the ref's lock", func() bool { return exists(refLock) })
				p.Kill()
				answer = func() string { return "(the caller is dead)" }
			} else {
				s, err := gitstore.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- s.UpdateRef(ctx, "refs/ideate/x", gitstore.ZeroHash, oldH) }()
				waitFor("git took the ref's lock", func() bool { return exists(refLock) })
				cancel()
				answer = func() string {
					if err := <-done; err != nil {
						return err.Error()
					}
					return "ok"
				}
			}
			time.Sleep(200 * time.Millisecond) // a signal's cleanup would be over
			if !exists(refLock) {
				t.Fatal("git gave up the deletion when its caller went")
			}
			os.Remove(packedLock)
			waitFor("git ended", func() bool { return !exists(refLock) && !exists(packedLock) })
			if a := answer(); a != "ok" && how == "ctx cancelled" {
				t.Fatalf("the cancelled UpdateRef said %s after git deleted the ref", a)
			}
			if got, _ := gt.GitErr(dir, "rev-parse", "-q", "--verify", "refs/ideate/x"); got != "" {
				t.Fatalf("refs/ideate/x is still %s", got)
			}
			gt.Fsck(t, dir)
		})
	}
}
