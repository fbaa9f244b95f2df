package gates

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/pathglob"
)

// EscapeName is the check after the fact of what confinement and the
// guard cannot see, asked when an execution agent stops.
const EscapeName Name = "escape"

// EscapeFacts are what Escape compares: every working tree of the
// repository as it was when the agent was dispatched (TakeSnapshot), the
// ones whose changes are not the agent's to answer for (its own, and the
// worktrees of tasks other agents are working), and the agent's own
// worktree, base and role file classes.
type EscapeFacts struct {
	Before    map[string]string // working tree → its state at dispatch
	Skip      []string          // working trees not compared
	Worktree  string            // the agent's task worktree
	Base      string            // the task's base commit
	TestGlobs []string
	Frozen    []string
}

// TakeSnapshot records the state of every working tree of the repository
// containing dir (the main checkout and each linked worktree): the tree
// of its whole content, tracked and untracked (ignored files aside),
// written through a copy of its index so only changed files are read.
// The trees are unreferenced objects; a comparison soon after reads them
// back.
func TakeSnapshot(ctx context.Context, dir string) (map[string]string, error) {
	out, err := gitOut(ctx, dir, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	snap := map[string]string{}
	for _, f := range bytes.Split(out, []byte{0}) {
		line := string(f)
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			if _, err := os.Stat(p); err != nil {
				continue // a worktree whose directory is gone
			}
			tree, err := stateTree(ctx, p)
			if err != nil {
				return nil, err
			}
			snap[p] = tree
		}
	}
	return snap, nil
}

// stateTree is the tree of a working tree's content.
func stateTree(ctx context.Context, wt string) (string, error) {
	idx, err := gitOut(ctx, wt, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp("", "ideate-snapshot-*.index")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if data, err := os.ReadFile(strings.TrimSpace(string(idx))); err == nil {
		if err := os.WriteFile(tmp.Name(), data, 0o600); err != nil {
			return "", err
		}
	} else {
		os.Remove(tmp.Name()) // no index yet: git starts an empty one
	}
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := gitOut(ctx, wt, env, "add", "-A", "--ignore-errors", "."); err != nil {
		return "", err
	}
	tree, err := gitOut(ctx, wt, env, "write-tree")
	return strings.TrimSpace(string(tree)), err
}

func gitOut(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := gitstore.Command(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %v %s", args[0], dir, err, strings.TrimSpace(errb.String()))
	}
	return out, nil
}

// Escape is the check after the fact (EscapeName). At an execution
// agent's stop it FAILs escaped_write naming the paths when a working
// tree it does not answer for (the main checkout, another task's idle
// worktree; planning artifacts aside, which the main session keeps)
// changed since the dispatch, or when its own worktree's changes hold a
// symlink resolving outside the worktree or a file with more than one
// hard link; for a green-worker or scaffolder a link onto a test file
// FAILs link_to_test. What cannot be compared is UNVERIFIABLE.
var Escape = Func(escape)

func escape(ctx context.Context, in Input) (Verdict, error) {
	f := in.Escape
	if in.Point != AgentStop || f == nil {
		return Verdict{Result: PASS}, nil
	}
	var reasons []Reason
	skip := map[string]bool{}
	for _, s := range append([]string{f.Worktree}, f.Skip...) {
		skip[filepath.Clean(s)] = true
	}
	var trees []string
	for wt := range f.Before {
		trees = append(trees, wt)
	}
	sort.Strings(trees)
	for _, wt := range trees {
		if skip[filepath.Clean(wt)] {
			continue
		}
		if _, err := os.Stat(wt); err != nil {
			continue // removed since (a released task's worktree)
		}
		now, err := stateTree(ctx, wt)
		if err != nil {
			return unverifiable("escape_unreadable", "the state of "+wt+" cannot be read: "+errText(err)), nil
		}
		if now == f.Before[wt] {
			continue
		}
		out, err := gitOut(ctx, wt, nil, "diff-tree", "-r", "--name-only", "--no-renames", "-z", f.Before[wt], now)
		if err != nil {
			return unverifiable("escape_unreadable", "the change in "+wt+" cannot be listed: "+errText(err)), nil
		}
		var paths []string
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 && !pathglob.Match(PlanningGlob, string(p)) {
				paths = append(paths, filepath.Join(wt, string(p)))
			}
		}
		if len(paths) > 0 {
			reasons = append(reasons, Reason{Class: "escaped_write", Paths: paths,
				Detail: fmt.Sprintf("%d file(s) changed outside the task's worktree while its %s worked, in %s", len(paths), in.Role, wt)})
		}
	}
	if f.Worktree != "" {
		r, err := linkEscapes(ctx, in.Role, f)
		if err != nil {
			return unverifiable("escape_unreadable", "the worktree's changes cannot be listed: "+errText(err)), nil
		}
		reasons = append(reasons, r...)
	}
	if len(reasons) > 0 {
		return Verdict{Result: FAIL, Reasons: reasons}, nil
	}
	return Verdict{Result: PASS}, nil
}

func unverifiable(class, detail string) Verdict {
	return Verdict{Result: UNVERIFIABLE, Reasons: []Reason{{Class: class, Detail: detail}}}
}

// linkEscapes looks at every path of the agent's worktree that differs
// from the task's base (committed, staged, unstaged or untracked).
func linkEscapes(ctx context.Context, role string, f *EscapeFacts) ([]Reason, error) {
	wt := resolve("", f.Worktree)
	var names [][]byte
	if f.Base != "" {
		out, err := gitOut(ctx, f.Worktree, nil, "diff", "--name-only", "--no-renames", "-z", f.Base)
		if err != nil {
			return nil, err
		}
		names = append(names, bytes.Split(out, []byte{0})...)
	}
	out, err := gitOut(ctx, f.Worktree, nil, "ls-files", "-o", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	names = append(names, bytes.Split(out, []byte{0})...)
	gf := &GuardFacts{TestGlobs: f.TestGlobs, Frozen: f.Frozen}
	var out2 []Reason
	seen := map[string]bool{}
	for _, n := range names {
		rel := string(n)
		if rel == "" || seen[rel] {
			continue
		}
		seen[rel] = true
		p := filepath.Join(f.Worktree, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil {
			continue // deleted
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			abs := resolve("", target)
			in, ok := within(wt, abs)
			switch {
			case !ok:
				out2 = append(out2, Reason{Class: "escaped_write", Paths: []string{rel},
					Detail: "the symlink " + rel + " leads out of the task's worktree (to " + abs + "): a write through it lands elsewhere"})
			case (role == RoleGreen || role == RoleScaffold) && (gf.isTest(in) || gf.frozen(in)):
				out2 = append(out2, Reason{Class: "link_to_test", Paths: []string{rel},
					Detail: "the symlink " + rel + " leads onto the test file " + in + ", which a " + role + " never touches"})
			}
		case fi.Mode().IsRegular():
			if n := linkCount(fi); n > 1 {
				out2 = append(out2, Reason{Class: "escaped_write", Paths: []string{rel},
					Detail: fmt.Sprintf("%s has %d hard links: a write to it changes a file elsewhere too", rel, n)})
			}
		}
	}
	return out2, nil
}
