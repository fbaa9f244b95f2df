package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
)

// initRepo returns a fresh repository with a bare remote "origin".
func initRepo(t *testing.T) (dir, remote string) {
	t.Helper()
	dir = gt.NewRepo(t)
	remote = filepath.Join(t.TempDir(), "origin.git")
	gt.Git(t, dir, "init", "-q", "--bare", remote)
	gt.Git(t, dir, "remote", "add", "origin", remote)
	return dir, remote
}

// snapshot is what init may touch, plus what it must not: the files, the
// local git config, HEAD, the index and the status.
type snapshot map[string]string

func takeSnapshot(t *testing.T, dir string) snapshot {
	t.Helper()
	s := snapshot{}
	for _, f := range []string{".claude/settings.json", ".mcp.json", ".ideate.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil {
			s[f] = string(b)
		} else {
			s[f] = "<" + err.Error() + ">"
		}
	}
	s["config"] = gt.Git(t, dir, "config", "--local", "--list")
	s["HEAD"] = gt.Git(t, dir, "rev-parse", "HEAD")
	s["branches"] = gt.Git(t, dir, "for-each-ref", "refs/heads")
	s["index"] = gt.Git(t, dir, "ls-files", "--stage")
	return s
}

func fetchSpecs(t *testing.T, dir string) []string {
	t.Helper()
	return strings.Split(gt.Git(t, dir, "config", "--get-all", "remote.origin.fetch"), "\n")
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

// ideateCommands returns, per event, the commands of the settings' hooks.
func hookCommands(t *testing.T, settings map[string]any) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	hks, _ := settings["hooks"].(map[string]any)
	for ev, groups := range hks {
		for _, g := range groups.([]any) {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				out[ev] = append(out[ev], h.(map[string]any)["command"].(string))
			}
		}
	}
	return out
}

func TestInit_FreshRepo(t *testing.T) {
	dir, _ := initRepo(t)
	before := takeSnapshot(t, dir)
	r := cli(t, dir, "", "init")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	want := []string{
		"created .claude/settings.json: hooks SessionStart, SubagentStart, SessionEnd, PreCompact, SubagentStop, PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied, UserPromptSubmit, Stop, TaskCompleted (git-ideate hook); permissions.allow mcp__ideate",
		"created .mcp.json: mcpServers.ideate (git-ideate mcp)",
		"added remote.origin.fetch: +refs/ideate/*:refs/ideate-remotes/origin/ideate/*",
		"added remote.origin.fetch: +refs/notes/ideate*:refs/ideate-remotes/origin/notes/ideate*",
		"created .ideate.json: the default configuration",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(r.out), "\n")); diff != "" {
		t.Fatalf("output (-want +got):\n%s", diff)
	}

	cmds := hookCommands(t, readJSON(t, filepath.Join(dir, ".claude/settings.json")))
	want2 := map[string][]string{}
	for _, h := range hooks.Hooks() {
		want2[h.Event] = append(want2[h.Event], h.Command("git-ideate hook"))
	}
	if diff := cmp.Diff(want2, cmds); diff != "" {
		t.Errorf("hook commands (-want +got): %s", diff)
	}
	perms, _ := readJSON(t, filepath.Join(dir, ".claude/settings.json"))["permissions"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"allow": []any{"mcp__ideate"}}, perms); diff != "" {
		t.Errorf("permissions (-want +got): %s", diff)
	}
	if !strings.Contains(r.err, "untrusted") {
		t.Errorf("no note on untrusted workspaces:\n%s", r.err)
	}
	mcp := readJSON(t, filepath.Join(dir, ".mcp.json"))
	if diff := cmp.Diff(map[string]any{"mcpServers": map[string]any{"ideate": map[string]any{"command": "git-ideate", "args": []any{"mcp"}}}}, mcp); diff != "" {
		t.Fatalf(".mcp.json: %s", diff)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"mcpServers\": {\n    \"ideate\": {\n      \"command\": \"git-ideate\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"; string(b) != want {
		t.Fatalf(".mcp.json text:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ideate.json")); err != nil {
		t.Fatal(err)
	}

	// Nothing else moved: no commit, no branch, no index entry, no hooksPath.
	after := takeSnapshot(t, dir)
	for _, k := range []string{"HEAD", "branches", "index"} {
		if before[k] != after[k] {
			t.Errorf("%s changed: %q → %q", k, before[k], after[k])
		}
	}
	if strings.Contains(after["config"], "hookspath") {
		t.Errorf("core.hooksPath set:\n%s", after["config"])
	}
	if st := gt.Git(t, dir, "status", "--porcelain"); st != "?? .claude/\n?? .ideate.json\n?? .mcp.json" && st != "?? .claude/\n?? .ideate.json\n?? .mcp.json\n" {
		t.Errorf("status:\n%s", st)
	}
}

