package gitstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// The configuration reader agrees with git config --get-all on a file
// with every form git writes or accepts: subsection headers old and new,
// quotes, escapes, comments, bare booleans, continuation lines, case.
func TestConfig_ReadsWhatGitReads(t *testing.T) {
	dir := gt.NewRepo(t)
	extra := `
[Core]
	Bare = false ; trailing comment
[gc]
	auto = 256
	AUTOPACKLIMIT = 7
[remote "Origin"]
	url = /srv/repo.git
	fetch = +refs/heads/*:refs/remotes/Origin/*
	fetch = "+refs/ideate/*:refs/ideate-remotes/Origin/ideate/*"
[remote.legacy]
	url = ssh://host/r
[ideate]
	steering
	note = "a \"quoted\" value ; not a comment"  # comment
	tabbed = one\ttwo\\three
	spaced =   inner   words   
	long = first \
second
[user] name = Inline Name
[branch "with ] bracket"]
	merge = refs/heads/main
`
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(extra)
	f.Close()
	s, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []struct{ section, sub, key string }{
		{"core", "", "bare"}, {"gc", "", "auto"}, {"gc", "", "autopacklimit"},
		{"remote", "Origin", "url"}, {"remote", "Origin", "fetch"}, {"remote", "legacy", "url"},
		{"ideate", "", "steering"}, {"ideate", "", "note"}, {"ideate", "", "tabbed"},
		{"ideate", "", "spaced"}, {"ideate", "", "long"}, {"user", "", "name"},
		{"branch", "with ] bracket", "merge"},
	} {
		name := k.section + "." + k.key
		if k.sub != "" {
			name = k.section + "." + k.sub + "." + k.key
		}
		want, _ := gt.GitErr(dir, "config", "--get-all", name)
		if k.key == "steering" {
			want, _ = gt.GitErr(dir, "config", "--bool", "--get-all", name)
		}
		got := strings.Join(s.Config().GetAllSub(k.section, k.sub, k.key), "\n")
		if want == "" {
			t.Fatalf("git config --get-all %s: nothing (git refused the file?)", name)
		}
		if got != want {
			t.Errorf("%s: got %q, git says %q", name, got, want)
		}
	}
	if got := strings.Join(s.Remotes(), " "); got != "Origin legacy" {
		t.Errorf("remotes: %q", got)
	}
}
