package teamsync_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/teamsync"
	"github.com/ideate/git-ideate/internal/teamsync/teamsynctest"
)

// plainHTTP clears what makes a push git's own (proxies), for this test.
func plainHTTP(t *testing.T) {
	for _, k := range []string{"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "GIT_ALLOW_PROTOCOL", "GIT_CURL_VERBOSE", "GIT_TRACE_CURL", "GIT_HTTP_PROXY_AUTHMETHOD"} {
		if v, ok := os.LookupEnv(k); ok {
			t.Setenv(k, v)
			os.Unsetenv(k)
		}
	}
}

// directFixture: a bare remote with receive.fsckObjects, served over
// smart HTTP (or, byPath, cloned by its path), a clone holding one item in
// step with it, and the item's next three heads written locally (claim,
// renew, release), not yet pushed.
func directFixture(t *testing.T, byPath bool) (bare string, c *clone, id string, at gitstore.Hash, next []gitstore.Hash) {
	plainHTTP(t)
	bare = newRemote(t)
	url := bare
	if !byPath {
		url = teamsynctest.ServeBare(t, bare)
	} else {
		gt.Git(t, bare, "config", "receive.fsckObjects", "true")
	}
	c = cloneOf(t, url)
	id = c.create(t, "an item")
	c.sync(t)
	at = mustRef(t, c, board.RefName(id))
	it, err := c.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	next = append(next, mustRef(t, c, board.RefName(id)))
	if _, err := c.b.Renew(t.Context(), id, it.Claim.ClaimToken, nil); err != nil {
		t.Fatal(err)
	}
	next = append(next, mustRef(t, c, board.RefName(id)))
	if _, err := c.b.Release(t.Context(), id, it.Claim.ClaimToken, "done"); err != nil {
		t.Fatal(err)
	}
	next = append(next, mustRef(t, c, board.RefName(id)))
	return bare, c, id, at, next
}

// TestDirectPush_MovesTheRefAndPassesFsck: a claim's push speaks smart
// HTTP itself (no git process), or to `git receive-pack` of a remote
// reached by path: three commits on top of the remote's head go in one
// request, the remote takes them (receive.fsckObjects checks every
// object), and its repository stays whole.
func TestDirectPush_MovesTheRefAndPassesFsck(t *testing.T) {
	t.Run("http", func(t *testing.T) { movesTheRef(t, false) })
	t.Run("path", func(t *testing.T) { movesTheRef(t, true) })
}

func movesTheRef(t *testing.T, byPath bool) {
	bare, c, id, at, next := directFixture(t, byPath)
	ref := board.RefName(id)
	res, ok, err := teamsync.DirectPush(t.Context(), c.g, "origin", ref, at, next[2])
	if err != nil || !ok {
		t.Fatalf("DirectPush: ok %v, err %v; want it made directly", ok, err)
	}
	if !res.OK || res.Ref != ref {
		t.Fatalf("DirectPush result %+v, want OK for %s", res, ref)
	}
	if got := remoteRef(t, bare, ref); got != next[2].String() {
		t.Fatalf("remote %s at %s, want %s", ref, got, next[2])
	}
	gt.Fsck(t, bare)
}

// TestDirectPush_StaleLeaseIsARace: a push whose lease names a value the
// remote no longer holds changes nothing there and is reported as a race
// (the authority then fetches and replays), not as a refusal.
func TestDirectPush_StaleLeaseIsARace(t *testing.T) {
	t.Run("http", func(t *testing.T) { staleLease(t, false) })
	t.Run("path", func(t *testing.T) { staleLease(t, true) })
}

