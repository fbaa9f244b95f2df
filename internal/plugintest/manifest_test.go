package plugintest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/hooks"
)

// repoRoot is the plugin root: the top of this repository.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("plugin root %s: %v", root, err)
	}
	return root
}

// readJSON decodes path strictly: one JSON value, nothing after it.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("%s: data after the JSON value", path)
	}
}

var kebab = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// The launcher command every hook and the MCP server go through: shell
// form through sh, so a copy that lost its execute bits still runs.
const (
	launcher    = "${CLAUDE_PLUGIN_ROOT}/bin/git-ideate"
	hookCommand = `sh "` + launcher + `" hook`
)

type pluginManifest map[string]json.RawMessage

func TestPluginManifest(t *testing.T) {
	root := repoRoot(t)
	var m pluginManifest
	readJSON(t, filepath.Join(root, ".claude-plugin", "plugin.json"), &m)
	var name, version, license string
	json.Unmarshal(m["name"], &name)
	json.Unmarshal(m["version"], &version)
	json.Unmarshal(m["license"], &license)
	if name != "git-ideate" || !kebab.MatchString(name) {
		t.Errorf("name %q", name)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(version) {
		t.Errorf("version %q", version)
	}
	if license != "MIT" {
		t.Errorf("license %q", license)
	}
	// hooks/hooks.json and .mcp.json are found by convention; declaring
	// them as well loads them twice ("Duplicate hooks file detected").
	for _, k := range []string{"hooks", "mcpServers"} {
		if _, ok := m[k]; ok {
			t.Errorf("plugin.json declares %q; the default file is loaded anyway", k)
		}
	}
	known := map[string]bool{"$schema": true, "name": true, "displayName": true, "version": true, "description": true,
		"author": true, "homepage": true, "repository": true, "license": true, "keywords": true, "metadata": true,
		"defaultEnabled": true}
	for k := range m {
		if !known[k] {
			t.Errorf("plugin.json key %q is not one this test knows the host reads", k)
		}
	}
	// Only the manifests live in .claude-plugin/.
	entries, _ := os.ReadDir(filepath.Join(root, ".claude-plugin"))
	for _, e := range entries {
		if e.Name() != "plugin.json" && e.Name() != "marketplace.json" {
			t.Errorf(".claude-plugin/%s: only the manifests belong there", e.Name())
		}
	}

	var mk struct {
		Name  string `json:"name"`
		Owner struct {
			Name string `json:"name"`
		} `json:"owner"`
		Plugins []struct {
			Name    string `json:"name"`
			Source  string `json:"source"`
			Version string `json:"version"`
		} `json:"plugins"`
	}
	readJSON(t, filepath.Join(root, ".claude-plugin", "marketplace.json"), &mk)
	if !kebab.MatchString(mk.Name) || mk.Owner.Name == "" {
		t.Errorf("marketplace name %q, owner %q", mk.Name, mk.Owner.Name)
	}
	if len(mk.Plugins) != 1 {
		t.Fatalf("marketplace lists %d plugins", len(mk.Plugins))
	}
	if p := mk.Plugins[0]; p.Name != name || p.Source != "./" || p.Version != version {
		t.Errorf("marketplace entry %+v, want name %q, source ./, version %q (plugin.json)", p, name, version)
	}
}

// eventsWithMatcher are the events whose matcher the host reads; on the
// others a matcher is ignored. "if" is evaluated only on tool events.
var (
	eventsWithMatcher = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true,
		"PermissionRequest": true, "PermissionDenied": true, "SessionStart": true, "SessionEnd": true,
		"PreCompact": true, "PostCompact": true, "Notification": true, "SubagentStart": true, "SubagentStop": true}
	eventsWithIf = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true,
		"PermissionRequest": true, "PermissionDenied": true}
)

