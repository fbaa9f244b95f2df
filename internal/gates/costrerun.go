package gates

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strings"

	"github.com/ideate/git-ideate/internal/shell"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// CostRun is an earlier run of an expensive command in a task's
// worktree, as the hooks remember it: the command's key (CostKey), the
// fingerprint of the worktree it ran on, and how it ended. The hooks keep
// a run only when the tree was the same before and after it, so a later
// call whose key and fingerprint are equal would run the same command on
// the same tree.
type CostRun struct {
	Key         string `json:"key"`         // CostKeyDigest of the run's CostKey: no command text
	Command     string `json:"command"`     // the line as the agent wrote it, secrets redacted
	Fingerprint string `json:"fingerprint"` // the worktree's state the run saw
	Head        string `json:"head,omitempty"`
	At          string `json:"at"`     // when it ended, RFC 3339
	Result      string `json:"result"` // "exit 0", "Exit code 1", …
	ToolUseID   string `json:"tool_use_id,omitempty"`
}

// CostKey is the key of the expensive commands in line (the test, build
// and vet runs the cost gate knows, and what standards.md marks costly,
// less what it allows): each one's directory relative to the task's
// worktree and its words (redirections and the override assignment taken
// off, wrappers and other assignments kept), one per line. "" when the
// line runs nothing expensive, or runs it where the directory is unknown
// (the same-tree rule then says nothing).
func CostKey(f *CostFacts, line string) string {
	if f == nil {
		return ""
	}
	c := costCheck{f: f, collect: true}
	c.cwd, c.known = relTo(f.Top, f.Cwd)
	c.line(line, c.cwd, c.known)
	if c.keyUnsure || len(c.keys) == 0 {
		return ""
	}
	return strings.Join(c.keys, "\n")
}

// CostKeyDigest is what a remembered run keeps of its CostKey: a digest,
// so the clone's state holds no command text beyond the redacted Command.
func CostKeyDigest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// note records a simple command of the line for the key when it is
// expensive.
func (c *costCheck) note(raw, words []string, override, dir string, known bool) {
	if !c.expensive(words) {
		return
	}
	if !known {
		c.keyUnsure = true
		return
	}
	if override == "" {
		c.plainRun = true
	} else {
		c.override = override
	}
	var kw []string
	for _, w := range raw {
		if !strings.HasPrefix(w, OverrideVar+"=") {
			kw = append(kw, w)
		}
	}
	c.keys = append(c.keys, dir+": "+strings.Join(kw, " "))
}

// rerun is the same-unchanged-tree rule, asked when nothing else failed.
func (c *costCheck) rerun() {
	e := c.f.Earlier
	if e == nil || c.keyUnsure || len(c.keys) == 0 || c.f.Fingerprint == "" || e.Fingerprint != c.f.Fingerprint ||
		e.Key != CostKeyDigest(strings.Join(c.keys, "\n")) {
		return
	}
	var b strings.Builder
	b.WriteString("`" + textfmt.Fit(textfmt.OneLine(e.Command), 160) + "` already ran on this unchanged tree")
	if e.At != "" {
		b.WriteString(" at " + e.At)
	}
	var facts []string
	if len(e.Head) >= 12 {
		facts = append(facts, "HEAD "+e.Head[:12])
	}
	if e.Result != "" {
		facts = append(facts, "result: "+textfmt.Fit(textfmt.OneLine(e.Result), 120))
	}
	if e.ToolUseID != "" {
		facts = append(facts, "tool call "+e.ToolUseID)
	}
	if len(facts) > 0 {
		b.WriteString(" (" + strings.Join(facts, "; ") + ")")
	}
	b.WriteString(": HEAD, the index and the files of the task's scope are the same since, so it would say the same again. " +
		"Read that run's output instead, or change the code first and run it then; to run it again on purpose, prefix " +
		OverrideVar + `="why"`)
	r := Reason{Class: "rerun", Detail: b.String()}
	if !c.plainRun {
		c.overrides = append(c.overrides, Reason{Class: "override", Detail: "overridden (" + OverrideVar + "): " + c.override + "; the gate would have said: " + r.Detail})
		return
	}
	c.hit = &r
}

// expensive reports whether an unwrapped simple command is one the
// same-tree rule looks at: a test, build or vet run of the runners the
// gate knows, make on an aggregate target, an image build, or what
// standards.md marks costly; what it allows never is.
func (c *costCheck) expensive(words []string) bool {
	if len(words) == 0 {
		return false
	}
	for _, a := range c.f.Rules.Allow {
		if hasPrefixWords(words, a) {
			return false
		}
	}
	for _, a := range c.f.Rules.Costly {
		if hasPrefixWords(words, a) {
			return true
		}
	}
	prog := path.Base(words[0])
	switch prog {
	case "go":
		for i := 1; i < len(words); i++ {
			if words[i] == "-C" {
				i++
				continue
			}
			if strings.HasPrefix(words[i], "-") {
				continue
			}
			s := words[i]
			return s == "test" || s == "build" || s == "vet" || s == "install"
		}
	case "cargo":
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "+") || strings.HasPrefix(w, "-") {
				continue
			}
			return slices.Contains(cargoSubs, w)
		}
	case "pytest", "py.test", "jest", "vitest", "mocha":
		return true
	case "npm", "yarn", "pnpm", "bun":
		args := words[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			args = args[1:]
		}
		if len(args) > 1 && (args[0] == "run" || args[0] == "run-script") {
			args = args[1:]
		}
		if len(args) > 0 {
			s := args[0]
			return s == "test" || s == "t" || s == "tst" || strings.HasPrefix(s, "test:")
		}
	case "make", "gmake":
		var targets []string
		for j := 1; j < len(words); j++ {
			w := words[j]
			switch {
			case w == "-C" || w == "--directory" || w == "-f" || w == "--file" || w == "--makefile" || w == "-I" || w == "-o" || w == "-W" ||
				w == "-j" && j+1 < len(words) && isNumber(words[j+1]):
				j++
			case strings.HasPrefix(w, "-") || shell.IsAssignment(w):
			default:
				targets = append(targets, w)
			}
		}
		if len(targets) == 0 {
			return true
		}
		for _, t := range targets {
			if slices.Contains(makeAggregates, t) {
				return true
			}
		}
	case "docker", "docker-compose", "podman":
		return c.docker(prog, words) != nil
	}
	return false
}
