package hooks

import (
	"path/filepath"

	"github.com/ideate/git-ideate/internal/apperr"
	"strings"

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
	dir, ok := GitCommitDir(command)
	if !ok {
		return Response{}, nil
	}
	// `git -C dir commit`, `cd dir && git commit`: the commit, and so its
	// record and note, belong to that directory's repository.
	var st *Stores
	var err error
	if at := absDir(c.d.RepoDir(p), dir); dir != "" && isDir(at) {
		st, err = c.openAt(at)
	} else {
		st, err = c.stores()
	}
	if err != nil {
		return Response{}, err
	}
	res, err := st.Record.CommitBoundary(c.ctx, record.CommitBoundaryInput{
		// The host names the commit it saw land; without that, HEAD.
		Commit:    lookup(p.ToolResponse, "gitOperation", "commit", "sha"),
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
