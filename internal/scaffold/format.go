package scaffold

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/confine"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// Formatted is one run of a language's formatter over the files the
// scaffold wrote: the tool, the files, and why it failed ("" when it
// did not). A formatter that fails leaves the files as the scaffold wrote
// them, for the gate matrix to judge.
type Formatted struct {
	Tool  string   `json:"tool"`
	Paths []string `json:"paths"`
	Error string   `json:"error,omitempty"`
}

// formatters are, per file extension, the formatters tried in order; the
// first found on PATH formats the files. Go is formatted in-process
// (go/format) as each file is written. Each reads the project's own
// configuration from the worktree (pyproject.toml, .prettierrc, …).
var formatters = map[string][][]string{
	".py":  {{"ruff", "format", "--quiet"}, {"black", "--quiet"}},
	".js":  {{"prettier", "--write", "--log-level", "warn"}},
	".mjs": {{"prettier", "--write", "--log-level", "warn"}},
	".cjs": {{"prettier", "--write", "--log-level", "warn"}},
	".jsx": {{"prettier", "--write", "--log-level", "warn"}},
	".ts":  {{"prettier", "--write", "--log-level", "warn"}},
	".tsx": {{"prettier", "--write", "--log-level", "warn"}},
	".rs":  {{"rustfmt", "--edition", "2021"}},
}

// formatTimeout bounds one formatter run.
const formatTimeout = time.Minute

// formatWritten runs, in dir, the formatter on PATH for each language among
// paths (slash-separated, relative to dir), one run per tool. lookPath
// finds a tool (exec.LookPath when nil).
func formatWritten(ctx context.Context, dir string, paths []string, lookPath func(string) (string, error)) []Formatted {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	byTool := map[string][]string{}
	argvOf := map[string][]string{}
	for _, p := range paths {
		for _, f := range formatters[path.Ext(p)] {
			exe, err := lookPath(f[0])
			if err != nil {
				continue
			}
			byTool[f[0]] = append(byTool[f[0]], p)
			argvOf[f[0]] = append([]string{exe}, f[1:]...)
			break
		}
	}
	tools := make([]string, 0, len(byTool))
	for t := range byTool {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	var out []Formatted
	for _, tool := range tools {
		files := byTool[tool]
		sort.Strings(files)
		f := Formatted{Tool: tool, Paths: files}
		cctx, cancel := context.WithTimeout(ctx, formatTimeout)
		argv := append([]string(nil), argvOf[tool]...)
		for _, p := range files {
			argv = append(argv, "./"+p) // never read as an option
		}
		cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		osproc.Group(cmd)
		cmd.Cancel = func() error { return osproc.KillGroup(cmd.Process) }
		cmd.WaitDelay = 2 * time.Second
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &errb, &errb
		if err := runConfined(cmd, dir); err != nil {
			msg := strings.TrimSpace(errb.String())
			if msg == "" {
				msg = err.Error()
			}
			f.Error = textfmt.Fit(textfmt.OneLine(msg), 300)
		}
		cancel()
		out = append(out, f)
	}
	return out
}

// runConfined runs a formatter where it can write only the worktree (and
// its node_modules) and a scratch directory for its caches: the formatter
// runs the project's own configuration (a .prettierrc.cjs, a plugin
// pyproject.toml names), which a worker may have written, and whoever
// runs the scaffold (the main session, the MCP server) is not confined
// itself.
func runConfined(cmd *exec.Cmd, dir string) error {
	scratch, err := os.MkdirTemp("", "ideate-format-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	cmd.Env = append(os.Environ(), "TMPDIR="+scratch, "XDG_CACHE_HOME="+scratch)
	if err := confine.Start(cmd, []string{dir, scratch}); err != nil {
		return err
	}
	return cmd.Wait()
}
