package gitstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// AddLocalConfig adds beside existing values; GetAllSub lists them all in
// git's order, as `git config --get-all` does.
func TestStore_AddLocalConfig(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "--add", "remote.o.fetch", "+refs/heads/*:refs/remotes/o/*")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.AddLocalConfig(context.Background(), "remote.o.fetch", "+refs/ideate/*:refs/x/*"); err != nil {
		t.Fatal(err)
	}
	want := gt.Git(t, dir, "config", "--get-all", "remote.o.fetch")
	g2, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if got := strings.Join(g2.Config().GetAllSub("remote", "o", "fetch"), "\n"); got != want || !strings.HasSuffix(got, "refs/x/*") {
		t.Fatalf("GetAllSub = %q, git config --get-all = %q", got, want)
	}
	if got := g2.Config().GetAllSub("remote", "none", "fetch"); got != nil {
		t.Fatalf("unset key: %q", got)
	}
	if err := g.AddLocalConfig(context.Background(), "not a key", "v"); apperr.CodeOf(err) != apperr.Write {
		t.Fatalf("bad key: %v", err)
	}
}
