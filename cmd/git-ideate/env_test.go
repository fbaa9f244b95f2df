package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// The store runs with the lock settings of git config ideate.*, read by
// package config and handed down by Env: with a young lock held on the
// record ref, a 200 ms ideate.lockTimeoutMs gives up in well under the
// 10 s default.
func TestEnv_StoreSettingsReachTheStore(t *testing.T) {
	dir := gt.NewRepo(t)
	mustOK(t, cli(t, dir, "", "record", "append", "--kind", "note", "--claim", "first"))
	lock := filepath.Join(dir, ".git", "refs", "ideate", "record.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "config", "ideate.lockTimeoutMs", "200")
	gt.Git(t, dir, "config", "ideate.staleLockMs", "3600000")
	start := time.Now()
	r := cli(t, dir, "", "record", "append", "--kind", "note", "--claim", "second")
	took := time.Since(start)
	if r.code != 1 || !strings.Contains(r.err, "LOCKED") || !strings.Contains(r.err, lock) {
		t.Fatalf("exit %d, stderr %q; want LOCKED naming %s", r.code, r.err, lock)
	}
	if took > 5*time.Second {
		t.Fatalf("the append waited %v: ideate.lockTimeoutMs did not reach the store", took)
	}
}

// A store setting git config holds but cannot be parsed stops the command
// with CONFIG_INVALID naming the key, and writes nothing; a broken
// .ideate.json does not stop a command that never reads it.
func TestEnv_BadConfig(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.staleLockMs", "soon")
	r := cli(t, dir, "", "record", "append", "--kind", "note", "--claim", "x")
	if r.code != 1 || !strings.Contains(r.err, "CONFIG_INVALID") || !strings.Contains(r.err, "ideate.staleLockMs") {
		t.Fatalf("exit %d, stderr %q; want CONFIG_INVALID naming ideate.staleLockMs", r.code, r.err)
	}
	if refs := gt.Git(t, dir, "for-each-ref", "refs/ideate/"); refs != "" {
		t.Fatalf("a refused command wrote refs:\n%s", refs)
	}
	gt.Git(t, dir, "config", "--unset", "ideate.staleLockMs")
	if err := os.WriteFile(filepath.Join(dir, ".ideate.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, cli(t, dir, "", "record", "append", "--kind", "note", "--claim", "x"))
	if r := cli(t, dir, "", "steering", "read"); r.code != 1 || !strings.Contains(r.err, "CONFIG_PARSE") {
		t.Fatalf("steering read with a broken .ideate.json: exit %d, stderr %q", r.code, r.err)
	}
}

// A command run by main leaves its packs mapped at Close (the process
// exits next; unmapping each pack first cost a CLI call about 1.6 ms at
// 272 packs); any other Env, such as a test's, unmaps them.
func TestEnv_CloseLeavesPacksMappedOnlyWhenExiting(t *testing.T) {
	dir := gt.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("packed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "add", "f")
	gt.Git(t, dir, "commit", "-qm", "f")
	gt.Git(t, dir, "repack", "-adq")
	blob, err := gitstore.ParseHash(gt.Git(t, dir, "rev-parse", "HEAD:f"))
	if err != nil {
		t.Fatal(err)
	}
	for _, exiting := range []bool{true, false} {
		env := &Env{Dir: dir, Exiting: exiting}
		g, err := env.Git()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.ReadBlob(blob); err != nil {
			t.Fatal(err)
		}
		env.Close()
		_, err = g.ReadBlob(blob)
		if exiting && err != nil {
			t.Fatalf("exiting: a read after Close failed (%v): the packs were unmapped", err)
		}
		if !exiting && err == nil {
			t.Fatal("not exiting: a read after Close succeeded: the packs are still mapped")
		}
	}
}

// A CLI call leaves the index line of the item it claimed in the board's
// index file for the next call; the MCP server keeps it in memory and
// adds no line.
func TestEnv_BoardIndexLinesFromCallsNotTheServer(t *testing.T) {
	dir := gt.NewRepo(t)
	var ids []string
	for _, title := range []string{"a", "b"} {
		r := bin(t, dir, "", "work", "create", "--title", title, "--spec", "s", "--spec-format", "plan/outline", "--human", "dan", "--json")
		mustOK(t, r)
		var it struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(r.out), &it); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.ID)
	}
	mustOK(t, bin(t, dir, "", "work", "list")) // writes the index file
	path := filepath.Join(dir, ".git", "ideate", "board-index.v2")
	lines := func() int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	before := lines()
	mustOK(t, bin(t, dir, "", "work", "claim", "--id", ids[0], "--human", "dan"))
	if got := lines(); got != before+1 {
		t.Fatalf("index file: %d lines after a CLI claim, want %d", got, before+1)
	}
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Server: true}
	t.Cleanup(env.Close)
	b, err := env.Board()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(t.Context(), ids[1], board.Actor{Human: "dan"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := lines(); got != before+1 {
		t.Fatalf("index file: %d lines after the server's claim, want %d", got, before+1)
	}
}
