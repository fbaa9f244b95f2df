package plugintest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/PLUGIN.md names every skill, every agent and every SubagentStop
// matcher the package holds, and no document of the repository sends the
// reader to a path outside it.
func TestPluginDoc_ListsWhatExists(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "PLUGIN.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	skills, _ := os.ReadDir(filepath.Join(root, "skills"))
	for _, s := range skills {
		if s.IsDir() && !strings.Contains(doc, "skills/"+s.Name()) {
			t.Errorf("docs/PLUGIN.md does not list skills/%s", s.Name())
		}
	}
	agents, _ := filepath.Glob(filepath.Join(root, "agents", "*.md"))
	if len(skills) == 0 || len(agents) == 0 {
		t.Fatal("no skills or agents found")
	}
	for _, a := range agents {
		name := "git-ideate:" + strings.TrimSuffix(filepath.Base(a), ".md")
		if !strings.Contains(doc, name) {
			t.Errorf("docs/PLUGIN.md does not name the agent %s", name)
		}
	}
	hj, err := os.ReadFile(filepath.Join(root, "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`"matcher": "(\^git-ideate:[a-z-]+\$)"`).FindAllStringSubmatch(string(hj), -1) {
		if !strings.Contains(doc, "`"+m[1]+"`") {
			t.Errorf("docs/PLUGIN.md does not name the SubagentStop matcher %s", m[1])
		}
	}
}

func TestDocs_NoPathOutsideTheRepository(t *testing.T) {
	root := repoRoot(t)
	var docs []string
	for _, pat := range []string{"*.md", "docs/*.md", "docs/*/*.md", "skills/*/*.md", "agents/*.md", "docs/man/*"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		docs = append(docs, m...)
	}
	if len(docs) < 5 {
		t.Fatalf("found only %d documents", len(docs))
	}
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "../shared") || strings.Contains(string(b), "/work/shared") {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s refers to a path outside the repository (../shared)", rel)
		}
	}
}
