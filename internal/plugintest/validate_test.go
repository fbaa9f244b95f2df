package plugintest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaudePluginValidate runs the host's own validator, when Claude Code
// is installed, on the plugin manifest (which also checks hooks/hooks.json,
// the skills and the agents) and on the marketplace manifest. --strict
// turns its warnings (an unknown field, missing metadata) into failures.
func TestClaudePluginValidate(t *testing.T) {
	claude, err := exec.LookPath("claude")
	if err != nil {
		t.Skip("claude is not on PATH (npm install @anthropic-ai/claude-code to run this test)")
	}
	root := repoRoot(t)
	for _, target := range []string{filepath.Join(root, ".claude-plugin", "plugin.json"), root} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, claude, "plugin", "validate", "--strict", target)
		cmd.Dir = root
		// A private home: validating must not read or write the user's
		// Claude Code configuration.
		home := t.TempDir()
		cmd.Env = mergeEnv(cmd.Environ(), []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude")})
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "Validation passed") {
			t.Errorf("claude plugin validate --strict %s: %v\n%s", target, err, out)
			continue
		}
		t.Logf("claude plugin validate --strict %s:\n%s", target, out)
	}
}
