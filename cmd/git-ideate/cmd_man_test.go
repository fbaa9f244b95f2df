package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `help`, `help <command>`, `version` and --version work as git users
// expect, and help marks required flags.
func TestHelpAndVersionWords(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, "", "help")
	if r.code != 0 || !strings.Contains(r.out, "Usage: git ideate <command>") {
		t.Fatalf("help: %+v", r)
	}
	r = cli(t, dir, "", "help", "work", "create")
	if r.code != 0 || !strings.Contains(r.out, "Usage: git ideate work create") || !strings.Contains(r.out, "(required) Title.") {
		t.Fatalf("help work create: %+v", r)
	}
	if strings.Contains(r.out, "(required) Through which agent") {
		t.Fatalf("an optional flag is marked required:\n%s", r.out)
	}
	r = cli(t, dir, "", "-C", dir, "help", "record")
	if r.code != 0 || !strings.Contains(r.out, "Usage: git ideate record <command>") {
		t.Fatalf("-C help record: %+v", r)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r = cli(t, dir, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.out, "git-ideate ") || !strings.Contains(r.out, "record format") {
			t.Fatalf("%v: %+v", args, r)
		}
		if strings.Contains(r.out, " dev ") {
			t.Fatalf("%v names no real version: %q", args, r.out)
		}
	}
}

// A binary built with the commit stamped names it in --version.
func TestVersionNamesCommit(t *testing.T) {
	exe, c := binPath, stampedCommit
	for _, arg := range []string{"version", "--version"} {
		r := runProcess(t, exec.Command(exe, arg), "")
		if r.code != 0 || !strings.Contains(r.out, "commit "+c) {
			t.Fatalf("%s: %+v", arg, r)
		}
	}
}

// `git ideate --help` is `man git-ideate` to git: after `git ideate man
// --install` beside the binary, git finds the page through PATH alone.
func TestManPageFoundByGitHelp(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man on this machine")
	}
	prefix := t.TempDir()
	bindir := filepath.Join(prefix, "bin")
	if err := os.MkdirAll(bindir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bindir, "git-ideate"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MANPATH=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+bindir+string(os.PathListSeparator)+os.Getenv("PATH"), "MANPAGER=cat", "PAGER=cat", "GIT_PAGER=cat", "MANWIDTH=80")
	help := func() result {
		cmd := exec.Command("git", "ideate", "--help")
		cmd.Dir, cmd.Env = prefix, env
		return runProcess(t, cmd, "")
	}
	if r := help(); r.code == 0 && strings.Contains(r.out, "GIT-IDEATE(1)") {
		t.Fatalf("found a page before installing it: %+v", r)
	}
	cmd := exec.Command(filepath.Join(bindir, "git-ideate"), "man", "--install")
	cmd.Env = env
	if r := runProcess(t, cmd, ""); r.code != 0 || !strings.Contains(r.out, filepath.Join(prefix, "share", "man", "man1", "git-ideate.1")) {
		t.Fatalf("man --install: %+v", r)
	}
	r := help()
	if r.code != 0 || !strings.Contains(r.out, "GIT-IDEATE(1)") || !strings.Contains(r.out, "work create") {
		t.Fatalf("git ideate --help after install: %+v", r)
	}
}

// docs/man/git-ideate.1 is the page the command tree generates: change a
// command's help and regenerate it (go test -update).
func TestManPageCheckedIn(t *testing.T) {
	var b bytes.Buffer
	if err := writeManPage(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "man", "git-ideate.1")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Fatalf("%s is stale: run go test ./cmd/git-ideate -run TestManPageCheckedIn -update", path)
	}
	if r := cli(t, t.TempDir(), "", "man"); r.code != 0 || r.out != b.String() {
		t.Fatalf("git ideate man: code %d, %d bytes", r.code, len(r.out))
	}
}

// The man page's NAME line is one short sentence: whatis and apropos list
// it, and the exit statuses belong in DESCRIPTION.
func TestManPage_NameLineIsShort(t *testing.T) {
	var b strings.Builder
	if err := writeManPage(&b); err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(b.String(), ".SH NAME\n")
	name, _, _ := strings.Cut(rest, "\n")
	if len(name) > 120 || strings.Contains(name, "Exit status") || !strings.HasPrefix(name, `git-ideate \- `) {
		t.Fatalf("NAME line (%d bytes): %s", len(name), name)
	}
}
