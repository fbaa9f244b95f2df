// Package teamsynctest serves bare repositories to tests the way a team's
// git host does: over git's smart HTTP protocol, through the real `git
// http-backend`.
package teamsynctest

import (
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// StartHTTP serves the bare repositories under root over git's smart HTTP
// protocol: `git http-backend` run as a CGI program by net/http/cgi, until
// the test ends. It returns the URL prefix; a repository is reached as
// prefix + its name under root. Pushes are accepted only by repositories
// with http.receivepack set.
func StartHTTP(t testing.TB, root string) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("no git-http-backend: %v", err)
	}
	h := &cgi.Handler{
		Path:   backend,
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
		Stderr: io.Discard,
	}
	// The CGI child inherits the test's isolated git environment
	// (HOME, GIT_CONFIG_GLOBAL …).
	for _, k := range []string{"HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME", "PATH"} {
		if v, ok := os.LookupEnv(k); ok {
			h.Env = append(h.Env, k+"="+v)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/"
}

// ServeBare serves the bare repository bare over smart HTTP with pushes
// on and every pushed object checked (receive.fsckObjects), as a careful
// host would, and returns its URL.
func ServeBare(t testing.TB, bare string) string {
	t.Helper()
	for _, kv := range [][2]string{{"http.receivepack", "true"}, {"receive.fsckObjects", "true"}} {
		if out, err := exec.Command("git", "-C", bare, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("git config %s: %v\n%s", kv[0], err, out)
		}
	}
	return StartHTTP(t, filepath.Dir(bare)) + filepath.Base(bare)
}