// A settings file with its own permissions keeps them; the server's rule
// is added once; a permissions value of the wrong shape changes nothing.
func TestInit_Permissions_MergedNotReplaced(t *testing.T) {
	dir, _ := initRepo(t)
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude/settings.json"), []byte(`{"permissions":{"allow":["Bash(make:*)"],"deny":["Read(.env)"]},"model":"x"}`), 0o644)
	if r := cli(t, dir, "", "init"); r.code != 0 {
		t.Fatal(r.err)
	}
	s := readJSON(t, filepath.Join(dir, ".claude/settings.json"))
	want := map[string]any{"allow": []any{"Bash(make:*)", "mcp__ideate"}, "deny": []any{"Read(.env)"}}
	if diff := cmp.Diff(want, s["permissions"]); diff != "" || s["model"] != "x" {
		t.Fatalf("permissions (-want +got): %s; model %v", diff, s["model"])
	}
	if r := cli(t, dir, "", "init"); r.code != 0 || !strings.Contains(r.out, "nothing to change") {
		t.Fatalf("second run: %+v", r)
	}
	bad, _ := initRepo(t)
	os.MkdirAll(filepath.Join(bad, ".claude"), 0o755)
	os.WriteFile(filepath.Join(bad, ".claude/settings.json"), []byte(`{"permissions":{"allow":"all"}}`), 0o644)
	before := takeSnapshot(t, bad)
	if r := cli(t, bad, "", "init"); r.code == 0 || !strings.Contains(r.err, "permissions.allow") {
		t.Fatalf("a bad permissions.allow: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(bad, ".claude/settings.json")); string(b) != `{"permissions":{"allow":"all"}}` {
		t.Fatalf("the bad file was changed: %s", b)
	}
	if _, err := os.Stat(filepath.Join(bad, ".mcp.json")); err == nil || before["config"] != takeSnapshot(t, bad)["config"] {
		t.Fatal("a refused init changed something")
	}
}

// init warns when the plugin is installed as well: every hook would run
// twice.
func TestInit_WarnsWhenThePluginIsInstalled(t *testing.T) {
	dir, _ := initRepo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(home, ".claude", "plugins"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "plugins", "installed_plugins.json"), []byte(`{"plugins":{"git-ideate@git-ideate-marketplace":[{}]}}`), 0o644)
	r := cli(t, dir, "", "init")
	if r.code != 0 || !strings.Contains(r.err, "plugin is also installed") {
		t.Fatalf("%+v", r)
	}
}

