package hooks

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
)

// NotesRef is where commit-boundary records are noted on the commits they
// close (gitstore.NotesRef, which sync shares).
const NotesRef = gitstore.NotesRef

// NoteLine is the line a commit's note gains for each record about it.
func NoteLine(id, kind string) string { return "ideate-record: " + id + " " + kind }

// notesCommitBoundary reports whether a note already names a
// commit-boundary record.
func notesCommitBoundary(note string) bool {
	for _, line := range strings.Split(note, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "ideate-record: ") && strings.HasSuffix(line, " commit-boundary") {
			return true
		}
	}
	return false
}

// Limits of a commit-boundary record.
const (
	MaxCommand   = 240 // characters of the command kept
	notePaths    = 8   // changed paths named in the content
	scopeDirs    = 6   // directories of changed paths in the scope
	maxDiffPaths = 200 // changed paths read at most (a huge commit is not walked whole)
)

// postToolUse records a commit made through the Bash tool. Every other
// PostToolUse does nothing.
func postToolUse(c *call) (Response, error) {
	p := c.p
	if p.ToolName != "Bash" {
		return Response{}, nil
	}
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
	g := st.Record.Git()
	sha := strings.TrimSpace(lookup(p.ToolResponse, "gitOperation", "commit", "sha"))
	spec := sha
	if spec == "" {
		spec = "HEAD"
	}
	h, err := g.ResolveCommit(spec)
	if err != nil {
		return Response{}, apperr.Wrap(apperr.CodeOf(err), err, "cannot find the commit (%s): %s; nothing recorded", spec, apperr.Message(err))
	}
	if note, ok, err := g.ReadNote(NotesRef, h); err == nil && ok && notesCommitBoundary(string(note)) {
		c.d.warn("commit %s already has a commit-boundary record; not recording it again", h.String()[:12])
		return Response{}, nil
	}
	commit, err := g.ReadCommit(h)
	if err != nil {
		return Response{}, err
	}
	paths, more, err := changedPaths(g, commit, maxDiffPaths)
	if err != nil {
		c.d.warn("changed paths of %s: %s", h.String()[:12], errText(err))
	}
	subject, _, _ := strings.Cut(strings.TrimSpace(commit.Message), "\n")
	subject = cut(oneLine(subject), 160)
	if subject == "" {
		subject = "(no subject)"
	}
	var dirs []string
	seen := map[string]bool{}
	for _, f := range paths {
		if d := path.Dir(f); !seen[d] && len(dirs) < scopeDirs {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Command: %s\n", cut(strings.TrimSpace(command), MaxCommand))
	switch {
	case len(paths) == 0 && err == nil:
		b.WriteString("Changed paths: none.")
	case len(paths) == 0:
		b.WriteString("Changed paths: unknown (they could not be read).")
	default:
		count := fmt.Sprint(len(paths))
		if more {
			count += "+"
		}
		shown := paths
		if len(shown) > notePaths {
			shown = shown[:notePaths]
		}
		fmt.Fprintf(&b, "Changed paths (%s): %s", count, strings.Join(shown, ", "))
		if n := len(paths) - len(shown); n > 0 || more {
			if more {
				b.WriteString(", and more.")
			} else {
				fmt.Fprintf(&b, ", and %d more.", n)
			}
		} else {
			b.WriteString(".")
		}
	}
	res, err := st.Record.Append(record.AppendInput{
		Kind:               "commit-boundary",
		Claim:              fmt.Sprintf("Git commit %s landed in session %s: %s", h.String()[:12], sessionLabel(p), subject),
		VerificationAnchor: h.String(),
		Scope:              strings.Join(dirs, ", "),
		Source:             record.Source{CapturePoint: "commit-boundary", SessionID: p.SessionID},
		Content:            b.String(),
	})
	if err != nil {
		return Response{}, err
	}
	if _, err := g.AppendNote(NotesRef, h, NoteLine(res.Record.ID, res.Record.Kind)); err != nil {
		return Response{}, apperr.Wrap(apperr.CodeOf(err), err, "record %s was written but the note on %s was not: %s",
			res.Record.ID, h.String()[:12], apperr.Message(err))
	}
	return Response{}, nil
}

// changedPaths lists the paths a commit changed against its first parent
// (everything, for a root commit), sorted; at most max of them, with more
// true when it stopped there. Only subtrees that differ are read.
func changedPaths(g *gitstore.Store, c *gitstore.Commit, max int) (paths []string, more bool, err error) {
	parent := gitstore.ZeroHash
	if len(c.Parents) > 0 {
		pc, err := g.ReadCommit(c.Parents[0])
		if err != nil {
			return nil, false, err
		}
		parent = pc.Tree
	}
	err = g.DiffTrees(parent, c.Tree, func(p string, _, _ gitstore.TreeEntry) error {
		if len(paths) >= max {
			more = true
			return gitstore.ErrStopDiff
		}
		paths = append(paths, p)
		return nil
	})
	sort.Strings(paths)
	return paths, more, err
}

// GitCommitDir reports whether a shell command line runs `git commit`, and
// the directory that commit runs in, relative to where the line starts
// ("" for there). It reads the line the way a shell splits it: words with
// single and double quotes and backslashes, commands separated by ;, &&,
// ||, |, & and newlines, leading VAR=value assignments and the wrappers
// command, env, exec, nohup, sudo and time skipped, `cd DIR` tracked for
// the commands after it, and git's own options before the subcommand
// (-C DIR is followed; -c, --git-dir and the like are skipped). So
// `git -C sub commit -m x`, `make && git commit -am y` and
// `cd sub; git commit` are commits, while `git commit-tree`, `echo "git
// commit"` and `git log --grep commit` are not. Command substitutions and
// `sh -c '…'` are not looked into. When the line commits more than once,
// the last commit's directory is returned.
func GitCommitDir(line string) (dir string, ok bool) {
	cwd := ""
	for _, words := range splitCommands(line) {
		words = skipPrefixes(words)
		if len(words) == 0 {
			continue
		}
		switch {
		case words[0] == "cd":
			if len(words) > 1 && words[1] != "-" && !strings.HasPrefix(words[1], "~") {
				cwd = joinRel(cwd, words[1])
			}
		case words[0] == "git" || strings.HasSuffix(words[0], "/git"):
			if d, sub := gitSubcommand(words[1:]); sub == "commit" {
				dir, ok = joinRel(cwd, d), true
			}
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

// skipPrefixes drops leading VAR=value assignments and command wrappers.
func skipPrefixes(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case isAssignment(w):
			words = words[1:]
		case w == "command" || w == "exec" || w == "nohup" || w == "time" || w == "env" || w == "sudo" || w == "!":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") && words[0] != "-" {
				words = words[1:] // the wrapper's own options
			}
		default:
			return words
		}
	}
	return words
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// splitCommands splits a shell line into simple commands, each a list of
// words with quotes removed. It never fails: an unterminated quote runs to
// the end of the line.
func splitCommands(line string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\':
			if i+1 < len(line) {
				i++
				if line[i] != '\n' { // a backslash-newline joins lines
					w.WriteByte(line[i])
					inWord = true
				}
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				w.WriteString(line[i+1:])
				i = len(line)
			} else {
				w.WriteString(line[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`\n", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
		case c == '#' && !inWord:
			for i < len(line) && line[i] != '\n' {
				i++
			}
			endCmd()
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')':
			endCmd()
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}
