package hooks

import (
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/shell"
)

// postToolUse captures the call (captureEvent), then records a commit
// made through the Bash tool (record.Store.CommitBoundary) and passes the
// agent a non-blocking structural warning when the commit added an orphan,
// a copy or a second definition of a declared role (structureWarning).
func postToolUse(c *call) (Response, error) {
	p := c.p
	if err := captureEvent(c); err != nil && !apperr.Is(err, apperr.NotARepo) {
		c.d.warn("%s not captured: %s", p.ToolName, errText(err))
	}
	c.logWrites()
	if p.ToolName != "Bash" {
		return Response{}, nil
	}
	c.settleRun(true)
	command := lookup(p.ToolInput, "command")
	// The host names the commit it saw land; without that, HEAD.
	commit := lookup(p.ToolResponse, "gitOperation", "commit", "sha")
	inner, wt, confined := c.unconfined(command)
	if confined {
		command = inner
	}
	dir, ok := GitCommitDir(command)
	if !ok {
		return Response{}, nil
	}
	// `git -C dir commit`, `cd dir && git commit`: the commit, and so its
	// record and note, belong to that directory's repository.
	var st *Stores
	var err error
	switch at := absDir(c.d.RepoDir(p), dir); {
	case confined:
		// The confining entry ran the command in the task's worktree,
		// where alone it may commit, and the host names no commit for
		// it: the commit is that worktree's HEAD, in this repository.
		gitDir, gerr := worktreeGitDir(wt)
		if gerr == nil {
			commit, gerr = headOf(gitDir)
		}
		if gerr != nil {
			return Response{}, gerr
		}
		st, err = c.stores()
	case dir != "" && isDir(at):
		st, err = c.openAt(at)
	default:
		st, err = c.stores()
	}
	if err != nil {
		return Response{}, err
	}
	res, err := st.Record.CommitBoundary(c.ctx, record.CommitBoundaryInput{
		Commit:    commit,
		Command:   command,
		SessionID: p.SessionID,
	})
	if res != nil && res.PathsErr != nil {
		c.d.warn("changed paths of %s: %s", res.Commit.String()[:12], errText(res.PathsErr))
	}
	if err != nil {
		return Response{}, err
	}
	if res.Record == nil {
		c.d.warn("commit %s already has a commit-boundary record; not recording it again", res.Commit.String()[:12])
	}
	return Response{AdditionalContext: structureWarning(c.ctx, st.Git, res.Commit)}, nil
}

// unconfined is the command a bound agent wrote and the worktree it ran
// in, when line is the confining entry the PreToolUse hook put in its
// place (confined): the host reports the call with the command it ran.
// Only the entry this hook would write for this agent, to the letter,
// is taken for one.
func (c *call) unconfined(line string) (command, worktree string, ok bool) {
	if c.d.Confine == nil || !strings.Contains(line, " confine ") {
		return "", "", false
	}
	cmds := shell.Read(line).Commands
	if len(cmds) != 1 {
		return "", "", false
	}
	a := cmds[0].Args
	if len(a) != 10 || a[1] != "confine" || a[2] != "--task" || a[4] != "--role" || a[6] != "--agent" || a[7] != c.p.AgentID || a[8] != "--" ||
		c.d.Confine(a[3], a[5], a[7], a[9]) != line {
		return "", "", false
	}
	b := c.boundTo()
	if b == nil || b.Task != a[3] || b.Worktree == "" {
		return "", "", false
	}
	return a[9], b.Worktree, true
}

// GitCommitDir reports whether a shell command line runs `git commit`, and
// the directory that commit runs in, relative to where the line starts
// ("" for there). It reads the line with the shell reader (wrappers,
// assignments, cd, sh -c and substitutions followed) and skips git's own
// options before the subcommand (-C DIR is followed; -c, --git-dir and
// the like are skipped). So `git -C sub commit -m x`, `make && git commit
// -am y` and `cd sub; git commit` are commits, while `git commit-tree`,
// `echo "git commit"` and `git log --grep commit` are not. When the line
// commits more than once, the last commit's directory is returned.
func GitCommitDir(line string) (dir string, ok bool) {
	for _, c := range shell.Read(line).Commands {
		if c.Program() != "git" {
			continue
		}
		if d, sub := gitSubcommand(c.Args[1:]); sub == "commit" {
			cwd := c.Dir
			if cwd == "." {
				cwd = ""
			}
			dir, ok = joinRel(cwd, d), true
		}
	}
	return dir, ok
}

// joinRel joins a relative or absolute dir onto base ("" = the start).
func joinRel(base, dir string) string {
	if dir == "" {
		return base
	}
	if filepath.IsAbs(dir) || base == "" {
		return filepath.Clean(dir)
	}
	return filepath.Join(base, dir)
}

// gitSubcommand skips git's global options and returns the subcommand and
// the directory -C options lead to.
func gitSubcommand(args []string) (dir, sub string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C":
			if i+1 < len(args) {
				dir = joinRel(dir, args[i+1])
				i++
			}
		case a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--exec-path" ||
			a == "--config-env" || a == "--super-prefix" || a == "--list-cmds" || a == "--attr-source":
			i++
		case strings.HasPrefix(a, "-"):
			// --no-pager, -p, --bare, --git-dir=…, and so on
		default:
			return dir, a
		}
	}
	return dir, ""
}
