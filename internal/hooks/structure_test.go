package hooks_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
)

// After a commit through the Bash tool, a structural finding the commit
// introduced comes back as context for the agent, never as a block; a
// clean commit says nothing.
func TestPostToolUse_StructureWarning(t *testing.T) {
	dir := gt.NewRepo(t)
	commitFiles(t, dir, "base", map[string]string{"p/p.go": "package p\n\n// Use is used.\nfunc Use() int { return 1 }\n", "main.go": "package main\n\nimport \"m/p\"\n\nfunc main() { _ = p.Use() }\n"})
	run := func(head string) string {
		t.Helper()
		open := opener(t)
		var out bytes.Buffer
		d := &hooks.Dispatcher{Dir: dir, Getenv: func(string) string { return "" }, Warn: func(string) {},
			Open: func(dir, session string) (*hooks.Stores, error) {
				st, err := open(dir, session)
				if err != nil {
					return nil, err
				}
				g, err := gitstore.Open(dir)
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { g.Close() })
				st.Git = g
				return st, nil
			}}
		d.Run(context.Background(), bytes.NewReader(commitPayload(dir, "git commit -am x", head[:8])), &out, "")
		return out.String()
	}
	clean := commitFiles(t, dir, "clean", map[string]string{"p/q.go": "package p\n\n// Two is used.\nfunc Two() int { return Use() + 1 }\n", "main.go": "package main\n\nimport \"m/p\"\n\nfunc main() { _ = p.Use() + p.Two() }\n"})
	if out := run(clean); out != "" {
		t.Fatalf("clean commit: %q", out)
	}
	bad := commitFiles(t, dir, "orphan", map[string]string{"p/r.go": "package p\n\nfunc leftover(x int) int { return x * 3 }\n"})
	out := run(bad)
	if !strings.Contains(out, `"hookEventName":"PostToolUse"`) || !strings.Contains(out, "structure warning") ||
		!strings.Contains(out, "orphan p.leftover") || strings.Contains(out, `"decision"`) {
		t.Fatalf("orphan commit: %s", out)
	}
}
