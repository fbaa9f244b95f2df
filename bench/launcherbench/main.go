// Command launcherbench measures the plugin launcher (bin/git-ideate): a
// warm launch's overhead over running the binary directly (`--version`,
// alternating, paired, in one run), and a first launch as the MCP server
// with a release download: the time to the initialize answer and to a
// working tools/call.
//
//	go run ./bench/launcherbench [-runs 300]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ideate/git-ideate/bench/internal/benchutil"
	"github.com/ideate/git-ideate/internal/release"
)

func main() {
	runs := flag.Int("runs", 300, "paired warm launches")
	firsts := flag.Int("firsts", 5, "first launches with a release download")
	flag.Parse()
	root, err := os.Getwd()
	benchutil.Must(err)
	tmp, err := os.MkdirTemp("", "launcherbench-")
	benchutil.Must(err)
	defer os.RemoveAll(tmp)
	rel := filepath.Join(tmp, "release")
	_, err = release.Build(context.Background(), release.Options{Root: root, Out: rel, Commit: strings.Repeat("b", 40), Date: 1700000000,
		Targets: []release.Target{{OS: runtime.GOOS, Arch: runtime.GOARCH}}})
	benchutil.Must(err)
	srv := httptest.NewServer(http.FileServer(http.Dir(rel)))
	defer srv.Close()
	env := func(data string) []string {
		return append(os.Environ(), "CLAUDE_PLUGIN_DATA="+data, "GIT_IDEATE_RELEASE_URL="+srv.URL, "GIT_IDEATE_NO_DOWNLOAD=")
	}
	// A plugin root that is not a git checkout, so the download is used.
	plugin := filepath.Join(tmp, "plugin")
	for _, f := range []string{"bin/git-ideate", ".claude-plugin/plugin.json"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		benchutil.Must(err)
		benchutil.Must(os.MkdirAll(filepath.Dir(filepath.Join(plugin, f)), 0o755))
		benchutil.Must(os.WriteFile(filepath.Join(plugin, f), b, 0o755))
	}
	launcher := filepath.Join(plugin, "bin", "git-ideate")

	fmt.Printf("launcherbench: %s, %d paired warm runs, %d first launches\n", time.Now().UTC().Format(time.RFC3339), *runs, *firsts)
	var inits, works []time.Duration
	for i := 0; i < *firsts; i++ {
		data := filepath.Join(tmp, fmt.Sprintf("first%d", i))
		a, b := firstLaunch(launcher, env(data), tmp)
		inits, works = append(inits, a), append(works, b)
	}
	fmt.Printf("first launch (release download): initialize answered, median %v; a working tools/call, median %v\n",
		benchutil.Median(inits).Round(10*time.Microsecond), benchutil.Median(works).Round(time.Millisecond))

	data := filepath.Join(tmp, "warm")
	warm := exec.Command("sh", launcher, "--version")
	warm.Env = env(data)
	out, err := warm.CombinedOutput()
	benchutil.Must(err)
	exe := filepath.Join(data, "build", release.Version, "git-ideate")
	var direct, via []benchutil.Sample
	var diffs []time.Duration
	for i := 0; i < *runs; i++ {
		d := run(exe, nil, "--version")
		v := run("sh", env(data), launcher, "--version")
		direct, via = append(direct, d), append(via, v)
		diffs = append(diffs, v.Wall-d.Wall)
	}
	ds, vs := benchutil.Summarize(direct), benchutil.Summarize(via)
	fmt.Printf("%-40s %10s %10s %8s\n", "figure", "median", "cpu", "ratio")
	benchutil.Row(*runs, "git-ideate --version (direct)", ds, ds)
	benchutil.Row(*runs, "sh bin/git-ideate --version (warm)", vs, ds)
	fmt.Printf("warm launcher overhead, median of paired differences: %v (target 5ms); first output %q\n",
		benchutil.Median(diffs).Round(10*time.Microsecond), strings.TrimSpace(string(out)))
}

func run(bin string, env []string, args ...string) benchutil.Sample {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	t0 := time.Now()
	benchutil.Must(cmd.Run())
	return benchutil.Sample{Wall: time.Since(t0)}
}

// firstLaunch starts the launcher as an MCP server with an empty data
// directory and returns the time to the initialize answer and to a
// working tools/call.
func firstLaunch(launcher string, env []string, tmp string) (time.Duration, time.Duration) {
	repo, err := os.MkdirTemp(tmp, "repo")
	benchutil.Must(err)
	benchutil.Must(exec.Command("git", "init", "-q", repo).Run())
	cmd := exec.Command("sh", launcher, "mcp")
	cmd.Dir = repo
	cmd.Env = append(env, "GIT_IDEATE_NO_MAINTENANCE=1")
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	t0 := time.Now()
	benchutil.Must(cmd.Start())
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(outp)
	sc.Buffer(nil, 1<<24)
	next := func() map[string]any {
		if !sc.Scan() {
			benchutil.Must(fmt.Errorf("the server closed its output"))
		}
		var m map[string]any
		benchutil.Must(json.Unmarshal(sc.Bytes(), &m))
		return m
	}
	send := func(s string) { io.WriteString(in, s+"\n") }
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	next()
	initAt := time.Since(t0)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m := next()
	if r, _ := m["result"].(map[string]any); r != nil {
		if ts, _ := r["tools"].([]any); len(ts) == 0 {
			for m["method"] != "notifications/tools/list_changed" {
				m = next()
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record_append","arguments":{"kind":"note","claim":"bench","content":"c","scope":"s"}}}`)
	for m = next(); m["id"] != float64(2); m = next() {
	}
	if r, _ := m["result"].(map[string]any); r == nil || r["isError"] == true {
		benchutil.Must(fmt.Errorf("tools/call: %v", m))
	}
	return initAt, time.Since(t0)
}