func staleLease(t *testing.T, byPath bool) {
	bare, c, id, at, next := directFixture(t, byPath)
	ref := board.RefName(id)
	if res, ok, err := teamsync.DirectPush(t.Context(), c.g, "origin", ref, at, next[0]); err != nil || !ok || !res.OK {
		t.Fatalf("first push: %+v ok %v err %v", res, ok, err)
	}
	// The lease still names at; the remote holds next[0].
	res, ok, err := teamsync.DirectPush(t.Context(), c.g, "origin", ref, at, next[1])
	if err != nil || !ok {
		t.Fatalf("stale push: ok %v, err %v; want a direct answer", ok, err)
	}
	if res.OK || !res.Raced() {
		t.Fatalf("stale push: %+v, want refused as a race", res)
	}
	if got := remoteRef(t, bare, ref); got != next[0].String() {
		t.Fatalf("remote %s moved to %s by a stale push, want %s", ref, got, next[0])
	}
	gt.Fsck(t, bare)
}

// TestDirectPush_LeavesGitsCasesToGit: a remote reached by a relative
// path or through its own remote.<name>.receivepack, an http.* setting
// (headers, TLS, proxies are git's), and a server that wants credentials
// (403) are not pushed directly, and nothing moves there.
func TestDirectPush_LeavesGitsCasesToGit(t *testing.T) {
	bare, c, id, at, next := directFixture(t, false)
	ref := board.RefName(id)
	url := gt.Git(t, c.dir, "remote", "get-url", "origin")

	rel, err := filepath.Rel(c.dir, bare)
	if err != nil {
		t.Fatal(err)
	}
	gt.Git(t, c.dir, "remote", "add", "relative", rel)
	gt.Git(t, c.dir, "remote", "add", "ownreceivepack", bare)
	gt.Git(t, c.dir, "config", "remote.ownreceivepack.receivepack", "git receive-pack")
	gt.Git(t, c.dir, "config", "--local", "http.extraHeader", "X-Team: a")
	gt.Git(t, c.dir, "remote", "add", "withheader", url)
	forbidden := newRemote(t)
	gt.Git(t, c.dir, "remote", "add", "forbidden", teamsynctest.StartHTTP(t, filepath.Dir(forbidden))+filepath.Base(forbidden))
	g, err := gitstore.Open(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, remote := range []string{"relative", "ownreceivepack", "withheader"} {
		if _, ok, err := teamsync.DirectPush(t.Context(), g, remote, ref, at, next[0]); ok || err != nil {
			t.Fatalf("remote %s: ok %v err %v, want it left to git push", remote, ok, err)
		}
	}
	gt.Git(t, c.dir, "config", "--local", "--unset", "http.extraHeader")
	g2, err := gitstore.Open(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if _, ok, err := teamsync.DirectPush(t.Context(), g2, "forbidden", ref, at, next[0]); ok || err != nil {
		t.Fatalf("a server answering 403: ok %v err %v, want it left to git push", ok, err)
	}
	if got := remoteRef(t, bare, ref); got != at.String() {
		t.Fatalf("remote %s moved to %s, want it still at %s", ref, got, at)
	}
}

// TestDirectPush_AClaimRunsNoGitPush: a claim through the remote authority
// over plain smart HTTP, or to a remote reached by path, makes its push
// directly: no `git push` runs (every git the process starts goes through
// a wrapper that logs it), and the remote holds the claim.
func TestDirectPush_AClaimRunsNoGitPush(t *testing.T) {
	t.Run("http", func(t *testing.T) { claimRunsNoGitPush(t, false) })
	t.Run("path", func(t *testing.T) { claimRunsNoGitPush(t, true) })
}

func claimRunsNoGitPush(t *testing.T, byPath bool) {
	plainHTTP(t)
	bare := newRemote(t)
	url := bare
	if !byPath {
		url = teamsynctest.ServeBare(t, bare)
	}
	c := cloneOf(t, url)
	id := c.create(t, "an item")
	c.sync(t)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "log")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\necho \"$@\" >> "+log+"\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	c.authoritative()
	it, err := c.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := remoteRef(t, bare, board.RefName(id)); got != mustRef(t, c, board.RefName(id)).String() {
		t.Fatalf("the remote holds %s at %s, not the claim", id, got)
	}
	ran, _ := os.ReadFile(log)
	for _, l := range strings.Split(string(ran), "\n") {
		if strings.Contains(" "+l+" ", " push ") {
			t.Fatalf("the claim (token %d) ran git push: %q", it.Claim.ClaimToken, l)
		}
	}
}
