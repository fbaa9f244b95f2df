package plugintest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a first launch with hook payloads spooled, the tools are announced
// (notifications/tools/list_changed) as soon as the binary is ready, not
// after the spool is replayed: when the notification arrives, most of 20
// spooled SessionEnd payloads are still to be replayed, and all of them
// are replayed afterwards.
func TestLauncher_FirstLaunchMCP_ToolsBeforeReplay(t *testing.T) {
	root := copyPlugin(t)
	srv, _ := releaseServer(t)
	data := t.TempDir()
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	spool := filepath.Join(filepath.Dir(dataExe(data)), "spool")
	if err := os.MkdirAll(spool, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := 0; i < n; i++ {
		name := filepath.Join(spool, fmt.Sprintf("1700000000.%d", 1000+i))
		env := fmt.Sprintf("cwd='%s'\npdir=''\nargs='hook'\n", repo)
		payload := fmt.Sprintf(`{"session_id":"s%d","reason":"other","hook_event_name":"SessionEnd","cwd":%q}`, i, repo)
		if os.WriteFile(name+".env", []byte(env), 0o644) != nil || os.WriteFile(name+".json", []byte(payload), 0o644) != nil {
			t.Fatal("cannot spool")
		}
	}
	records := func() int {
		out, _ := exec.Command("git", "-C", repo, "log", "--format=%s", "refs/ideate/record").Output()
		return strings.Count(string(out), "session-outcome:")
	}
	c := startMCP(t, root, repo, []string{"CLAUDE_PLUGIN_DATA=" + data, "PATH=" + netTools(t), "GIT_IDEATE_RELEASE_URL=" + srv.URL + "/good"})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if m := c.next(10 * time.Second); m["id"] != float64(0) {
		t.Fatalf("initialize: %v", m)
	}
	for {
		if m := c.next(5 * time.Minute); m["method"] == "notifications/tools/list_changed" {
			break
		}
	}
	replayed := records()
	t.Logf("when the tools were announced, %d of %d spooled hooks had been replayed", replayed, n)
	if replayed > n/2 {
		t.Errorf("%d of %d spooled hooks were replayed before the tools were announced", replayed, n)
	}
	for deadline := time.Now().Add(2 * time.Minute); records() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d spooled hooks were replayed", records(), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
