package plugintest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/release"
)

const buildLine = "git-ideate launcher: building "

// copyPlugin copies what the launcher needs (go.mod, go.sum, the non-test
// Go sources and bin/git-ideate) into a fresh plugin root, so the tests
// neither build in nor race with the working tree.
func copyPlugin(t testing.TB) string {
	t.Helper()
	src := repoRoot(t)
	dst := filepath.Join(t.TempDir(), "plugin")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".build", "node_modules", "testdata", "out":
				return filepath.SkipDir
			}
			return nil
		}
		// The sources go build reads: Go files and what they embed
		// (templates, assets) under cmd/ and internal/.
		src := strings.HasPrefix(rel, "cmd"+string(filepath.Separator)) || strings.HasPrefix(rel, "internal"+string(filepath.Separator))
		keep := rel == "go.mod" || rel == "go.sum" || rel == filepath.Join("bin", "git-ideate") ||
			rel == filepath.Join(".claude-plugin", "plugin.json") ||
			src && !strings.HasSuffix(rel, "_test.go")
		if !keep {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o755)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// toolDir holds links to the tools the launcher may use, but not go,
// flock or git-ideate: a PATH built from it controls what it finds.
func toolDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"sh", "find", "mkdir", "mv", "rm", "touch", "sed", "sleep", "readlink", "cat", "ln", "date", "rmdir"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func goBinDir(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	p, _ = filepath.EvalSymlinks(p)
	return filepath.Dir(p)
}

type launch struct {
	code     int
	out, err string
}

func (l launch) builds() int { return strings.Count(l.err, buildLine) }

// run starts `sh <root>/bin/git-ideate args…` with the environment
// changed by env ("K=V"; "K=" removes K).
func run(t testing.TB, root string, env []string, stdin string, args ...string) launch {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, append([]string{filepath.Join(root, "bin", "git-ideate")}, args...)...)
	cmd.Env = mergeEnv(os.Environ(), append([]string{
		// One cgo setting for every build, whatever PATH holds, so the
		// build cache serves them all.
		"CGO_ENABLED=0", "CLAUDE_PLUGIN_DATA=", "GIT_IDEATE_LAUNCHER_FALLBACK=",
		// A loaded machine builds slowly (a first build took over 120 s at
		// load 35): the waiter must outwait the builder.
		"GIT_IDEATE_BUILD_WAIT=600",
		// No release download unless a test serves one; the user's cache
		// is the test's.
		"GIT_IDEATE_NO_DOWNLOAD=1", "GIT_IDEATE_RELEASE_URL=", "GIT_IDEATE_PROBE=", "GIT_IDEATE_MCP_PENDING=",
		"XDG_CACHE_HOME=" + cacheHome(t)}, append(goEnv(t), env...)...))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return launch{code, out.String(), errb.String()}
}

var (
	cacheOnce sync.Once
	cacheDir  string
)

// cacheHome is the XDG cache every launch of this test binary sees (never
// the user's own).
func cacheHome(t testing.TB) string {
	cacheOnce.Do(func() {
		d, err := os.MkdirTemp("", "ideate-launcher-cache-")
		if err != nil {
			t.Fatal(err)
		}
		cacheDir = d
	})
	return cacheDir
}

var (
	goEnvOnce sync.Once
	goEnvVars []string
)

// goEnv pins go's caches, so a launch with another HOME still builds from
// the warm build and module caches.
func goEnv(t testing.TB) []string {
	goEnvOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
		if err != nil {
			return
		}
		f := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(f) == 3 {
			goEnvVars = []string{"GOCACHE=" + f[0], "GOMODCACHE=" + f[1], "GOPATH=" + f[2]}
		}
	})
	return goEnvVars
}

// dataExe is where the launcher keeps this version's binary under a
// CLAUDE_PLUGIN_DATA directory.
func dataExe(data string) string {
	return filepath.Join(data, "build", release.Version, "git-ideate")
}

func mergeEnv(base, over []string) []string {
	m := map[string]string{}
	var order []string
	for _, kv := range append(base, over...) {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = v
	}
	var out []string
	for _, k := range order {
		if m[k] != "" {
			out = append(out, k+"="+m[k])
		}
	}
	return out
}

