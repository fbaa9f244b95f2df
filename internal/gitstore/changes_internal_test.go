//go:build linux && amd64

package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A file whose stat data matches its entry but whose mtime is not older
// than the index file itself is "racily clean" and must be hashed: a
// same-size rewrite within one timestamp tick of the index write leaves no
// other trace.
func TestStatClean_RacyEntryIsNotClean(t *testing.T) {
	e := &indexEntry{mtimeSec: 100, mtimeNsec: 500, ctimeSec: 100, ctimeNsec: 500, ino: 7, size: 4}
	st := &syscall.Stat_t{Ino: 7, Size: 4}
	st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec = 100, 500, 100, 500
	for _, c := range []struct {
		sec, nsec int64
		clean     bool
	}{
		{101, 0, true},    // index written later: the stat data is proof
		{100, 501, true},  // later in the same second
		{100, 500, false}, // same instant: racy
		{100, 499, false}, // entry newer than the index
		{99, 0, false},
	} {
		idx := &gitIndex{mtimeSec: c.sec, mtimeNsec: c.nsec}
		if got := statClean(st, e, idx); got != c.clean {
			t.Errorf("index at %d.%09d: statClean = %v, want %v", c.sec, c.nsec, got, c.clean)
		}
	}
	st.Size = 5
	if statClean(st, e, &gitIndex{mtimeSec: 200}) {
		t.Error("a size change went unseen")
	}
}

// FuzzParseIndex feeds the index decoder real index files of every version
// and their mutations: it must return an error or entries, never panic or
// loop.
func FuzzParseIndex(f *testing.F) {
	for _, v := range []string{"2", "3", "4"} {
		dir := f.TempDir()
		for _, args := range [][]string{
			{"init", "-q"},
			{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "i"},
		} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				f.Fatalf("%v: %s", err, out)
			}
		}
		for _, p := range []string{"a.txt", "dir/b.txt", "dir/sub/c.txt", "z"} {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.WriteFile(full, []byte(p), 0o644)
		}
		for _, args := range [][]string{{"add", "-A"}, {"add", "-N", "z"}, {"update-index", "--index-version", v}, {"write-tree"}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				f.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := parseIndex(data)
		if err != nil {
			return
		}
		for _, e := range idx.entries {
			if e.stage < 0 || e.stage > 3 {
				t.Fatalf("stage %d", e.stage)
			}
		}
	})
}

// The fuzz seeds are real: each parses, with the entries git wrote.
func TestParseIndex_EveryVersion(t *testing.T) {
	for _, v := range []string{"2", "3", "4"} {
		dir := t.TempDir()
		run := func(args ...string) {
			cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
		run("init", "-q")
		for _, p := range []string{"a.txt", "dir/b.txt", "dir/sub/c.txt", "dir/sub/d.txt", "z"} {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.WriteFile(full, []byte(p), 0o644)
		}
		run("add", "-A")
		run("commit", "-q", "-m", "c")
		run("update-index", "--index-version", v)
		idx, err := readIndex(filepath.Join(dir, ".git", "index"))
		if err != nil {
			t.Fatalf("v%s: %v", v, err)
		}
		var paths []string
		for _, e := range idx.entries {
			paths = append(paths, e.path)
		}
		if got := strings.Join(paths, ","); got != "a.txt,dir/b.txt,dir/sub/c.txt,dir/sub/d.txt,z" {
			t.Errorf("v%s: entries %s", v, got)
		}
		if _, ok := idx.trees["dir/sub"]; !ok {
			t.Errorf("v%s: no cached tree for dir/sub in %v", v, idx.trees)
		}
	}
}