func TestInit_SecondRunChangesNothing(t *testing.T) {
	dir, _ := initRepo(t)
	if r := cli(t, dir, "", "init"); r.code != 0 {
		t.Fatal(r.err)
	}
	first := takeSnapshot(t, dir)
	r := cli(t, dir, "", "init")
	if r.code != 0 {
		t.Fatal(r.err)
	}
	if want := "nothing to change: " + dir + " is already set up for git ideate\n"; r.out != want {
		t.Fatalf("second run printed %q, want %q", r.out, want)
	}
	if diff := cmp.Diff(first, takeSnapshot(t, dir)); diff != "" {
		t.Fatalf("second run changed something (-first +second):\n%s", diff)
	}
	r = cli(t, dir, "", "init", "--json")
	var sum struct {
		Changed bool  `json:"changed"`
		Changes []any `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.out), &sum); err != nil || sum.Changed || len(sum.Changes) != 0 {
		t.Fatalf("--json on a set-up repository: %v %s", err, r.out)
	}
}

func TestInit_DryRunAndJSON(t *testing.T) {
	dir, _ := initRepo(t)
	before := takeSnapshot(t, dir)
	r := cli(t, dir, "", "init", "--dry-run")
	if r.code != 0 {
		t.Fatal(r.err)
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 5 {
		t.Fatalf("dry run printed %d lines:\n%s", len(lines), r.out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "would ") {
			t.Errorf("dry-run line %q", l)
		}
	}
	if diff := cmp.Diff(before, takeSnapshot(t, dir)); diff != "" {
		t.Fatalf("--dry-run changed something:\n%s", diff)
	}

	r = cli(t, dir, "", "init", "--json")
	var sum initSummary
	if err := json.Unmarshal([]byte(r.out), &sum); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if !sum.Changed || sum.DryRun || sum.WorkTree != dir || len(sum.Changes) != 5 {
		t.Fatalf("summary %+v", sum)
	}
	if c := sum.Changes[2]; c.Action != "add" || c.Target != "remote.origin.fetch" || c.Detail != "+refs/ideate/*:refs/ideate-remotes/origin/ideate/*" {
		t.Fatalf("change %+v", c)
	}
}

// Other hooks, other keys and other MCP servers survive, in their order;
// ours come after them.
func TestInit_MergesIntoExistingSettings(t *testing.T) {
	dir, _ := initRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{
    "permissions": {"allow": ["Bash(go test *)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo <hello> & bye"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "./check.sh"}]}]
    },
    "model": "opus"
}`
	if err := os.WriteFile(filepath.Join(dir, ".claude/settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{"other":{"command":"other-server"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, dir, "", "init")
	if r.code != 0 {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.out, "updated .claude/settings.json: added hooks SessionStart, SubagentStart,") ||
		!strings.Contains(r.out, "updated .mcp.json: added mcpServers.ideate") {
		t.Fatalf("output:\n%s", r.out)
	}
	path := filepath.Join(dir, ".claude/settings.json")
	b, _ := os.ReadFile(path)
	text := string(b)
	// Key order kept, ours appended; 2-space indent; no HTML escaping.
	iPerm, iHooks, iModel := strings.Index(text, `"permissions"`), strings.Index(text, `"hooks"`), strings.Index(text, `"model"`)
	if !(iPerm >= 0 && iPerm < iHooks && iHooks < iModel) {
		t.Fatalf("key order lost:\n%s", text)
	}
	if iStart, iStop, iSub := strings.Index(text, `"SessionStart"`), strings.Index(text, `"Stop"`), strings.Index(text, `"SubagentStart"`); !(iStart < iStop && iStop < iSub) {
		t.Fatalf("event order lost:\n%s", text)
	}
	if !strings.Contains(text, "\n  \"permissions\": {\n    \"allow\": [") || !strings.Contains(text, `echo <hello> & bye`) {
		t.Fatalf("indent or escaping:\n%s", text)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode not kept: %v %v", fi.Mode(), err)
	}
	cmds := hookCommands(t, readJSON(t, path))
	if diff := cmp.Diff([]string{"echo <hello> & bye", "git-ideate hook"}, cmds["SessionStart"]); diff != "" {
		t.Fatalf("SessionStart: %s", diff)
	}
	if diff := cmp.Diff([]string{"./check.sh", "git-ideate hook"}, cmds["Stop"]); diff != "" {
		t.Fatalf("Stop: %s", diff)
	}
	v := readJSON(t, path)
	if v["model"] != "opus" || v["permissions"] == nil {
		t.Fatalf("other keys lost: %v", v)
	}
	servers := readJSON(t, filepath.Join(dir, ".mcp.json"))["mcpServers"].(map[string]any)
	if servers["other"] == nil || servers["ideate"] == nil {
		t.Fatalf("servers %v", servers)
	}

	// A hook of ours already there (even edited) is not added again, one of
	// an older command runs ours in its place (the user's timeout kept),
	// and a differing ideate server is left alone with a note.
	dir2, _ := initRepo(t)
	os.MkdirAll(filepath.Join(dir2, ".claude"), 0o755)
	os.WriteFile(filepath.Join(dir2, ".claude/settings.json"), []byte(`{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"git-ideate  hook","timeout":9}]}],`+
		`"Stop":[{"hooks":[{"type":"command","command":"git  ideate hook","timeout":7}]}]}}`), 0o644)
	os.WriteFile(filepath.Join(dir2, ".mcp.json"), []byte(`{"mcpServers":{"ideate":{"command":"/opt/git-ideate","args":["mcp"]}}}`), 0o644)
	r = cli(t, dir2, "", "init")
	if r.code != 0 {
		t.Fatal(r.err)
	}
	if strings.Contains(r.out, "SessionEnd") || !strings.Contains(r.out, "; hooks Stop now run git-ideate hook") || strings.Contains(r.out, ".mcp.json") ||
		!strings.Contains(r.err, "mcpServers.ideate differently; left as is") {
		t.Fatalf("out:\n%s\nerr:\n%s", r.out, r.err)
	}
	got := hookCommands(t, readJSON(t, filepath.Join(dir2, ".claude/settings.json")))
	if diff := cmp.Diff(map[string][]string{"SessionEnd": {"git-ideate  hook"}, "Stop": {"git-ideate hook"}}, map[string][]string{"SessionEnd": got["SessionEnd"], "Stop": got["Stop"]}); diff != "" {
		t.Fatalf("SessionEnd and Stop: %s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(dir2, ".claude/settings.json")); !strings.Contains(string(b), `"timeout": 7`) {
		t.Fatalf("the replaced entry's timeout:\n%s", b)
	}
}

// A settings file that is not JSON (or not the shape hooks need) is a
// typed error naming the file, and nothing at all is changed.
func TestInit_BadJSONChangesNothing(t *testing.T) {
	for name, content := range map[string]string{
		"syntax":      "{\n  \"hooks\": {\n    \"SessionStart\": [,]\n  }\n}\n",
		"top array":   `[1, 2]`,
		"hooks array": `{"hooks": []}`,
		"event value": `{"hooks": {"PostToolUse": {"matcher": "Bash"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir, _ := initRepo(t)
			os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
			path := filepath.Join(dir, ".claude/settings.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			before := takeSnapshot(t, dir)
			r := cli(t, dir, "", "init")
			if r.code != 1 || !strings.Contains(r.err, "INIT: "+path) || !strings.Contains(r.err, "nothing was changed") {
				t.Fatalf("exit %d, stderr %q", r.code, r.err)
			}
			if name == "syntax" && !strings.Contains(r.err, "line 3, column 22") {
				t.Errorf("no position: %s", r.err)
			}
			if diff := cmp.Diff(before, takeSnapshot(t, dir)); diff != "" {
				t.Fatalf("a failed init changed something:\n%s", diff)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, ".claude")); len(entries) != 1 {
				t.Fatalf("left files behind: %v", entries)
			}
		})
	}
	// The same for .mcp.json.
	dir, _ := initRepo(t)
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers": "x"}`), 0o644)
	before := takeSnapshot(t, dir)
	if r := cli(t, dir, "", "init"); r.code != 1 || !strings.Contains(r.err, "INIT: ") || !strings.Contains(r.err, ".mcp.json") {
		t.Fatalf("exit %d, stderr %q", r.code, r.err)
	}
	if diff := cmp.Diff(before, takeSnapshot(t, dir)); diff != "" {
		t.Fatalf("a failed init changed something:\n%s", diff)
	}
}

// Each refspec is added once: one already there (and the remote's own) is
// kept, a second run adds nothing; --remote limits init to that remote.
func TestInit_RefspecsOnce(t *testing.T) {
	dir, _ := initRepo(t)
	other := filepath.Join(t.TempDir(), "other.git")
	gt.Git(t, dir, "init", "-q", "--bare", other)
	gt.Git(t, dir, "remote", "add", "backup", other)
	gt.Git(t, dir, "config", "--add", "remote.origin.fetch", "+refs/ideate/*:refs/ideate-remotes/origin/ideate/*")

	r := cli(t, dir, "", "init", "--remote", "origin")
	if r.code != 0 {
		t.Fatal(r.err)
	}
	if strings.Count(r.out, "remote.") != 1 || !strings.Contains(r.out, "added remote.origin.fetch: +refs/notes/ideate*:") {
		t.Fatalf("output:\n%s", r.out)
	}
	want := []string{"+refs/heads/*:refs/remotes/origin/*", "+refs/ideate/*:refs/ideate-remotes/origin/ideate/*",
		"+refs/notes/ideate*:refs/ideate-remotes/origin/notes/ideate*"}
	if diff := cmp.Diff(want, fetchSpecs(t, dir)); diff != "" {
		t.Fatalf("origin fetch (-want +got):\n%s", diff)
	}
	if got := gt.Git(t, dir, "config", "--get-all", "remote.backup.fetch"); got != "+refs/heads/*:refs/remotes/backup/*" {
		t.Fatalf("--remote origin touched backup: %s", got)
	}
	// Without --remote every remote gets them, once.
	r = cli(t, dir, "", "init")
	if r.code != 0 || strings.Contains(r.out, "remote.origin") || strings.Count(r.out, "added remote.backup.fetch") != 2 {
		t.Fatalf("output:\n%s%s", r.out, r.err)
	}
	cli(t, dir, "", "init")
	if diff := cmp.Diff(want, fetchSpecs(t, dir)); diff != "" {
		t.Fatalf("origin fetch after three runs (-want +got):\n%s", diff)
	}
	if r := cli(t, dir, "", "init", "--remote", "nope"); r.code != 1 || !strings.Contains(r.err, `NO_REMOTE: no remote named "nope"`) {
		t.Fatalf("unknown remote: %d %s", r.code, r.err)
	}
}

// With init's refspecs a plain `git fetch` brings the remote's
// refs/ideate/* (and notes) into refs/ideate-remotes/origin/…, and a
// remote without notes does not make the fetch fail.
func TestInit_FetchFillsTrackingNamespace(t *testing.T) {
	dir, remote := initRepo(t)
	// Another clone writes a record and a note and pushes them.
	src := gt.NewRepo(t)
	if r := cli(t, src, "", "record", "append", "--kind", "finding", "--claim", "shared"); r.code != 0 {
		t.Fatal(r.err)
	}
	gt.Git(t, src, "push", "-q", remote, "refs/ideate/*:refs/ideate/*")

	if r := cli(t, dir, "", "init"); r.code != 0 {
		t.Fatal(r.err)
	}
	gt.Git(t, dir, "fetch", "-q", "origin") // no notes on the remote yet: must not fail
	want := gt.Git(t, src, "rev-parse", "refs/ideate/record")
	if got := gt.Git(t, dir, "rev-parse", "refs/ideate-remotes/origin/ideate/record"); got != want {
		t.Fatalf("tracking ref %s, want %s", got, want)
	}
	if out, err := gt.GitErr(dir, "rev-parse", "--verify", "-q", "refs/ideate/record"); err == nil {
		t.Fatalf("fetch wrote refs/ideate/record itself: %s", out)
	}

	gt.Git(t, src, "notes", "--ref=ideate", "add", "-m", "a note", "HEAD")
	gt.Git(t, src, "push", "-q", remote, "refs/notes/ideate:refs/notes/ideate")
	gt.Git(t, dir, "fetch", "-q", "origin")
	if got, want := gt.Git(t, dir, "rev-parse", "refs/ideate-remotes/origin/notes/ideate"), gt.Git(t, src, "rev-parse", "refs/notes/ideate"); got != want {
		t.Fatalf("notes tracking ref %s, want %s", got, want)
	}
}

// From a subdirectory (and through -C) init works on the top level.
func TestInit_FromSubdirectory(t *testing.T) {
	dir, _ := initRepo(t)
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, sub, "", "init"); r.code != 0 {
		t.Fatal(r.err)
	}
	for _, f := range []string{".claude/settings.json", ".mcp.json", ".ideate.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if _, err := os.Stat(filepath.Join(sub, f)); err == nil {
			t.Errorf("%s written in the subdirectory", f)
		}
	}
	if r := bin(t, t.TempDir(), "", "-C", sub, "init"); r.code != 0 || !strings.HasPrefix(r.out, "nothing to change: ") {
		t.Fatalf("-C run: %d %q %q", r.code, r.out, r.err)
	}
}

// TestInit_OlderSetUpNowRunsTheOneBinary: a repository an older init set
// up (hooks through `git ideate hook`, the server through the second
// binary that no longer exists, `git-ideate-full mcp`) comes out of init
// running git-ideate directly, each entry
// changed in place and said so, and a second run changes nothing.
func TestInit_OlderSetUpNowRunsTheOneBinary(t *testing.T) {
	dir, _ := initRepo(t)
	old, _, _, err := hooks.MergeSettings(nil, "git ideate hook", nil)
	if err != nil {
		t.Fatal(err)
	}
	old, _, err = hooks.MergePermissions(old, []string{hooks.MCPPermission})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude/settings.json"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{"ideate":{"command":"git-ideate-full","args":["mcp"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, dir, "", "init")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	for _, want := range []string{
		"updated .claude/settings.json: hooks SessionStart, SubagentStart, SessionEnd, PreCompact, SubagentStop, PreToolUse, PostToolUse, PostToolUseFailure, PermissionDenied, UserPromptSubmit, Stop, TaskCompleted now run git-ideate hook\n",
		"updated .mcp.json: mcpServers.ideate now runs git-ideate mcp\n",
	} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("output lacks %q:\n%s", want, r.out)
		}
	}
	for ev, cmds := range hookCommands(t, readJSON(t, filepath.Join(dir, ".claude/settings.json"))) {
		for _, c := range cmds {
			if !strings.HasPrefix(c, "git-ideate hook") {
				t.Fatalf("%s still runs %q", ev, c)
			}
		}
	}
	if srv := readJSON(t, filepath.Join(dir, ".mcp.json"))["mcpServers"].(map[string]any)["ideate"].(map[string]any); srv["command"] != "git-ideate" {
		t.Fatalf(".mcp.json server: %v", srv)
	}
	first := takeSnapshot(t, dir)
	if r := cli(t, dir, "", "init"); r.code != 0 || !strings.HasPrefix(r.out, "nothing to change") {
		t.Fatalf("second run: %+v", r)
	}
	if diff := cmp.Diff(first, takeSnapshot(t, dir)); diff != "" {
		t.Fatalf("second run changed something:\n%s", diff)
	}
}