func TestHooksJSON(t *testing.T) {
	root := repoRoot(t)
	var f struct {
		Description string `json:"description"`
		Hooks       map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string          `json:"type"`
				Command string          `json:"command"`
				Args    json.RawMessage `json:"args"`
				If      string          `json:"if"`
				Timeout int             `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, filepath.Join(root, "hooks", "hooks.json"), &f)
	if f.Description == "" {
		t.Error("hooks.json has no description")
	}
	var events []string
	for ev, groups := range f.Hooks {
		events = append(events, ev)
		for _, g := range groups {
			if g.Matcher != nil && !eventsWithMatcher[ev] {
				t.Errorf("%s: the host ignores a matcher on this event", ev)
			}
			for _, h := range g.Hooks {
				if h.Type != "command" || h.Command != hookCommand && h.Command != hookCommand+" "+hooks.GateFlag || h.Args != nil {
					t.Errorf("%s: handler %+v; want type command, shell form %q", ev, h, hookCommand)
				}
				if h.If != "" && !eventsWithIf[ev] {
					t.Errorf("%s: a handler with \"if\" never runs on this event", ev)
				}
				if h.Timeout <= 0 {
					t.Errorf("%s: no timeout", ev)
				}
			}
		}
	}
	sort.Strings(events)
	var want []string // the hook table is the one list of events
	for _, h := range hooks.Hooks() {
		if len(want) == 0 || want[len(want)-1] != h.Event {
			want = append(want, h.Event)
		}
	}
	sort.Strings(want)
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", events, want)
	}
	// SessionStart has no matcher: compact and fork sessions are primed too.
	if g := f.Hooks["SessionStart"]; len(g) != 1 || g[0].Matcher != nil {
		t.Errorf("SessionStart must have one matcher-less group")
	}
	// The host gives all SessionEnd hooks 1.5 s together.
	if g := f.Hooks["SessionEnd"]; len(g) != 1 || g[0].Hooks[0].Timeout > 2 {
		t.Errorf("SessionEnd timeout above 2 s")
	}
	// Every tool call is captured; the handler itself tells a commit.
	if g := f.Hooks["PostToolUse"]; len(g) != 1 || g[0].Matcher != nil && *g[0].Matcher != "" || g[0].Hooks[0].If != "" {
		t.Errorf("PostToolUse must run on every tool, with no matcher and no if")
	}
}

func TestMCPJSON(t *testing.T) {
	var f struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	readJSON(t, filepath.Join(repoRoot(t), ".mcp.json"), &f)
	s, ok := f.MCPServers["ideate"]
	if len(f.MCPServers) != 1 || !ok {
		t.Fatalf("servers %+v", f.MCPServers)
	}
	if s.Command != "sh" || strings.Join(s.Args, " ") != launcher+" mcp" {
		t.Fatalf("ideate server %+v; want sh %s mcp", s, launcher)
	}
}

// The launcher is committed (not ignored) and POSIX sh; its build output
// is ignored.
func TestLauncherFile(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "bin", "git-ideate"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("#!/bin/sh\n")) {
		t.Fatal("bin/git-ideate does not start with #!/bin/sh")
	}
	if out, err := exec.Command("sh", "-n", filepath.Join(root, "bin", "git-ideate")).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("not a git checkout: cannot check .gitignore")
	}
	check := func(path string) bool {
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", path)
		cmd.Dir = root
		return cmd.Run() == nil
	}
	if check("bin/git-ideate") {
		t.Error("bin/git-ideate is ignored by git; the launcher must be committed")
	}
	if !check(".build/git-ideate") {
		t.Error(".build/ (the launcher's build output) is not ignored")
	}
}

// frontmatter returns the top-level keys of a Markdown file's YAML
// frontmatter (scalar values only; enough for name and description).
func frontmatter(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasPrefix(text, "---\n") {
		t.Fatalf("%s: no frontmatter", path)
	}
	body, _, ok := strings.Cut(text[4:], "\n---\n")
	if !ok {
		t.Fatalf("%s: frontmatter not closed", path)
	}
	keys := map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == ' ' || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: frontmatter line %q", path, line)
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'") || strings.ContainsAny(v, "#") || strings.Contains(v, ": ") {
			// Keep the values plain: no quoting rules, no "key: value" inside
			// a value (YAML would read it as a mapping).
			t.Errorf("%s: %s value needs YAML quoting; keep it plain", path, k)
		}
		keys[k] = v
	}
	return keys
}

func TestSkillsAndAgents(t *testing.T) {
	root := repoRoot(t)
	tools := mcpToolNames(t, root)
	toolRef := regexp.MustCompile("`((?:record|work|steering)_[a-z_]+)`")

	skills, _ := filepath.Glob(filepath.Join(root, "skills", "*", "SKILL.md"))
	agents, _ := filepath.Glob(filepath.Join(root, "agents", "*.md"))
	if len(skills) == 0 || len(agents) == 0 {
		t.Fatalf("skills %v, agents %v", skills, agents)
	}
	for _, p := range append(skills, agents...) {
		fm := frontmatter(t, p)
		if fm["name"] == "" || fm["description"] == "" {
			t.Errorf("%s: frontmatter needs name and description, has %v", p, fm)
		}
		if !kebab.MatchString(fm["name"]) {
			t.Errorf("%s: name %q is not lowercase-with-hyphens", p, fm["name"])
		}
		want := strings.TrimSuffix(filepath.Base(p), ".md")
		if filepath.Base(p) == "SKILL.md" {
			want = filepath.Base(filepath.Dir(p))
		}
		if fm["name"] != want {
			t.Errorf("%s: name %q, want %q (its file name)", p, fm["name"], want)
		}
		b, _ := os.ReadFile(p)
		for _, m := range toolRef.FindAllStringSubmatch(string(b), -1) {
			if !tools[m[1]] {
				t.Errorf("%s names tool %s, which the MCP server does not have", p, m[1])
			}
		}
	}
}

// mcpToolNames reads the tool names from the MCP server's tool table.
func mcpToolNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "internal", "mcpserver", "tools.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`\{name:\s*"([a-z_]+)"`).FindAllStringSubmatch(string(b), -1) {
		names[m[1]] = true
	}
	if !names["record_read"] || !names["work_claim"] {
		t.Fatalf("tool table not understood: %v", names)
	}
	return names
}

func TestLicenseAndIcon(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil || !bytes.HasPrefix(b, []byte("MIT License\n")) || !bytes.Contains(b, []byte("the git ideate authors")) {
		t.Errorf("LICENSE: %v", err)
	}
	svg, err := os.ReadFile(filepath.Join(root, "assets", "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name
		ViewBox string `xml:"viewBox,attr"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil || doc.XMLName.Local != "svg" || doc.ViewBox == "" {
		t.Errorf("icon.svg: %v %+v", err, doc)
	}
}
