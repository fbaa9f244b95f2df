package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/mcpserver"
)

// mcpSDK returns a node_modules directory holding the official MCP
// TypeScript SDK: GIT_IDEATE_NODE_RUNNERS's (.ci/run installs it there),
// else one npm installs into a temporary prefix; it skips the test when
// node or npm is missing or the install fails.
func mcpSDK(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the MCP TypeScript SDK client test needs it")
	}
	if d := os.Getenv("GIT_IDEATE_NODE_RUNNERS"); d != "" {
		nm := filepath.Join(d, "node_modules")
		if _, err := os.Stat(filepath.Join(nm, "@modelcontextprotocol", "sdk", "package.json")); err == nil {
			return nm
		}
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: cannot install @modelcontextprotocol/sdk for the SDK client test")
	}
	prefix := t.TempDir()
	cmd := exec.Command("npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", "@modelcontextprotocol/sdk")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm install @modelcontextprotocol/sdk failed (%v): %s", err, out)
	}
	return filepath.Join(prefix, "node_modules")
}

// The official MCP TypeScript SDK client against the built binary: while
// a test_run of a 30 s test runs, ping, tools/list and record_read are
// each answered within a second and progress arrives; aborting the call
// at 5 s (the SDK sends notifications/cancelled) leaves no process of
// the run 2 s later and no result; a 5 MiB claim is refused with SCHEMA
// and the session and a new one go on; a result is sent once, as text.
func TestMCP_OfficialSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("installs and runs the SDK client")
	}
	nm := mcpSDK(t)
	dir, pidfile := sleepyProject(t)
	cmd := exec.Command("node", filepath.Join("testdata", "mcp_sdk_client.mjs"), nm, binPath, dir, pidfile)
	cmd.Env = append(os.Environ(), "IDEATE_SLEEP_PIDFILE="+pidfile, sleepWritable(pidfile))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the SDK client: %v\n%s%s", err, out, stderr.String())
	}
	var got struct {
		Tools                                     int
		PingMs, ListMs, ReadMs, PingAfterCancelMs int
		Progress                                  int
		RunResolved                               bool
		RunRejected                               string
		GroupAlive, TestAlive                     bool
		BigIsError                                bool
		BigCode, BigMessage                       string
		AfterBig, AppendOk, Structured            bool
		NewSessionRecords                         int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("SDK client: %s", out)
	if want := len(mcpserver.New("test", nil).List()); got.Tools != want {
		t.Errorf("tools/list through the SDK: %d tools, want %d", got.Tools, want)
	}
	for name, ms := range map[string]int{"ping": got.PingMs, "tools/list": got.ListMs, "record_read": got.ReadMs, "ping after the cancel": got.PingAfterCancelMs} {
		if ms > 1000 {
			t.Errorf("%s took %d ms while test_run ran; want under 1 s", name, ms)
		}
	}
	if got.Progress < 1 {
		t.Error("no progress notification reached the SDK")
	}
	if got.RunResolved || got.RunRejected == "" {
		t.Errorf("the aborted test_run: resolved %v, rejected %q", got.RunResolved, got.RunRejected)
	}
	if got.GroupAlive || got.TestAlive {
		t.Errorf("2 s after the cancel the run's processes are alive (group %v, test %v)", got.GroupAlive, got.TestAlive)
	}
	if !got.BigIsError || got.BigCode != "SCHEMA" || !strings.Contains(got.BigMessage, "/claim") {
		t.Errorf("a 5 MiB claim: error %v, code %s, %s", got.BigIsError, got.BigCode, got.BigMessage)
	}
	if !got.AfterBig || !got.AppendOk || got.NewSessionRecords != 1 {
		t.Errorf("after the 5 MiB claim: read %v, append %v, a new session sees %d records", got.AfterBig, got.AppendOk, got.NewSessionRecords)
	}
	if got.Structured {
		t.Error("a result carries structuredContent though no tool declares an output schema")
	}
}
