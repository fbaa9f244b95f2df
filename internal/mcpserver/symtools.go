package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/paging"
	"github.com/ideate/git-ideate/internal/scaffold"
	"github.com/ideate/git-ideate/internal/symbols"
)

// The symbol look-ups: read-only, the same library calls as the CLI's
// `symbols find` and `symbols defs`.
func symbolTools() []toolDef {
	return []toolDef{
		{name: "symbols_find", run: symbolsFind, readOnly: true,
			desc:   "Where a symbol is defined in the working tree, by qualified identity: a bare name (Format) or a qualified one (util.Format, pkg.Type.Method, module.Class.method). Each definition: lang, package, receiver, name, kind, file, line, byte range, signature. weaker is true when a file outside Go was read without tree-sitter. Ask this instead of grepping.",
			schema: obj([]string{"name"}, arg{"name", str, "The name, bare or qualified."})},
		{name: "symbols_defs", run: symbolsDefs, readOnly: true,
			desc:   "The definitions of one source file (Go, Python, JavaScript, TypeScript, Rust): kind, qualified name, line, byte range and signature of each.",
			schema: obj([]string{"file"}, arg{"file", str, "The file, relative to the top of the working tree."})},
	}
}

// top is the working tree the look-ups read.
func (b *Backend) top() (string, error) {
	if b.Git == nil || b.Git.Repo().WorkTree == "" {
		return "", apperr.New(apperr.Internal, "the symbol tools need a repository with a working tree")
	}
	return b.Git.Repo().WorkTree, nil
}

func symbolsFind(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ Name string }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	top, err := b.top()
	if err != nil {
		return nil, err
	}
	l, err := scaffold.Find(ctx, b.Git, top, a.Name)
	if err != nil {
		return nil, err
	}
	return symbolsPage(l)
}

func symbolsDefs(ctx context.Context, b *Backend, raw json.RawMessage) (any, error) {
	var a struct{ File string }
	if err := decodeSnake(raw, &a); err != nil {
		return nil, err
	}
	top, err := b.top()
	if err != nil {
		return nil, err
	}
	l, err := scaffold.Defs(ctx, top, a.File)
	if err != nil {
		return nil, err
	}
	return symbolsPage(l)
}

// symbolsPage fits a look-up in the page budget.
func symbolsPage(l *scaffold.Lookup) (any, error) {
	kept, cut, err := paging.Trim(l.Symbols, paging.CompactLen)
	if err != nil {
		return nil, err
	}
	if kept == nil {
		kept = []symbols.Symbol{}
	}
	return struct {
		OK        bool             `json:"ok"`
		Query     string           `json:"query"`
		Symbols   []symbols.Symbol `json:"symbols"`
		Weaker    bool             `json:"weaker"`
		Truncated bool             `json:"truncated"`
	}{true, l.Query, kept, l.Weaker, cut}, nil
}
