// Package plugintest holds the tests of the Claude Code plugin packaging at
// the repository root: the manifests, hooks/hooks.json, .mcp.json, the
// skills and agents, and the bin/git-ideate launcher. It has no code of its
// own.
package plugintest
