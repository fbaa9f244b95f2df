package scaffold

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/symbols"
)

// Lookup is a symbol look-up's answer: the definitions, and whether the
// fallback reader found any of them (a build without tree-sitter).
type Lookup struct {
	Query   string           `json:"query"`
	Symbols []symbols.Symbol `json:"symbols"`
	Weaker  bool             `json:"weaker"`
}

// Find looks a name up in the working tree at top (tracked and untracked
// files, ignored ones left out): a bare name or a qualified one. The
// CLI's `symbols find` and MCP's symbols_find.
func Find(ctx context.Context, g *gitstore.Store, top, name string) (*Lookup, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, apperr.New(apperr.Schema, "a symbol look-up needs a name")
	}
	x, err := IndexWorkTree(ctx, g, top)
	if err != nil {
		return nil, err
	}
	out := &Lookup{Query: name, Symbols: x.Find(name)}
	if out.Symbols == nil {
		out.Symbols = []symbols.Symbol{}
	}
	for _, s := range out.Symbols {
		out.Weaker = out.Weaker || s.Weaker
	}
	return out, nil
}

// Defs reads one file's definitions; file is relative to top (or
// absolute inside it). The CLI's `symbols defs` and MCP's symbols_defs.
func Defs(ctx context.Context, top, file string) (*Lookup, error) {
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(top, abs)
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, apperr.New(apperr.Schema, "%s is outside the working tree %s", file, top)
	}
	rel = filepath.ToSlash(rel)
	if symbols.LangOf(rel) == "" {
		return nil, apperr.New(symbols.Unsupported, "%s is not a file the symbol index reads (Go, Python, JavaScript, TypeScript, Rust)", rel)
	}
	b, err := osproc.ReadRegular(abs, MaxSource)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotFound, err, "cannot read %s", rel)
	}
	f, err := symbols.Parse(ctx, rel, b)
	if err != nil {
		return nil, err
	}
	out := &Lookup{Query: rel, Symbols: f.Defs, Weaker: f.Weaker}
	if out.Symbols == nil {
		out.Symbols = []symbols.Symbol{}
	}
	return out, nil
}
