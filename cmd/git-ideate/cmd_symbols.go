package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"path/filepath"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/scaffold"
)

// SymbolsCmd groups the symbol look-ups over the working tree.
type SymbolsCmd struct {
	Find SymbolsFindCmd `cmd:"" help:"Where a symbol is defined in the working tree: a bare name (Format) or a qualified one (util.Format, pkg.Type.Method, module.Class.method)."`
	Defs SymbolsDefsCmd `cmd:"" help:"The definitions of one file: kind, qualified name, line and byte range."`
}

// SymbolsFindCmd finds a name's definitions.
type SymbolsFindCmd struct {
	Name string `arg:"" help:"The name, bare or qualified."`
	JSON bool   `name:"json" help:"Print JSON."`
}

// SymbolsDefsCmd lists one file's definitions.
type SymbolsDefsCmd struct {
	File string `arg:"" help:"The file, relative to the current directory."`
	JSON bool   `name:"json" help:"Print JSON."`
}

// symbolsOut is what the symbols commands print with --json.
type symbolsOut struct {
	MessageType string `json:"message_type"`
	*scaffold.Lookup
}

// topOf is the top of the working tree holding env.Dir.
func topOf(env *Env) (*gitstore.Store, string, error) {
	g, err := env.Git()
	if err != nil {
		return nil, "", err
	}
	if wt := g.Repo().WorkTree; wt != "" {
		return g, wt, nil
	}
	return nil, "", apperr.New(apperr.NotARepo, "a bare repository has no working tree to read symbols from")
}

// Run prints the definitions the name names.
func (c *SymbolsFindCmd) Run(ctx context.Context, env *Env) error {
	g, top, err := topOf(env)
	if err != nil {
		return err
	}
	l, err := scaffold.Find(ctx, g, top, c.Name)
	if err != nil {
		return err
	}
	return printSymbols(env, l, c.JSON)
}

// Run prints the file's definitions.
func (c *SymbolsDefsCmd) Run(ctx context.Context, env *Env) error {
	_, top, err := topOf(env)
	if err != nil {
		return err
	}
	file := c.File
	if !filepath.IsAbs(file) {
		file = filepath.Join(env.Dir, file)
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	l, err := scaffold.Defs(ctx, top, file)
	if err != nil {
		return err
	}
	return printSymbols(env, l, c.JSON)
}

func printSymbols(env *Env, l *scaffold.Lookup, asJSON bool) error {
	if asJSON {
		return corecmd.WriteJSON(env.Out, symbolsOut{MessageType: "symbols", Lookup: l}, true)
	}
	for _, s := range l.Symbols {
		fmt.Fprintf(env.Out, "%s %s %s:%d [%d,%d)\n", s.Kind, s.QName(), s.File, s.Line, s.Start, s.End)
	}
	if len(l.Symbols) == 0 {
		fmt.Fprintf(env.Out, "no definition of %s\n", l.Query)
	}
	if l.Weaker {
		fmt.Fprintln(env.Out, "note: this build has no tree-sitter; definitions outside Go come from the weaker fallback reader")
	}
	return nil
}
