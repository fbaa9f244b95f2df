package gitstore_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// `git -c key=value ideate …` hands the settings to the subcommand in
// GIT_CONFIG_PARAMETERS, and GIT_CONFIG_COUNT/KEY/VALUE set more; both
// win over the files. The environment here is the one real git makes for
// a subcommand, and every value is compared with what git itself reads.
func TestLoadConfig_CommandLineSettings(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.maintenance", "true")
	gt.Git(t, dir, "config", "a.Sub.key", "from the file")
	bin := t.TempDir()
	dump := filepath.Join(t.TempDir(), "params")
	script := "#!/bin/sh\nprintf '%s' \"$GIT_CONFIG_PARAMETERS\" > '" + dump + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "git-envdump"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-c", "ideate.maintenance=false", "-c", "a.Sub.key=two  words", "-c", "bare.flag",
		"-c", "q.v=it's a 'quote' and a !", "-c", "x.y=a=b"}
	cmd := exec.Command("git", append(args, "envdump")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git envdump: %v %s", err, out)
	}
	params, err := os.ReadFile(dump)
	if err != nil || len(params) == 0 {
		t.Fatalf("no GIT_CONFIG_PARAMETERS from git: %v", err)
	}
	t.Setenv("GIT_CONFIG_PARAMETERS", string(params))
	t.Setenv("GIT_CONFIG_COUNT", "2")
	t.Setenv("GIT_CONFIG_KEY_0", "count.first")
	t.Setenv("GIT_CONFIG_VALUE_0", "one")
	t.Setenv("GIT_CONFIG_KEY_1", "x.y")
	t.Setenv("GIT_CONFIG_VALUE_1", "loses to -c")
	r, err := gitstore.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := gitstore.LoadConfig(r)
	for _, k := range [][3]string{{"ideate", "", "maintenance"}, {"a", "Sub", "key"}, {"q", "", "v"}, {"x", "", "y"}, {"count", "", "first"}} {
		name := k[0] + "." + k[2]
		if k[1] != "" {
			name = k[0] + "." + k[1] + "." + k[2]
		}
		want := gt.Git(t, dir, "config", "--get", name) // git reads the same environment
		got, ok := c.GetSub(k[0], k[1], k[2])
		if !ok || got != want {
			t.Errorf("%s = %q (set %v), git reads %q", name, got, ok, want)
		}
	}
	if !c.Bool("bare", "flag", false) {
		t.Error("a -c key with no value is not true")
	}
	if c.Bool("ideate", "maintenance", true) {
		t.Error("-c ideate.maintenance=false lost to the file's true")
	}
}

// Includes are followed as git follows them, so commits carry the identity
// git itself would use: a global includeIf "gitdir:" that names this
// repository (and one that names another, which does not apply), and a
// local [include] path, whose values win as their place in the file says.
func TestLoadConfig_IncludesAsGitFollowsThem(t *testing.T) {
	dir := gt.NewRepo(t)
	tmp := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	work := write("work.inc", "[user]\n\tname = Work Person\n\temail = work@example.com\n")
	other := write("other.inc", "[user]\n\tname = Other Person\n")
	global := write("global", "[user]\n\tname = Global Person\n\temail = global@example.com\n"+
		"[includeIf \"gitdir:"+dir+"/\"]\n\tpath = "+work+"\n"+
		"[includeIf \"gitdir:/elsewhere/\"]\n\tpath = "+other+"\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	want := gt.Git(t, dir, "config", "user.name") + " <" + gt.Git(t, dir, "config", "user.email") + ">"
	if want != "Work Person <work@example.com>" {
		t.Fatalf("git itself reads %q: the fixture is wrong", want)
	}
	s := open(t, dir)
	if id := s.Identity(); id.Name+" <"+id.Email+">" != want {
		t.Fatalf("identity %s <%s>, git reads %s", id.Name, id.Email, want)
	}
	c := commit(t, s, "who", gitstore.ZeroHash)
	if err := s.UpdateRef(t.Context(), "refs/ideate/who", c, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if got := gt.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "refs/ideate/who"); got != want+"|"+want {
		t.Fatalf("the commit carries %q, want %q", got, want)
	}

	// A local [include] after the local value wins over it, as in git.
	local := write("local.inc", "[user]\n\temail = included@example.com\n")
	gt.Git(t, dir, "config", "user.email", "local@example.com")
	gt.Git(t, dir, "config", "include.path", local)
	if got := open(t, dir).Identity().Email; got != gt.Git(t, dir, "config", "user.email") || got != "included@example.com" {
		t.Fatalf("email %q, git reads %q", got, gt.Git(t, dir, "config", "user.email"))
	}
	// And `git -c` still wins over every file.
	t.Setenv("GIT_CONFIG_PARAMETERS", "'user.name'='Command Line'")
	if got := open(t, dir).Identity().Name; got != "Command Line" {
		t.Fatalf("name %q with git -c user.name", got)
	}
	gt.Fsck(t, dir)
}

// Changed tells a long-lived process when to read the configuration
// again: after the repository's config file or an included one changed,
// not before.
func TestConfig_ChangedWhenAFileItCameFromChanges(t *testing.T) {
	dir := gt.NewRepo(t)
	inc := filepath.Join(t.TempDir(), "inc")
	if err := os.WriteFile(inc, []byte("[ideate]\n\tfrom = include\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "config", "include.path", inc)
	r, err := gitstore.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := gitstore.LoadConfig(r)
	if v, _ := c.Get("ideate", "from"); v != "include" || c.Changed() {
		t.Fatalf("ideate.from %q, changed %v right after the read", v, c.Changed())
	}
	if err := os.WriteFile(inc, []byte("[ideate]\n\tfrom = include, changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !c.Changed() {
		t.Fatal("an included file changed, Changed says no")
	}
	c = gitstore.LoadConfig(r)
	if v, _ := c.Get("ideate", "from"); v != "include, changed" || c.Changed() {
		t.Fatalf("ideate.from %q after the change, changed %v", v, c.Changed())
	}
	gt.Git(t, dir, "config", "ideate.other", "x")
	if !c.Changed() {
		t.Fatal("the repository's config changed, Changed says no")
	}
}
