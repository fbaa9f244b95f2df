package mcpserver_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/mcpserver"
)

var updateDocs = flag.Bool("update", false, "rewrite the tool lists in README.md and docs/PLUGIN.md")

const (
	toolsBegin = "<!-- mcp-tools: generated from the server's tools/list by `go test ./internal/mcpserver -run TestDocs_ListEveryTool -update` -->"
	toolsEnd   = "<!-- mcp-tools end -->"
)

// toolTable is the Markdown table of every tool the server lists: its
// name, whether it writes, and its description's first sentence.
func toolTable() string {
	var b strings.Builder
	b.WriteString("| tool | | what it does |\n| --- | --- | --- |\n")
	for _, tl := range mcpserver.New("docs", nil).List() {
		kind := "writes"
		if a, ok := tl["annotations"].(map[string]any); ok && a["readOnlyHint"] == true {
			kind = "reads"
		} else if ok && a["idempotentHint"] == true {
			kind = "reads; returns lapsed claims to open"
		}
		desc := tl["description"].(string)
		if i := strings.Index(desc, ". "); i > 0 {
			desc = desc[:i+1]
		}
		b.WriteString("| `" + tl["name"].(string) + "` | " + kind + " | " + strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(desc) + " |\n")
	}
	return b.String()
}

// README.md and docs/PLUGIN.md list every tool the server lists, and no
// other, in a block generated from the server's own list.
func TestDocs_ListEveryTool(t *testing.T) {
	want := toolsBegin + "\n\n" + toolTable() + "\n" + toolsEnd
	for _, p := range []string{"../../README.md", "../../docs/PLUGIN.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		i, j := strings.Index(doc, toolsBegin), strings.Index(doc, toolsEnd)
		if i < 0 || j < i {
			t.Fatalf("%s has no generated tool list (%s … %s)", p, toolsBegin, toolsEnd)
		}
		got := doc[i : j+len(toolsEnd)]
		if got == want {
			continue
		}
		if !*updateDocs {
			t.Errorf("%s: the tool list differs from the server's; run go test ./internal/mcpserver -run TestDocs_ListEveryTool -update", p)
			continue
		}
		if err := os.WriteFile(p, []byte(doc[:i]+want+doc[j+len(toolsEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