// runBoth starts two launches at once.
func runBoth(t *testing.T, root string, env []string, args ...string) [2]launch {
	t.Helper()
	var res [2]launch
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = run(t, root, env, "", args...)
		}()
	}
	wg.Wait()
	return res
}

func checkFirstLaunch(t *testing.T, res [2]launch, exe string) {
	t.Helper()
	for i, r := range res {
		if r.code != 0 || !strings.HasPrefix(r.out, "git-ideate ") || strings.Count(r.out, "\n") != 1 {
			t.Fatalf("launch %d: exit %d, stdout %q, stderr:\n%s", i, r.code, r.out, r.err)
		}
	}
	if res[0].out != res[1].out {
		t.Fatalf("the launches printed %q and %q", res[0].out, res[1].out)
	}
	if n := res[0].builds() + res[1].builds(); n != 1 {
		t.Fatalf("%d builds for two concurrent first launches:\n%s\n%s", n, res[0].err, res[1].err)
	}
	direct, err := exec.Command(exe, "--version").Output()
	if err != nil || string(direct) != res[0].out {
		t.Fatalf("the built binary says %q (%v), the launcher %q", direct, err, res[0].out)
	}
}

func TestLauncher(t *testing.T) {
	go_ := goBinDir(t)
	root := copyPlugin(t)
	data := t.TempDir()
	env := []string{"CLAUDE_PLUGIN_DATA=" + data}
	exe := dataExe(data)
	var version string

	t.Run("first launch: two at once, one build", func(t *testing.T) {
		res := runBoth(t, root, env, "--version")
		checkFirstLaunch(t, res, exe)
		version = res[0].out
	})

	t.Run("second launch does not build", func(t *testing.T) {
		r := run(t, root, env, "", "--version")
		if r.code != 0 || r.out != version || r.builds() != 0 || r.err != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
	})

	t.Run("arguments and stdin reach the binary", func(t *testing.T) {
		repo := t.TempDir()
		if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		r := run(t, root, append(env, "GIT_IDEATE_NO_MAINTENANCE=1"), "the body on stdin",
			"-C", repo, "record", "append", "--kind", "note", "--claim", "via the launcher", "--content", "-", "--session", "s1")
		if r.code != 0 || r.builds() != 0 {
			t.Fatalf("exit %d, stderr %s", r.code, r.err)
		}
		r = run(t, root, env, "", "-C", repo, "record", "read")
		if !strings.Contains(r.out, "via the launcher") || !strings.Contains(r.out, "the body on stdin") {
			t.Fatalf("read back:\n%s\n%s", r.out, r.err)
		}
	})

	t.Run("a touched source rebuilds, once", func(t *testing.T) {
		// File times are coarse (a clock tick): let one pass since the
		// build, and give main.go a time between that build and now. The
		// file system stamps what it writes next with a clock that lags
		// the real one by up to a tick: main.go at the real now could be
		// newer than the next build's own stamp, which then rebuilds again.
		time.Sleep(20 * time.Millisecond)
		now := time.Now().Add(-10 * time.Millisecond)
		if err := os.Chtimes(filepath.Join(root, "cmd", "git-ideate", "main.go"), now, now); err != nil {
			t.Fatal(err)
		}
		if r := run(t, root, env, "", "--version"); r.code != 0 || r.out != version || r.builds() != 1 {
			t.Fatalf("after touching main.go: exit %d, builds %d, stdout %q, stderr:\n%s", r.code, r.builds(), r.out, r.err)
		}
		if r := run(t, root, env, "", "--version"); r.builds() != 0 {
			t.Fatalf("rebuilt again:\n%s", r.err)
		}
	})

	t.Run("an added or removed file rebuilds", func(t *testing.T) {
		time.Sleep(20 * time.Millisecond)
		extra := filepath.Join(root, "internal", "apperr", "zz_extra.go")
		if err := os.WriteFile(extra, []byte("package apperr\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := run(t, root, env, "", "--version"); r.builds() != 1 {
			t.Fatalf("after adding a file: builds %d\n%s", r.builds(), r.err)
		}
		time.Sleep(20 * time.Millisecond)
		if err := os.Remove(extra); err != nil {
			t.Fatal(err)
		}
		if r := run(t, root, env, "", "--version"); r.builds() != 1 {
			t.Fatalf("after removing a file: builds %d\n%s", r.builds(), r.err)
		}
		// A test file is not part of the binary.
		time.Sleep(20 * time.Millisecond)
		if err := os.WriteFile(filepath.Join(root, "cmd", "git-ideate", "x_test.go"), []byte("package main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(root, "cmd", "git-ideate"), time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
		if r := run(t, root, env, "", "--version"); r.builds() != 0 {
			t.Fatalf("a _test.go file caused a build:\n%s", r.err)
		}
	})

	t.Run("lost execute bit", func(t *testing.T) {
		if err := os.Chmod(filepath.Join(root, "bin", "git-ideate"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(filepath.Join(root, "bin", "git-ideate"), 0o755)
		if r := run(t, root, env, "", "--version"); r.code != 0 || r.out != version {
			t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.out, r.err)
		}
	})

	t.Run("another plugin root with the same data directory rebuilds", func(t *testing.T) {
		other := copyPlugin(t)
		if r := run(t, other, env, "", "--version"); r.code != 0 || r.out != version || r.builds() != 1 {
			t.Fatalf("exit %d, builds %d, stderr:\n%s", r.code, r.builds(), r.err)
		}
		if r := run(t, root, env, "", "--version"); r.builds() != 1 {
			t.Fatalf("back on the first root: builds %d\n%s", r.builds(), r.err)
		}
	})

	t.Run("without CLAUDE_PLUGIN_DATA the binary goes to the user's cache, not the plugin", func(t *testing.T) {
		cache := t.TempDir()
		r := run(t, root, []string{"XDG_CACHE_HOME=" + cache}, "", "--version")
		if r.code != 0 || r.out != version || r.builds() != 1 {
			t.Fatalf("exit %d, builds %d, stderr:\n%s", r.code, r.builds(), r.err)
		}
		if _, err := os.Stat(filepath.Join(cache, "git-ideate", release.Version, "git-ideate")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(root, ".build")); err == nil {
			t.Fatal("the launcher wrote into the plugin's directory")
		}
		noHome := []string{"XDG_CACHE_HOME=", "HOME=" + t.TempDir()}
		if r := run(t, root, noHome, "", "--version"); r.code != 0 || r.out != version {
			t.Fatalf("without XDG_CACHE_HOME: exit %d\n%s", r.code, r.err)
		}
		if _, err := os.Stat(filepath.Join(noHome[1][len("HOME="):], ".cache", "git-ideate", release.Version, "git-ideate")); err != nil {
			t.Fatal(err)
		}
		if r := run(t, root, []string{"XDG_CACHE_HOME=" + cache}, "", "--version"); r.builds() != 0 || r.out != version {
			t.Fatalf("rebuilt:\n%s", r.err)
		}
	})

	t.Run("a failed build runs the previous binary and is not retried until a source changes", func(t *testing.T) {
		time.Sleep(20 * time.Millisecond)
		bad := filepath.Join(root, "internal", "apperr", "zz_bad.go")
		if err := os.WriteFile(bad, []byte("package apperr\nfunc {\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, root, env, "", "--version")
		if r.code != 0 || r.out != version || r.builds() != 1 || !strings.Contains(r.err, "go build failed") ||
			!strings.Contains(r.err, "running the previous binary") {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.out, r.err)
		}
		r = run(t, root, env, "", "--version")
		if r.code != 0 || r.out != version || r.builds() != 0 || !strings.Contains(r.err, "last build failed") {
			t.Fatalf("retry: exit %d, stdout %q, stderr:\n%s", r.code, r.out, r.err)
		}
		time.Sleep(20 * time.Millisecond)
		os.Remove(bad)
		if r := run(t, root, env, "", "--version"); r.builds() != 1 || strings.Contains(r.err, "failed") {
			t.Fatalf("after the fix: builds %d\n%s", r.builds(), r.err)
		}
	})

	t.Run("no flock: the mkdir lock, two at once, one build", func(t *testing.T) {
		data2 := t.TempDir()
		env2 := []string{"CLAUDE_PLUGIN_DATA=" + data2, "PATH=" + toolDir(t) + string(os.PathListSeparator) + go_}
		res := runBoth(t, root, env2, "--version")
		checkFirstLaunch(t, res, dataExe(data2))
		if _, err := os.Stat(filepath.Join(data2, "build", release.Version, ".lock.d")); err == nil {
			t.Fatal("the lock directory was left behind")
		}
	})

	t.Run("no flock: a lock dir a killed launcher left without its pid is broken", func(t *testing.T) {
		// A launcher killed between its mkdir and writing its pid (a CI
		// run's random kills once hit that moment) left a lock no one
		// broke: the next launch waited to its limit, then gave up.
		data3 := t.TempDir()
		if err := os.MkdirAll(filepath.Join(data3, "build", release.Version, ".lock.d"), 0o755); err != nil {
			t.Fatal(err)
		}
		env3 := []string{"CLAUDE_PLUGIN_DATA=" + data3, "PATH=" + toolDir(t) + string(os.PathListSeparator) + go_,
			"GIT_IDEATE_BUILD_WAIT=60"}
		t0 := time.Now()
		r := run(t, root, env3, "", "--version")
		if r.code != 0 || !strings.HasPrefix(r.out, "git-ideate "+release.Version+" ") || strings.Contains(r.err, "gave up") || time.Since(t0) > 50*time.Second {
			t.Fatalf("after %v: exit %d, stdout %q, stderr:\n%s", time.Since(t0), r.code, r.out, r.err)
		}
		if _, err := os.Stat(filepath.Join(data3, "build", release.Version, ".lock.d")); err == nil {
			t.Fatal("the lock directory was left behind")
		}
	})

	t.Run("no go and no git-ideate on PATH: one line, exit 0", func(t *testing.T) {
		tools := toolDir(t)
		// The launcher's own directory on PATH must not count as a
		// git-ideate to fall back to.
		env3 := []string{"CLAUDE_PLUGIN_DATA=" + t.TempDir(), "PATH=" + tools + string(os.PathListSeparator) + filepath.Join(root, "bin")}
		r := run(t, root, env3, "", "--version")
		if r.code != 0 || r.out != "" || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "no Go toolchain") {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}

		// A git-ideate further on PATH of another version is not used;
		// one of this version is, and is remembered.
		fake := t.TempDir()
		script := func(v string) []byte {
			return []byte("#!/bin/sh\nif [ \"$1\" = --version ]; then echo \"git-ideate " + v + " (fake)\"; else echo \"fallback $*\"; fi\n")
		}
		if err := os.WriteFile(filepath.Join(fake, "git-ideate"), script("0.0.1"), 0o755); err != nil {
			t.Fatal(err)
		}
		env3[1] += string(os.PathListSeparator) + fake
		if r = run(t, root, env3, "", "mcp", "x"); r.code != 0 || r.out != "" || !strings.Contains(r.err, "inactive") {
			t.Fatalf("another version was used: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
		if err := os.WriteFile(filepath.Join(fake, "git-ideate"), script(release.Version), 0o755); err != nil {
			t.Fatal(err)
		}
		r = run(t, root, env3, "", "mcp", "x")
		if r.code != 0 || r.out != "fallback mcp x\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
		if r = run(t, root, env3, "", "record", "read"); r.out != "fallback record read\n" || r.err != "" {
			t.Fatalf("second launch: stdout %q, stderr %q", r.out, r.err)
		}
	})
}

// A git-ideate on PATH installed with go install …@v<version> says
// "git-ideate v<version> …": the launcher takes it as this version.
func TestLauncher_AcceptsAVPrefixedVersionOnPath(t *testing.T) {
	root := repoRoot(t)
	fake := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo \"git-ideate v" + release.Version + " (fake)\"; else echo \"fallback $*\"; fi\n"
	if err := os.WriteFile(filepath.Join(fake, "git-ideate"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"CLAUDE_PLUGIN_DATA=" + t.TempDir(), "PATH=" + toolDir(t) + string(os.PathListSeparator) + fake}
	if r := run(t, root, env, "", "mcp", "x"); r.code != 0 || r.out != "fallback mcp x\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}
