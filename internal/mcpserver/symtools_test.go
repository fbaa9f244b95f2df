package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
)

// The symbol tools answer by qualified identity, the same library calls
// as the CLI: two packages' Format are two symbols.
func TestServer_SymbolTools(t *testing.T) {
	dir := gt.NewRepo(t)
	for p, s := range map[string]string{
		"orphan/orphan.go": "package orphan\n\nfunc Format(s string) string { return s }\n",
		"util/util.go":     "package util\n\nfunc Format(s string) string { return s + \"!\" }\n\ntype T struct{}\n\nfunc (T) Format() {}\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
	h := start(t, dir, func() (*mcpserver.Backend, error) {
		g, err := gitstore.Open(dir)
		if err != nil {
			return nil, err
		}
		return &mcpserver.Backend{Git: g, Session: "mcp-test"}, nil
	})
	all := h.ok("symbols_find", map[string]any{"name": "Format"})["symbols"].([]any)
	if len(all) != 3 {
		t.Fatalf("Format: %v", all)
	}
	one := h.ok("symbols_find", map[string]any{"name": "util.Format"})["symbols"].([]any)
	if len(one) != 1 || one[0].(map[string]any)["file"] != "util/util.go" || one[0].(map[string]any)["receiver"] != nil {
		t.Fatalf("util.Format: %v", one)
	}
	defs := h.ok("symbols_defs", map[string]any{"file": "util/util.go"})["symbols"].([]any)
	if len(defs) != 3 {
		t.Fatalf("defs: %v", defs)
	}
	if out, isErr := h.call("symbols_defs", map[string]any{"file": "../x.go"}); !isErr {
		t.Fatalf("outside the tree: %v", out)
	}
}
