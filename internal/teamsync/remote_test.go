package teamsync_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/teamsync"
)

// TestSync_PushesThroughTheNamedRemote: the user's remote.origin.*
// settings apply to a sync's push. remote.origin.receivepack names a
// wrapper that leaves a mark and runs git-receive-pack; a push under any
// other name than origin would not run it.
func TestSync_PushesThroughTheNamedRemote(t *testing.T) {
	bare := newRemote(t)
	a := cloneOf(t, bare)
	mark := filepath.Join(t.TempDir(), "mark")
	wrapper := filepath.Join(t.TempDir(), "receive-pack")
	os.WriteFile(wrapper, []byte("#!/bin/sh\necho pushed >> '"+mark+"'\nexec git-receive-pack \"$@\"\n"), 0o755)
	gt.Git(t, a.dir, "config", "remote.origin.receivepack", wrapper)
	a.note(t, "through origin")
	a.create(t, "an item")
	sum := a.sync(t)
	if sum.RefsPushed == 0 {
		t.Fatalf("nothing pushed: %+v", sum)
	}
	if b, err := os.ReadFile(mark); err != nil || !strings.Contains(string(b), "pushed") {
		t.Fatalf("the sync's push did not go through remote.origin.receivepack (%v)", err)
	}
	if remoteRef(t, bare, "refs/ideate/record") == "" {
		t.Fatal("the record is not at the remote")
	}
}

// TestSync_FsckRefusalNamesTheRefAtFault: a remote with
// receive.fsckObjects refuses a pack holding a bad commit; the sync says
// which ref carried it and the server's words, not "unpacker error" on
// refs/ideate/record.
func TestSync_FsckRefusalNamesTheRefAtFault(t *testing.T) {
	bare := newRemote(t)
	gt.Git(t, bare, "config", "receive.fsckObjects", "true")
	a := cloneOf(t, bare)
	a.note(t, "a fine record")
	// A commit git's fsck refuses (a NUL in its message), on the notes ref.
	raw := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@example.com> 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\n\nbad\x00note\n"
	cmd := exec.Command("git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin")
	cmd.Dir = a.dir
	cmd.Stdin = strings.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.TrimSpace(string(out))
	gt.Git(t, a.dir, "update-ref", gitstore.NotesRef, bad)
	y := &teamsync.Syncer{Git: a.g, Record: a.rec, Board: a.b, Remote: "origin"}
	_, err = y.Sync(t.Context())
	if !apperr.Is(err, gitstore.RemoteFailed) {
		t.Fatalf("sync of a bad commit: %v, want REMOTE", err)
	}
	msg := apperr.Message(err)
	t.Logf("sync said: %s", msg)
	if !strings.Contains(msg, gitstore.NotesRef) || strings.Contains(msg, "refs/ideate/record") {
		t.Fatalf("the refusal does not name %s alone: %s", gitstore.NotesRef, msg)
	}
	if !strings.Contains(msg, bad) && !strings.Contains(strings.ToLower(msg), "nul") {
		t.Fatalf("the refusal does not carry the server's reason: %s", msg)
	}
}

// TestRemote_ForbiddenIsSaid: a smart-HTTP server that refuses pushes
// (git http-backend without http.receivepack answers 403) — a sync and a
// remote-authoritative claim say "forbidden", never that the remote did
// not answer.
func TestRemote_ForbiddenIsSaid(t *testing.T) {
	bare := newRemote(t)
	url := startHTTP(t, filepath.Dir(bare)) + filepath.Base(bare)
	a := cloneOf(t, url)
	id := a.create(t, "an item")
	y := &teamsync.Syncer{Git: a.g, Record: a.rec, Board: a.b, Remote: "origin"}
	_, err := y.Sync(t.Context())
	if !apperr.Is(err, gitstore.RemoteFailed) || !strings.Contains(apperr.Message(err), "forbidden") {
		t.Fatalf("sync to a 403 server: %v, want REMOTE saying forbidden", err)
	}
	// Put the item at the remote by path, fetch it, then claim through
	// the authority over HTTP.
	gt.Git(t, a.dir, "push", "-q", bare, board.RefName(id)+":"+board.RefName(id))
	if err := a.g.Fetch(t.Context(), "origin", gitstore.RemoteOptions{}); err != nil {
		t.Fatal(err)
	}
	a.authoritative()
	_, err = a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
	if !apperr.Is(err, gitstore.RemoteFailed) {
		t.Fatalf("claim against a 403 server: %v, want REMOTE", err)
	}
	msg := apperr.Message(err)
	t.Logf("claim said: %s", msg)
	if !strings.Contains(msg, "forbidden") || strings.Contains(msg, "did not answer") {
		t.Fatalf("claim against a 403 server: %q, want it to say forbidden", msg)
	}
}
