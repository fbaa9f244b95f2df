package gitstore_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func TestMessageLine_EscapesEveryControl(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"  a \n\t b\r\n":     "a b",
		"nul\x00here":        `nul\x00here`,
		"esc\x1b[31m":        `esc\x1b[31m`,
		"del\x7f":            `del\x7f`,
		"c1\u0085next\u0090": `c1 next\u0090`, // U+0085 is white space
		"héllo °":            "héllo °",
		"bad\xffutf8":        "bad\xffutf8",
	} {
		if got := gitstore.MessageLine(in); got != want {
			t.Errorf("MessageLine(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(gitstore.MessageLine(in), "\x00\n") {
			t.Errorf("MessageLine(%q) keeps a NUL or newline", in)
		}
	}
}

func TestCheckLabel_RefusesControlsWithoutEchoingTheValue(t *testing.T) {
	for _, ok := range []string{"", "decision", "Alice Smith (worker)", "spec/v1", "ünïcode"} {
		if err := gitstore.CheckLabel("kind", ok); err != nil {
			t.Errorf("CheckLabel(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"a\x00b", "a\nsecret-value", "\x1b", "x\u0085", "tab\there"} {
		err := gitstore.CheckLabel("kind", bad)
		if !apperr.Is(err, apperr.Schema) {
			t.Errorf("CheckLabel(%q) = %v, want SCHEMA", bad, err)
			continue
		}
		if strings.Contains(err.Error(), "secret-value") {
			t.Errorf("the error quotes the value: %v", err)
		}
	}
}

// TestWriteCommit_WhatFsckRejects_RefusedAndNothingWritten: the last line
// behind every input check.
func TestWriteCommit_WhatFsckRejects_RefusedAndNothingWritten(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	tree, err := s.WriteTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	good := gitstore.Signature{Name: "A", Email: "a@example.com", When: time.Unix(1700000000, 0).UTC()}
	sig := func(f func(*gitstore.Signature)) gitstore.Signature { g := good; f(&g); return g }
	cases := map[string]*gitstore.Commit{
		"NUL in message":  {Tree: tree, Author: good, Committer: good, Message: "a\x00b\n"},
		"'<' in name":     {Tree: tree, Author: sig(func(g *gitstore.Signature) { g.Name = "Eve <x" }), Committer: good, Message: "m\n"},
		"newline in name": {Tree: tree, Author: good, Committer: sig(func(g *gitstore.Signature) { g.Name = "Eve\nparent x" }), Message: "m\n"},
		"'>' in email":    {Tree: tree, Author: sig(func(g *gitstore.Signature) { g.Email = "a>b" }), Committer: good, Message: "m\n"},
		"empty name":      {Tree: tree, Author: sig(func(g *gitstore.Signature) { g.Name = "" }), Committer: good, Message: "m\n"},
		"before 1970":     {Tree: tree, Author: sig(func(g *gitstore.Signature) { g.When = time.Unix(-5, 0) }), Committer: good, Message: "m\n"},
		"a 100-hour zone": {Tree: tree, Author: sig(func(g *gitstore.Signature) { g.When = g.When.In(time.FixedZone("", 100*3600)) }), Committer: good, Message: "m\n"},
	}
	count := func() string { return gt.Git(t, dir, "count-objects") }
	before := count()
	for name, c := range cases {
		if _, err := s.WriteCommit(c); !apperr.Is(err, apperr.Internal) {
			t.Errorf("%s: WriteCommit = %v, want a refusal", name, err)
		}
	}
	if after := count(); after != before {
		t.Errorf("refused commits wrote objects: %s → %s", before, after)
	}
	h, err := s.WriteCommit(&gitstore.Commit{Tree: tree, Author: good, Committer: good, Message: "fine\n"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := gt.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("fsck after a good commit %s: %v\n%s", h, err, out)
	}
}

// TestIdentity_HostileEnvironment_CommitsPassFsckStrict: the identity comes
// from the environment or git config, which may hold anything git would
// strip itself.
func TestIdentity_HostileEnvironment_CommitsPassFsckStrict(t *testing.T) {
	dir := gt.NewRepo(t)
	t.Setenv("GIT_COMMITTER_NAME", "Eve\t<eve@evil>\nparent 0000")
	t.Setenv("GIT_COMMITTER_EMAIL", "e>v<e\n@x")
	s := open(t, dir)
	if _, err := s.Transact(context.Background(), "refs/ideate/test", func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		tree, err := s.WriteTree(nil)
		return tree, "x\x00y: " + gitstore.MessageLine("subject\x00with\nbreaks") + "\n", err
	}); !apperr.Is(err, apperr.Internal) {
		t.Fatalf("a raw NUL in a message: %v, want a refusal", err)
	}
	if _, err := s.Transact(context.Background(), "refs/ideate/test", func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		tree, err := s.WriteTree(nil)
		return tree, gitstore.MessageLine("subject\x00with\nbreaks") + "\n", err
	}); err != nil {
		t.Fatal(err)
	}
	// The name is also a board actor when none is given: one printable line.
	if err := gitstore.CheckLabel("identity", s.Identity().Name); err != nil {
		t.Errorf("identity %q: %v", s.Identity().Name, err)
	}
	cmd := exec.Command("git", "fsck", "--strict", "--no-dangling")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}
