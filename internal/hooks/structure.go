package hooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// structureWarning is the non-blocking structural warning after a commit
// made through the Bash tool: the structural check (gates.CheckStructure)
// of what the commit added against its first parent. High findings come
// back as context for the agent, never as a block; a check that cannot
// run says nothing (the gate after GREEN is what decides).
func structureWarning(ctx context.Context, g *gitstore.Store, commit gitstore.Hash) string {
	if g == nil || commit == gitstore.ZeroHash {
		return ""
	}
	c, err := g.ReadCommit(commit)
	if err != nil || len(c.Parents) == 0 {
		return ""
	}
	p, err := g.ReadCommit(c.Parents[0])
	if err != nil {
		return ""
	}
	paths, _, err := g.ChangedPaths(c.Parents[0], commit, 500)
	if err != nil {
		return ""
	}
	res, err := gates.CheckStructure(ctx, gates.StructureFacts{Git: g, Base: p.Tree, Head: c.Tree, Changed: paths, Config: gates.DefaultStructure})
	if err != nil {
		return ""
	}
	var lines []string
	for _, f := range res.Findings {
		if f.Severity != gates.SevHigh {
			continue
		}
		if len(lines) == 5 {
			lines = append(lines, "…")
			break
		}
		lines = append(lines, fmt.Sprintf("- %s %s (%s:%d): %s", f.Class, f.Symbol, f.File, f.Line, f.Detail))
	}
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("git ideate structure warning on commit %.12s (not a block; `git ideate gate structure` judges the task after GREEN):\n%s", commit.String(), strings.Join(lines, "\n"))
}
