package oid_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// gitHashObject is the name git itself gives data as an object of type t.
func gitHashObject(t *testing.T, typ string, data []byte) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", "hash-object", "-t", typ, "--stdin", "--literally")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object -t %s: %v", typ, err)
	}
	return strings.TrimSpace(string(out))
}

func TestComputeHash_NamesObjectsAsGitDoes(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 70000) // > 1 MiB: a long size field
	cases := []struct {
		typ  oid.ObjectType
		data []byte
	}{
		{oid.BlobObject, nil},
		{oid.BlobObject, []byte("hello\n")},
		{oid.BlobObject, big},
		{oid.TreeObject, nil},
		{oid.CommitObject, []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nm\n")},
		{oid.TagObject, []byte("object 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ntype tree\ntag t\ntagger a <a@b> 1 +0000\n\nm\n")},
	}
	for _, c := range cases {
		want := gitHashObject(t, c.typ.String(), c.data)
		if got := oid.ComputeHash(c.typ, c.data).String(); got != want {
			t.Errorf("%s of %d bytes: ComputeHash %s, git %s", c.typ, len(c.data), got, want)
		}
	}
}

func TestHash_RoundTripsThroughHex(t *testing.T) {
	const s = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	h := oid.NewHash(s)
	if h.String() != s || h.IsZero() {
		t.Fatalf("NewHash(%s) = %s (zero %v)", s, h, h.IsZero())
	}
	if !oid.NewHash("").IsZero() || oid.ZeroHash.String() != strings.Repeat("0", 40) {
		t.Fatal("the empty name is not the zero hash")
	}
	if got := oid.NewHash(strings.ToUpper(s) + "ffff"); got != h {
		t.Fatalf("upper-case digits and a tail past 40: %s, want %s", got, h)
	}
}

func TestObjectType_NamesTheHeaderWord(t *testing.T) {
	for typ, want := range map[oid.ObjectType]string{oid.CommitObject: "commit", oid.TreeObject: "tree",
		oid.BlobObject: "blob", oid.TagObject: "tag", oid.InvalidObject: "unknown", 5: "unknown"} {
		if got := typ.String(); got != want {
			t.Errorf("ObjectType(%d).String() = %q, want %q", typ, got, want)
		}
	}
}
