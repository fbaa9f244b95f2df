package gitstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// The configuration git printed is read back while nothing it depends on
// changed: with a git on PATH that always fails, a kept configuration is
// still read whole; a changed local file, a global file made since, or
// another `git -c` setting each bring git back (and so an empty
// configuration, here, where git cannot run).
func TestLoadConfig_KeptWhileItsFilesAndEnvironmentStay(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.note", "kept")
	old := time.Now().Add(-time.Hour)
	age := func() { // files this old cannot hide a change in their mtime's tick
		t.Helper()
		for _, p := range []string{filepath.Join(dir, ".git", "config"), os.Getenv("GIT_CONFIG_GLOBAL"), filepath.Join(dir, ".git", "HEAD")} {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	age()
	r, err := gitstore.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	note := func() string {
		v, _ := gitstore.LoadConfig(r).Get("ideate", "note")
		return v
	}
	if got := note(); got != "kept" {
		t.Fatalf("first read through git: %q", got)
	}
	realPath := os.Getenv("PATH")
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "git"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", broken)
	if got := note(); got != "kept" {
		t.Fatalf("kept configuration not read back: %q", got)
	}
	t.Setenv("GIT_CONFIG_PARAMETERS", "'ideate.note'='other'")
	if got := note(); got != "" {
		t.Fatalf("another git -c setting read the kept configuration: %q", got)
	}
	os.Unsetenv("GIT_CONFIG_PARAMETERS")
	if got := note(); got != "kept" {
		t.Fatalf("back to the first environment: %q", got)
	}
	home := os.Getenv("HOME")
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[ideate]\n\tglobal = yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := note(); got != "" {
		t.Fatalf("a global file made since was not seen: %q", got)
	}
	os.Remove(filepath.Join(home, ".gitconfig"))
	if got := note(); got != "kept" {
		t.Fatalf("the global file gone again: %q", got)
	}
	t.Setenv("PATH", realPath)
	gt.Git(t, dir, "config", "ideate.note", "changed")
	age()
	if got := note(); got != "changed" {
		t.Fatalf("a changed local file: %q", got)
	}
}

// Integers read as git reads them: k, m and g suffixes; a value that is
// not an integer, or overflows, is the default.
func TestConfig_IntAsGitReadsIt(t *testing.T) {
	dir := gt.NewRepo(t)
	for k, v := range map[string]string{"ideate.a": "12", "ideate.b": "3k", "ideate.c": "2M", "ideate.d": "1g", "ideate.e": "-4k",
		"ideate.f": "99999999999g", "ideate.g": "ten", "ideate.h": "9223372036854775807"} {
		gt.Git(t, dir, "config", k, v)
	}
	r, err := gitstore.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := gitstore.LoadConfig(r)
	for key, want := range map[string]int64{"a": 12, "b": 3 << 10, "c": 2 << 20, "d": 1 << 30, "e": -4 << 10, "f": 7, "g": 7, "h": 9223372036854775807, "unset": 7} {
		if got := c.Int("ideate", key, 7); got != want {
			t.Errorf("ideate.%s: %d, want %d", key, got, want)
		}
	}
}

// A configuration git cannot read is an error, never an empty
// configuration (which would turn gates off and change the identity).
func TestOpen_RefusesAConfigurationGitCannotRead(t *testing.T) {
	dir := gt.NewRepo(t)
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[ideate\n\tsteering = true\n")
	f.Close()
	_, err = gitstore.Open(dir)
	if apperr.CodeOf(err) != gitstore.GitFailed || !strings.Contains(apperr.Message(err), "configuration") {
		t.Fatalf("open with a malformed config: %v", err)
	}
}

// A ref deletion goes through a lock its killed writer left, once the lock
// is stale, as every update does.
func TestDeleteRef_BreaksAStaleLock(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "update-ref", "refs/ideate/x", "HEAD")
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	lock := filepath.Join(dir, ".git", "refs", "ideate", "x.lock")
	p := spawn(t, "hold-ref-lock", dir, "GITSTORE_TEST_REF=refs/ideate/x")
	p.WaitOutput(t, "holding", 20*time.Second)
	p.Kill()
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := gitstore.ParseHash(head)
	if err := s.UpdateRef(t.Context(), "refs/ideate/x", gitstore.ZeroHash, h); err != nil {
		t.Fatalf("delete past a stale lock: %v", err)
	}
	if got := gt.Git(t, dir, "for-each-ref", "refs/ideate/"); got != "" {
		t.Fatalf("the ref is still there: %s", got)
	}
}
