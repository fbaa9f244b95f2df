package main

import (
	"encoding/json"
	"github.com/ideate/git-ideate/internal/symbols"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// symbolsJSON is what symbols find|defs print with --json.
type symbolsJSON struct {
	MessageType string `json:"message_type"`
	Query       string `json:"query"`
	Symbols     []struct {
		Kind     string `json:"kind"`
		Package  string `json:"package"`
		Receiver string `json:"receiver"`
		Name     string `json:"name"`
		File     string `json:"file"`
		Weaker   bool   `json:"weaker"`
	} `json:"symbols"`
	Weaker bool `json:"weaker"`
}

func symbolsRepo(t *testing.T) string {
	dir := gt.NewRepo(t)
	for p, s := range map[string]string{
		"orphan/orphan.go": "package orphan\n\nfunc Format(s string) string { return s }\n",
		"util/util.go":     "package util\n\nfunc Format(s string) string { return s + \"!\" }\n",
		"py/mod.py":        "def run():\n    return 1\n\n\nclass Runner:\n    def run(self):\n        return 2\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
	return dir
}

// git ideate symbols find|defs: qualified identity through the binary,
// human and JSON output, a bad file a typed error.
func TestSymbols_CLI(t *testing.T) {
	dir := symbolsRepo(t)
	r := bin(t, dir, "", "symbols", "find", "Format")
	if r.code != 0 || !strings.Contains(r.out, "func orphan.Format orphan/orphan.go:3") || !strings.Contains(r.out, "func util.Format util/util.go:3") {
		t.Fatalf("find Format: %+v", r)
	}
	r = bin(t, dir, "", "symbols", "find", "util.Format", "--json")
	var out symbolsJSON
	if err := json.Unmarshal([]byte(r.out), &out); err != nil || r.code != 0 {
		t.Fatalf("find --json: %v %+v", err, r)
	}
	if out.MessageType != "symbols" || len(out.Symbols) != 1 || out.Symbols[0].File != "util/util.go" {
		t.Fatalf("util.Format: %+v", out)
	}
	r = bin(t, filepath.Join(dir, "py"), "", "symbols", "defs", "mod.py", "--json")
	out = symbolsJSON{}
	if err := json.Unmarshal([]byte(r.out), &out); err != nil || r.code != 0 {
		t.Fatalf("defs --json: %v %+v", err, r)
	}
	var got []string
	for _, s := range out.Symbols {
		got = append(got, s.Kind+" "+s.Receiver+"."+s.Name)
	}
	if strings.Join(got, ",") != "func .run,class .Runner,method Runner.run" {
		t.Fatalf("defs: %v", got)
	}
	if r := bin(t, dir, "", "symbols", "defs", "README.md"); r.code == 0 || !strings.Contains(r.err, "UNSUPPORTED_LANGUAGE") {
		t.Fatalf("defs README.md: %+v", r)
	}
}

// Without the tree-sitter helper (none beside the binary, none on PATH,
// or GIT_IDEATE_SYMBOLS=off) the fallback reader is used and every answer
// that rests on it says the check was weaker; with the helper beside the
// binary, as the release archive puts it, nothing is weaker.
func TestSymbols_CLI_HelperOrWeaker(t *testing.T) {
	dir := symbolsRepo(t)
	alone := filepath.Join(t.TempDir(), "git-ideate")
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	run := func(exe, helper string, args ...string) symbolsJSON {
		cmd := exec.Command(exe, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), symbols.HelperEnv+"="+helper, "PATH="+filepath.Dir(git))
		r := runProcess(t, cmd, "")
		var out symbolsJSON
		if err := json.Unmarshal([]byte(r.out), &out); err != nil || r.code != 0 {
			t.Fatalf("%s %v: %v %+v", exe, args, err, r)
		}
		return out
	}
	for _, c := range []struct{ exe, helper string }{{alone, ""}, {binPath, "off"}} {
		weak := run(c.exe, c.helper, "symbols", "defs", "py/mod.py", "--json")
		if !weak.Weaker || len(weak.Symbols) != 3 {
			t.Fatalf("%s without the helper: defs %+v", c.exe, weak)
		}
		for _, s := range weak.Symbols {
			if !s.Weaker {
				t.Fatalf("a fallback definition not marked weaker: %+v", s)
			}
		}
		// Go never needs tree-sitter: never weaker.
		if g := run(c.exe, c.helper, "symbols", "find", "Format", "--json"); g.Weaker || len(g.Symbols) != 2 {
			t.Fatalf("Go find without the helper: %+v", g)
		}
	}
	if helperPath == "" {
		t.Log("go builds without cgo here: no helper to find")
		return
	}
	if full := run(binPath, "", "symbols", "defs", "py/mod.py", "--json"); full.Weaker || len(full.Symbols) != 3 {
		t.Fatalf("with the helper beside the binary: %+v", full)
	}
}
