package plugintest

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/release"
)

const relCommit = "c0ffee0000000000000000000000000000000001"

var (
	relOnce sync.Once
	relDir  string
	relErr  error
)

// releaseDir holds the release artifacts for this machine's platform,
// built once with the release's own builder (the names the launcher
// downloads).
func releaseDir(t *testing.T) string {
	t.Helper()
	goBinDir(t)
	relOnce.Do(func() {
		relDir, relErr = os.MkdirTemp("", "ideate-release-")
		if relErr != nil {
			return
		}
		_, relErr = release.Build(context.Background(), release.Options{Root: repoRoot(t), Out: relDir,
			Commit: relCommit, Date: 1700000000, Targets: []release.Target{hostTarget(t)}})
	})
	if relErr != nil {
		t.Fatal(relErr)
	}
	return relDir
}

func hostTarget(t testing.TB) release.Target {
	out, err := exec.Command("go", "env", "GOOS", "GOARCH").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	return release.Target{OS: f[0], Arch: f[1]}
}

// releaseServer serves the release under /good/, a checksums file that
// does not match under /bad/, a truncated asset under /trunc/, nothing
// under /404/, and the asset slowly (in 64 KiB pieces, 20 ms apart) under
// /slow/. hits counts the requests.
func releaseServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	dir := releaseDir(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mode, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(name)))
		if err != nil || mode == "404" {
			http.NotFound(w, r)
			return
		}
		isSums := strings.HasSuffix(name, "_checksums.txt")
		switch {
		case mode == "bad" && isSums:
			b = []byte(strings.Repeat("0", 64) + "  " + release.ArchiveName(release.Version, hostTarget(t)) + "\n")
		case mode == "trunc" && !isSums:
			b = b[:len(b)/2]
		case mode == "slow" && !isSums:
			for len(b) > 0 {
				n := min(len(b), 64<<10)
				if _, err := w.Write(b[:n]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				b = b[n:]
				time.Sleep(20 * time.Millisecond)
			}
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// netTools is a PATH directory with what a download needs and no go.
func netTools(t *testing.T) string {
	dir := toolDir(t)
	for _, name := range []string{"curl", "sha256sum", "tar", "gzip", "uname", "flock"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s not installed", name)
		}
		os.Symlink(p, filepath.Join(dir, name))
	}
	return dir
}

func leftovers(t *testing.T, data string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n := d.Name()
		for _, pre := range []string{".dl.", ".git-ideate.tmp.", ".build-start.", ".gotmp.", ".link.", ".mcp-initialized.", "git-ideate.stamp.tmp."} {
			if strings.HasPrefix(n, pre) {
				out = append(out, p)
			}
		}
		if strings.HasSuffix(n, ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestLauncher_ReleaseDownload(t *testing.T) {
	root := copyPlugin(t)
	srv, hits := releaseServer(t)
	tools := netTools(t)
	want := "git-ideate " + release.Version + " (commit " + relCommit + ";"
	dl := func(data, mode string, extra ...string) []string {
		return append([]string{"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + tools, "GIT_IDEATE_NO_DOWNLOAD=",
			"GIT_IDEATE_RELEASE_URL=" + srv.URL + "/" + mode}, extra...)
	}

	t.Run("a good asset is installed, checked and used; the next launch fetches nothing", func(t *testing.T) {
		data := t.TempDir()
		t0 := time.Now()
		r := run(t, root, dl(data, "good"), "", "--version")
		if r.code != 0 || !strings.HasPrefix(r.out, want) || r.err != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
		t.Logf("first launch with a release download: %v", time.Since(t0))
		stamp, _ := os.ReadFile(filepath.Join(filepath.Dir(dataExe(data)), "git-ideate.stamp"))
		if !strings.Contains(string(stamp), "got_by=download") {
			t.Fatalf("stamp %s", stamp)
		}
		n := hits.Load()
		if r := run(t, root, dl(data, "good"), "", "--version"); !strings.HasPrefix(r.out, want) || hits.Load() != n {
			t.Fatalf("second launch: %q, %d more requests", r.out, hits.Load()-n)
		}
		if l := leftovers(t, data); len(l) > 0 {
			t.Fatalf("left behind: %v", l)
		}
	})

	for _, c := range []struct{ mode, says string }{
		{"bad", "checksum mismatch"}, {"trunc", "checksum mismatch"}, {"404", "download from"},
	} {
		t.Run(c.mode+": refused; without go, one line and exit 0", func(t *testing.T) {
			data := t.TempDir()
			r := run(t, root, dl(data, c.mode), "", "--version")
			if r.code != 0 || r.out != "" || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, c.says) || !strings.Contains(r.err, "inactive") {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
			}
			if _, err := os.Stat(dataExe(data)); err == nil {
				t.Fatal("a refused download was installed")
			}
			if l := leftovers(t, data); len(l) > 0 {
				t.Fatalf("left behind: %v", l)
			}
		})
	}

	t.Run("a checksum mismatch falls back to a build", func(t *testing.T) {
		data := t.TempDir()
		r := run(t, root, dl(data, "bad", "PATH="+tools+string(os.PathListSeparator)+goBinDir(t)), "", "--version")
		if r.code != 0 || r.builds() != 1 || !strings.Contains(r.err, "checksum mismatch") ||
			!strings.HasPrefix(r.out, "git-ideate "+release.Version+" (") || strings.Contains(r.out, relCommit) {
			t.Fatalf("exit %d, builds %d, stdout %q, stderr %q", r.code, r.builds(), r.out, r.err)
		}
	})

	t.Run("no network and no go: one line, exit 0", func(t *testing.T) {
		data := t.TempDir()
		env := []string{"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + tools, "GIT_IDEATE_NO_DOWNLOAD=", "GIT_IDEATE_RELEASE_URL=http://127.0.0.1:1/x"}
		r := run(t, root, env, "", "hook")
		// A hook spools and exits at once; the command line says why.
		if r.code != 0 || r.out != "" {
			t.Fatalf("hook: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
		r = run(t, root, env, "", "--version")
		if r.code != 0 || r.out != "" || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "no Go toolchain") {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
	})

	t.Run("killed at random points during a download, 20 times: the next launch works, nothing left", func(t *testing.T) {
		data := t.TempDir()
		env := mergeEnv(os.Environ(), []string{"CGO_ENABLED=0", "GIT_IDEATE_PROBE=", "XDG_CACHE_HOME=" + cacheHome(t),
			"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + tools, "GIT_IDEATE_RELEASE_URL=" + srv.URL + "/slow"})
		killRandomly(t, root, env, 20, 1500*time.Millisecond)
		r := run(t, root, dl(data, "good"), "", "--version")
		if r.code != 0 || !strings.HasPrefix(r.out, want) {
			t.Fatalf("after the kills: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
		if l := leftovers(t, data); len(l) > 0 {
			t.Fatalf("left behind: %v", l)
		}
	})
}

// killRandomly starts `launcher --version` n times and kills its whole
// process group with SIGKILL after a random time below most.
func killRandomly(t *testing.T, root string, env []string, n int, most time.Duration) {
	t.Helper()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	groups := map[int]bool{}
	defer waitGroupsGone(t, groups)
	for i := 0; i < n; i++ {
		cmd := exec.Command("sh", filepath.Join(root, "bin", "git-ideate"), "--version")
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		groups[cmd.Process.Pid] = true
		time.Sleep(time.Duration(rng.Int63n(int64(most))))
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
}

// procInfo is what /proc says of one process: its parent, its process
// group and its command line.
type procInfo struct {
	pid, ppid, pgrp int
	cmdline         string
}

// processes lists the processes /proc shows (Linux); elsewhere none.
func processes() []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		var pi procInfo
		if _, err := fmt.Sscan(e.Name(), &pi.pid); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		var state string
		fmt.Sscan(rest, &state, &pi.ppid, &pi.pgrp)
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		pi.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
		out = append(out, pi)
	}
	return out
}

// waitGroupsGone waits (at most a minute) until no process of the killed
// process groups is left: SIGKILL is sent to the group at once, but each
// member ends in its own time, and a member still holding the launcher's
// lock would make the next launch wait for it.
func waitGroupsGone(t *testing.T, groups map[int]bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var left []procInfo
		for _, p := range processes() {
			if groups[p.pgrp] {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after SIGKILL to their groups these processes live: %+v", left)
		}
	}
}

func TestLauncher_KilledDuringABuild(t *testing.T) {
	if testing.Short() {
		t.Skip("20 interrupted builds")
	}
	go_ := goBinDir(t)
	root := copyPlugin(t)
	data := t.TempDir()
	env := mergeEnv(os.Environ(), []string{"CGO_ENABLED=0", "GIT_IDEATE_PROBE=", "XDG_CACHE_HOME=" + cacheHome(t),
		"CLAUDE_PLUGIN_DATA=" + data, "GIT_IDEATE_NO_DOWNLOAD=1", "PATH=" + toolDir(t) + string(os.PathListSeparator) + go_})
	killRandomly(t, root, env, 20, 3*time.Second)
	// No flock(1) on this PATH: the launchers lock with mkdir. A kill
	// between a launcher's mkdir and its pid (a CI run hit it) left a lock
	// that the launch below waited for to its limit, 600 s, and gave up;
	// such a lock is broken after 5 s now, so a limit of 120 s is ample
	// for the build too.
	r := run(t, root, []string{"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + toolDir(t) + string(os.PathListSeparator) + go_,
		"GIT_IDEATE_BUILD_WAIT=120"}, "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.out, "git-ideate "+release.Version) {
		t.Fatalf("after the kills: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Fatalf("left behind: %v", l)
	}
}

// mcpConn is a launcher started as the plugin's MCP server.
type mcpConn struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan map[string]any
}

func startMCP(t *testing.T, root, cwd string, env []string) *mcpConn {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join(root, "bin", "git-ideate"), "mcp")
	cmd.Dir = cwd
	cmd.Env = mergeEnv(os.Environ(), append([]string{"CGO_ENABLED=0", "GIT_IDEATE_PROBE=", "GIT_IDEATE_MCP_PENDING=",
		"XDG_CACHE_HOME=" + cacheHome(t), "GIT_IDEATE_NO_MAINTENANCE=1"}, env...))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &mcpConn{t: t, cmd: cmd, in: in, lines: make(chan map[string]any, 64)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"unparsed": sc.Text()}
			}
			c.lines <- m
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return c
}

func (c *mcpConn) send(s string) {
	if _, err := io.WriteString(c.in, s+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// next is the next message; a notification when method is set, else the
// answer to id.
func (c *mcpConn) next(d time.Duration) map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server closed its output")
		}
		if _, bad := m["unparsed"]; bad {
			c.t.Fatalf("not JSON on stdout: %v", m)
		}
		return m
	case <-time.After(d):
		c.t.Fatalf("no message within %v", d)
	}
	return nil
}

func toolCount(m map[string]any) int {
	r, _ := m["result"].(map[string]any)
	ts, _ := r["tools"].([]any)
	return len(ts)
}

// firstMCP drives a first launch as the host does: initialize (timed),
// tools/list, then waits for the tools (list_changed) and calls one.
func firstMCP(t *testing.T, root string, env []string) (initAnswer, working time.Duration) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	t0 := time.Now()
	c := startMCP(t, root, repo, env)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	m := c.next(10 * time.Second)
	initAnswer = time.Since(t0)
	if m["id"] != float64(0) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m = c.next(10 * time.Second)
	if m["id"] != float64(1) {
		t.Fatalf("tools/list: %v", m)
	}
	if toolCount(m) == 0 {
		caps, _ := m["result"].(map[string]any)
		_ = caps
		for {
			m = c.next(5 * time.Minute)
			if m["method"] == "notifications/tools/list_changed" {
				break
			}
		}
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		for m = c.next(time.Minute); m["id"] != float64(2); m = c.next(time.Minute) {
		}
		if toolCount(m) < 10 {
			t.Fatalf("tools after list_changed: %v", m)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"record_append","arguments":{"kind":"note","claim":"first launch","content":"c","scope":"s"}}}`)
	for m = c.next(time.Minute); m["id"] != float64(3); m = c.next(time.Minute) {
	}
	working = time.Since(t0)
	if r, _ := m["result"].(map[string]any); r == nil || r["isError"] == true {
		t.Fatalf("tools/call: %v", m)
	}
	if out, _ := exec.Command("git", "-C", repo, "log", "--format=%s", "refs/ideate/record").Output(); !strings.Contains(string(out), "first launch") {
		t.Fatalf("no record: %q", out)
	}
	return initAnswer, working
}

// A first launch answers initialize at once, whatever getting the binary
// costs, and the tools arrive with notifications/tools/list_changed.
func TestLauncher_FirstLaunchMCP(t *testing.T) {
	root := copyPlugin(t)
	t.Run("release download", func(t *testing.T) {
		srv, _ := releaseServer(t)
		ia, w := firstMCP(t, root, []string{"CLAUDE_PLUGIN_DATA=" + t.TempDir(), "PATH=" + netTools(t),
			"GIT_IDEATE_RELEASE_URL=" + srv.URL + "/good"})
		t.Logf("first launch, release download: initialize answered after %v, a working tools/call after %v", ia, w)
		if ia > 5*time.Second {
			t.Errorf("initialize answered after %v", ia)
		}
	})
	t.Run("build from source", func(t *testing.T) {
		ia, w := firstMCP(t, root, []string{"CLAUDE_PLUGIN_DATA=" + t.TempDir(), "GIT_IDEATE_NO_DOWNLOAD=1",
			"PATH=" + toolDir(t) + string(os.PathListSeparator) + goBinDir(t)})
		t.Logf("first launch, build: initialize answered after %v, a working tools/call after %v", ia, w)
		if ia > 5*time.Second {
			t.Errorf("initialize answered after %v", ia)
		}
	})
}

// A hook fired while there is no binary exits at once with nothing on
// stdout; its record is written when the binary arrives.
func TestLauncher_HookDuringFirstBuild(t *testing.T) {
	root := copyPlugin(t)
	data := t.TempDir()
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	sh, _ := exec.LookPath("sh")
	cmd := exec.Command(sh, filepath.Join(root, "bin", "git-ideate"), "hook")
	cmd.Dir = repo
	cmd.Env = mergeEnv(os.Environ(), []string{"CGO_ENABLED=0", "GIT_IDEATE_PROBE=", "XDG_CACHE_HOME=" + cacheHome(t),
		"CLAUDE_PLUGIN_DATA=" + data, "GIT_IDEATE_NO_DOWNLOAD=1", "GIT_IDEATE_NO_MAINTENANCE=1",
		"PATH=" + toolDir(t) + string(os.PathListSeparator) + goBinDir(t)})
	cmd.Stdin = strings.NewReader(`{"session_id":"s","reason":"other","hook_event_name":"SessionEnd","cwd":"` + repo + `"}`)
	t0 := time.Now()
	out, err := cmd.Output() // returns when stdout closes: the background build must not hold it
	took := time.Since(t0)
	if err != nil || len(out) != 0 {
		t.Fatalf("hook: %v, stdout %q", err, out)
	}
	t.Logf("the hook returned after %v", took)
	if took > 5*time.Second {
		t.Errorf("the hook waited %v for the build", took)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		got, _ := exec.Command("git", "-C", repo, "log", "--format=%s", "refs/ideate/record").Output()
		if strings.Contains(string(got), "session-outcome: Session s ended (other).") {
			break
		}
		// A failed build replays nothing: say so at once, rather than wait
		// out the deadline (a test binary killed at its -timeout runs no
		// cleanup and leaves its temporary directories behind).
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(dataExe(data)), "build-failed")); err == nil {
			t.Fatalf("the background build failed (%s); the spooled hook cannot be replayed", strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spooled hook never wrote its record (%q)", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The spool is gone once replayed.
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(filepath.Join(filepath.Dir(dataExe(data)), "spool")); os.IsNotExist(err) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the spool directory outlived its replay")
}

// When no binary can be got at all, the shim says so on every call (why,
// and what to do), not that the install is still running.
func TestLauncher_FirstLaunchMCP_NothingToGet(t *testing.T) {
	root := copyPlugin(t)
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	tools := toolDir(t)
	data := t.TempDir()
	c := startMCP(t, root, repo, []string{"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + tools,
		"GIT_IDEATE_NO_DOWNLOAD=", "GIT_IDEATE_RELEASE_URL=http://127.0.0.1:1/x"})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if m := c.next(10 * time.Second); m["id"] != float64(0) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	// The failure is known once the background acquisition gave up.
	deadline := time.Now().Add(time.Minute)
	var msg string
	for id := 1; time.Now().Before(deadline); id++ {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"record_append","arguments":{}}}`, id))
		m := c.next(10 * time.Second)
		e, _ := m["error"].(map[string]any)
		if e == nil {
			t.Fatalf("tools/call without a binary: %v", m)
		}
		msg, _ = e["message"].(string)
		if strings.Contains(msg, "could not be installed") {
			break
		}
		if !strings.Contains(msg, "still being installed") {
			t.Fatalf("message %q", msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(msg, "could not be installed") || !strings.Contains(msg, "no Go toolchain") || !strings.Contains(msg, "download") {
		t.Fatalf("last message %q", msg)
	}
	c.in.Close()
	c.cmd.Wait()
	if l := leftovers(t, data); len(l) > 0 {
		t.Fatalf("left behind: %v", l)
	}
}

// Under Git for Windows' bash (uname -s says MINGW64_NT-…), the launcher
// fetches the windows zip, checks it and installs its git-ideate.exe
// and the helper beside it. The
// test serves this machine's binary under the windows names, with a
// uname that answers as MSYS2 does.
func TestLauncher_WindowsDownload(t *testing.T) {
	if _, err := exec.LookPath("unzip"); err != nil {
		t.Skip("unzip not installed")
	}
	root := copyPlugin(t)
	host := filepath.Join(releaseDir(t), release.ArchiveName(release.Version, hostTarget(t)))
	bin := binaryFromTarGz(t, host)
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "git-ideate.exe", Method: zip.Deflate, ExternalAttrs: 0o755 << 16, CreatorVersion: 3 << 8})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bin)
	// The optional tree-sitter helper lands beside the binary.
	w, err = zw.CreateHeader(&zip.FileHeader{Name: "git-ideate-symbols.exe", Method: zip.Deflate, ExternalAttrs: 0o755 << 16, CreatorVersion: 3 << 8})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("helper"))
	zw.Close()
	asset := release.ArchiveName(release.Version, release.Target{OS: "windows", Arch: "amd64"})
	sum := sha256.Sum256(zb.Bytes())
	sums := fmt.Sprintf("%x  %s\n", sum, asset)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch path.Base(r.URL.Path) {
		case asset:
			w.Write(zb.Bytes())
		case release.ChecksumsName(release.Version):
			io.WriteString(w, sums)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tools := netTools(t)
	os.Remove(filepath.Join(tools, "uname"))
	if err := os.WriteFile(filepath.Join(tools, "uname"), []byte("#!/bin/sh\ncase $1 in -m) echo x86_64 ;; *) echo MINGW64_NT-10.0-19045 ;; esac\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, _ := exec.LookPath("unzip")
	os.Symlink(p, filepath.Join(tools, "unzip"))
	data := t.TempDir()
	r := run(t, root, []string{"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + tools, "GIT_IDEATE_NO_DOWNLOAD=",
		"GIT_IDEATE_RELEASE_URL=" + srv.URL}, "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.out, "git-ideate "+release.Version+" (commit "+relCommit) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	exe := filepath.Join(filepath.Dir(dataExe(data)), "git-ideate.exe")
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("no git-ideate.exe: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(exe), "git-ideate-symbols.exe")); err != nil || string(b) != "helper" {
		t.Fatalf("the helper beside git-ideate.exe: %q %v", b, err)
	}
	if l := leftovers(t, data); len(l) > 0 {
		t.Fatalf("left behind: %v", l)
	}
}

// binaryFromTarGz is the git-ideate binary inside a release archive.
func binaryFromTarGz(t *testing.T, p string) []byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no git-ideate in %s: %v", p, err)
		}
		if h.Name == "git-ideate" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// While there is no binary, no hook that needs a gate is allowed: a
// dispatch of an execution role and every write tool call of the plugin's
// sub-agents are denied, and a stop gate blocks, each saying the install
// is under way (or why it failed), at once; any other hook spools and
// says nothing.
func TestLauncher_FirstLaunchFailsClosed(t *testing.T) {
	root := copyPlugin(t)
	tools := toolDir(t) // no go, no git-ideate
	const installing = "git ideate is still being installed; retry in "
	const failed = "git ideate could not be installed ("
	// A repository whose sprint executes (an open task's marker, as the
	// worktree manager keeps it), a linked worktree of it, and one at rest.
	sprint, rest := t.TempDir(), t.TempDir()
	for _, args := range [][]string{{"init", "-q", sprint}, {"init", "-q", rest},
		{"-C", sprint, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "base"},
		{"-C", sprint, "worktree", "add", "-q", filepath.Join(sprint, ".ideate", "worktrees", "T1")}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(sprint, ".git", "ideate", "executing"), 0o755)
	os.WriteFile(filepath.Join(sprint, ".git", "ideate", "executing", "S1-01+T1"), nil, 0o644)
	linked := filepath.Join(sprint, ".ideate", "worktrees", "T1", "sub")
	os.MkdirAll(linked, 0o755)
	write := func(cwd, agent, tool string) string {
		p := map[string]any{"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": map[string]any{"file_path": "a.go", "command": "ls"}}
		if agent != "" {
			p["agent_id"], p["agent_type"] = "a9", agent
		}
		b, _ := json.Marshal(p)
		return string(b)
	}
	for _, c := range []struct {
		name, payload string
		args          []string
		deny, block   bool
	}{
		{name: "general-purpose Write during a sprint", payload: write(sprint, "general-purpose", "Write"), deny: true},
		{name: "Explore Bash in a task worktree during a sprint", payload: write(linked, "Explore", "Bash"), deny: true},
		{name: "main session Edit during a sprint", payload: write(sprint, "", "Edit"), deny: true},
		{name: "main session Bash during a sprint", payload: write(sprint, "", "Bash")},
		{name: "general-purpose Write at rest", payload: write(rest, "general-purpose", "Write")},
		{name: "red-worker dispatch", payload: `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_use_id":"toolu_1","tool_input":{"prompt":"ideate-task: S1-01/T1","subagent_type":"git-ideate:red-worker"}}`, deny: true},
		{name: "unprefixed post-planner dispatch", payload: `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Task","tool_input":{"prompt":"x","subagent_type":"post-planner"}}`, deny: true},
		{name: "bound worker's Write", payload: `{"session_id":"s","agent_id":"a1","agent_type":"git-ideate:green-worker","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"a.go","content":"x"}}`, deny: true},
		{name: "bound worker's Bash", payload: "{\n  \"session_id\": \"s\",\n  \"agent_id\": \"a1\",\n  \"agent_type\": \"red-worker\",\n  \"hook_event_name\": \"PreToolUse\",\n  \"tool_name\": \"Bash\",\n  \"tool_input\": {\"command\": \"timeout 5 touch prod.go\"}\n}", deny: true},
		{name: "reviewer's Bash", payload: `{"session_id":"s","agent_id":"a2","agent_type":"git-ideate:structural-reviewer","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo n > notes"}}`, deny: true},
		{name: "stop gate", payload: `{"session_id":"s","agent_id":"a1","agent_type":"git-ideate:red-worker","hook_event_name":"SubagentStop","stop_hook_active":false}`, args: []string{"--gate"}, block: true},
		{name: "general-purpose dispatch", payload: `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"look","subagent_type":"general-purpose"}}`},
		{name: "a role named in a string", payload: `{"session_id":"s","agent_id":"a3","agent_type":"Explore","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo \"agent_type\":\"red-worker\""}}`},
		{name: "main session's Bash", payload: `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`},
		{name: "session start", payload: `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`},
	} {
		for _, mode := range []struct {
			env  []string
			want string
		}{
			// A download that may still come: the install is under way.
			{[]string{"GIT_IDEATE_NO_DOWNLOAD=", "GIT_IDEATE_RELEASE_URL=http://127.0.0.1:1/x"}, installing},
			// Nothing to get it from: the message says so.
			{[]string{"GIT_IDEATE_NO_DOWNLOAD=1"}, failed},
		} {
			data := t.TempDir()
			env := append([]string{"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + tools}, mode.env...)
			t0 := time.Now()
			r := run(t, root, env, c.payload, append([]string{"hook"}, c.args...)...)
			took := time.Since(t0)
			if r.code != 0 || took > 10*time.Second {
				t.Errorf("%s: exit %d after %v, stderr %q", c.name, r.code, took, r.err)
			}
			switch {
			case c.deny:
				var m struct {
					HSO struct {
						Event    string `json:"hookEventName"`
						Decision string `json:"permissionDecision"`
						Reason   string `json:"permissionDecisionReason"`
					} `json:"hookSpecificOutput"`
				}
				if err := json.Unmarshal([]byte(r.out), &m); err != nil || m.HSO.Event != "PreToolUse" || m.HSO.Decision != "deny" ||
					!strings.HasPrefix(m.HSO.Reason, mode.want) || strings.Count(r.out, "\n") != 1 {
					t.Errorf("%s: stdout %q (%v), want a deny saying %q", c.name, r.out, err, mode.want)
				}
			case c.block:
				var m struct{ Decision, Reason string }
				if err := json.Unmarshal([]byte(r.out), &m); err != nil || m.Decision != "block" || !strings.HasPrefix(m.Reason, mode.want) ||
					strings.Contains(r.out, "build failed") {
					t.Errorf("%s: stdout %q (%v), want a block saying %q", c.name, r.out, err, mode.want)
				}
			default:
				if r.out != "" {
					t.Errorf("%s: stdout %q, want nothing", c.name, r.out)
				}
			}
		}
	}
}
