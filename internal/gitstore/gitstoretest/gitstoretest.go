// Package gitstoretest builds real git repositories in temporary
// directories for tests, and runs the git CLI beside the code under test.
package gitstoretest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Isolate makes the test independent of the machine's git configuration:
// no system config, a private global config with a test identity, and no
// background maintenance unless a test turns it on. Go's build and module
// caches stay the machine's: under the empty HOME go would otherwise build
// the standard library from nothing for every task's test run (80–100 s).
func Isolate(t testing.TB) {
	t.Helper()
	for k, v := range goCaches() {
		t.Setenv(k, v)
	}
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[gc]\n\tautoDetach = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("HOME", home)
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "1")
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// goCaches are GOCACHE and GOMODCACHE as go reports them before any test
// changes HOME, and GOTOOLCHAIN=local; none when go is not installed.
var goCaches = sync.OnceValue(func() map[string]string {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 2 {
		return nil
	}
	return map[string]string{"GOCACHE": f[0], "GOMODCACHE": f[1], "GOTOOLCHAIN": "local"}
})

// NewRepo isolates the test and returns the top of a fresh non-bare
// repository with one commit on main.
func NewRepo(t testing.TB) string {
	t.Helper()
	Isolate(t)
	dir := t.TempDir()
	Git(t, dir, "init", "-q")
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// Git runs git in dir and returns its trimmed stdout; it fails the test on
// a non-zero exit.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitStdin runs git in dir with stdin as its input and returns its
// stdout as it is; it fails the test on a non-zero exit.
func GitStdin(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if e, ok := err.(*exec.ExitError); ok {
			stderr = e.Stderr
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// WaitRemoved waits up to 10 s for path to be gone (a background
// process's lock file) and fails the test when it is still there.
func WaitRemoved(t testing.TB, path string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(path); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s is still there after 10 s", path)
}

// GitErr runs git in dir and returns its trimmed combined output.
func GitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Fsck runs `git fsck --strict` and fails the test on any complaint.
func Fsck(t testing.TB, dir string) {
	t.Helper()
	out, err := GitErr(dir, "fsck", "--strict", "--no-progress")
	if err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if line != "" && !strings.HasPrefix(line, "dangling") && !strings.HasPrefix(line, "Checking") {
			t.Fatalf("git fsck --strict complained:\n%s", out)
		}
	}
}

// StagedAgainst is what `git add -A` would stage in the worktree wt,
// compared with base, by git itself: the worktree's index is copied,
// `git add -A` runs on the copy, and `git diff-index --cached -z
// --no-renames <flags> base` prints it (the worktree's own index is not
// touched; git add writes blobs for new files). The oracle of the diff
// scope's tests.
func StagedAgainst(t testing.TB, wt, base string, flags ...string) string {
	t.Helper()
	gitDir := Git(t, wt, "rev-parse", "--absolute-git-dir")
	tmp := filepath.Join(t.TempDir(), "index")
	if b, err := os.ReadFile(filepath.Join(gitDir, "index")); err == nil {
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = wt
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("add", "-A")
	return run(append(append([]string{"diff-index", "--cached", "-z", "--no-renames"}, flags...), base)...)
}
