package gates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/pathglob"
)

// EscapeName is the check after the fact of what confinement and the
// guard cannot see, asked when an execution agent stops.
const EscapeName Name = "escape"

// EscapeFacts are what Escape compares: every working tree of the
// repository as it was when the agent was dispatched (TakeSnapshot), the
// agent's own worktree, base and role file classes, and who else wrote
// what meanwhile: the ledger of logged writes (Written) and the agents
// each other task's worktree belongs to (Owners).
type EscapeFacts struct {
	Before    map[string]string // working tree → its state at dispatch
	Worktree  string            // the agent's task worktree
	Base      string            // the task's base commit
	TestGlobs []string
	Frozen    []string
	// Owners are, per working tree (Resolve'd), the other agents whose
	// logged writes there are theirs to answer for: a task worktree's
	// own bound agents. The main session (MainActor) answers for its
	// logged writes anywhere.
	Owners map[string][]string
	// Written is the ledger of logged writes: the actor of the last
	// logged write to a file (by its EntryPath) and the ContentHash
	// it left; ok is false when none is logged. nil: nothing is logged.
	Written func(abs string) (actor, hash string, ok bool)
	// Unlogged are, per working tree (Resolve'd), the agents with a
	// confined Bash call whose writes are not logged yet: still running,
	// or its entry was killed. Their changes cannot be told from an
	// escape; the FAIL names the agents so the reader can.
	Unlogged map[string][]string
}

// MainActor names the main session in the ledger of logged writes.
const MainActor = "main"

// maxHashed caps the size of a file ContentHash reads.
const maxHashed = 64 << 20

// ContentHash is what a file holds now, for the ledger of logged writes:
// "-" for a missing file, a digest of a symlink's target or a regular
// file's content, "" for anything else (a directory, a file over 64 MiB,
// an unreadable one), which no logged write can account for.
func ContentHash(abs string) string {
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "-"
	case err != nil:
		return ""
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(abs)
		if err != nil {
			return ""
		}
		h := sha256.Sum256([]byte(t))
		return "link:" + hex.EncodeToString(h[:])
	case !fi.Mode().IsRegular() || fi.Size() > maxHashed:
		return ""
	}
	f, err := os.Open(abs)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxHashed+1)); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Resolve makes p absolute against cwd and follows the symlinks of its
// longest existing prefix: the one spelling of a path the ledger of
// logged writes and the working trees' lists agree on.
func Resolve(cwd, p string) string { return resolve(cwd, p) }

// EntryPath is the ledger's spelling of a working tree's entry (a file,
// or a symlink itself): its directory Resolve'd. A changed symlink is the
// link's change: following it would name (and excuse) its target.
func EntryPath(abs string) string {
	if abs == "" {
		return ""
	}
	return filepath.Join(resolve("", filepath.Dir(abs)), filepath.Base(abs))
}

// accounted reports whether the change of abs, in working tree wt, is a
// logged write of the main session or of one of wt's own agents that
// left the file as it is now.
func (f *EscapeFacts) accounted(wt, abs string) bool {
	if f.Written == nil {
		return false
	}
	actor, hash, ok := f.Written(EntryPath(abs))
	if !ok || hash == "" || hash != ContentHash(abs) {
		return false
	}
	if actor == MainActor {
		return true
	}
	for _, a := range f.Owners[resolve("", wt)] {
		if a == actor {
			return true
		}
	}
	return false
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
	out, err := gitOut(ctx, wt, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	idx := strings.TrimSpace(string(out))
	tmp, err := os.CreateTemp("", "ideate-snapshot-*.index")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// The index is what the worker's commands left: only a regular file
	// of a sane size is copied (a link to /dev/zero would be read
	// forever); without one git starts an empty index, and reads every
	// file.
	if data, err := osproc.ReadRegular(idx, 1<<30); err == nil {
		if err := os.WriteFile(tmp.Name(), data, 0o600); err != nil {
			return "", err
		}
	} else {
		os.Remove(tmp.Name())
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
// tree other than its own (the main checkout, every other task's
// worktree) changed since the dispatch in a file no logged write
// accounts for: the main session's own tool calls, and in another task's
// worktree that task's own agents' (EscapeFacts.Written, Owners), each
// only while the file still holds what that write left. Planning
// artifacts aside, which the main session keeps. What cannot be
// attributed so is the agent's to answer for: the check fails closed. It
// FAILs too when the agent's own worktree's changes hold a symlink
// resolving outside the worktree or a file with more than one hard link;
// for a green-worker or scaffolder a link onto a test file FAILs
// link_to_test. What cannot be compared is UNVERIFIABLE.
var Escape = Func(escape)

func escape(ctx context.Context, in Input) (Verdict, error) {
	f := in.Escape
	if in.Point != AgentStop || f == nil {
		return Verdict{Result: PASS}, nil
	}
	var reasons []Reason
	own := resolve("", f.Worktree)
	var trees []string
	for wt := range f.Before {
		trees = append(trees, wt)
	}
	sort.Strings(trees)
	for _, wt := range trees {
		if own != "" && resolve("", wt) == own {
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
		changed, err := changedPaths(ctx, wt, f.Before[wt], now)
		if err != nil {
			return unverifiable("escape_unreadable", "the change in "+wt+" cannot be listed: "+errText(err)), nil
		}
		var paths []string
		for _, p := range changed {
			if pathglob.Match(PlanningGlob, p) {
				continue
			}
			abs := filepath.Join(wt, filepath.FromSlash(p))
			if !f.accounted(wt, abs) {
				paths = append(paths, abs)
			}
		}
		if len(paths) > 0 {
			detail := fmt.Sprintf("%d file(s) changed outside the task's worktree while its %s worked, in %s, and no logged write of the main session or of that worktree's own agent accounts for them", len(paths), in.Role, wt)
			if a := f.Unlogged[resolve("", wt)]; len(a) > 0 {
				detail += fmt.Sprintf(" (a confined Bash call of agent %s there is still running or was killed before it logged its writes, and may have made them)", strings.Join(a, ", "))
			}
			reasons = append(reasons, Reason{Class: "escaped_write", Paths: paths, Detail: detail})
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

// ChangedSince lists the paths (slash-separated, relative to the top of
// working tree wt) changed since t0, a time the file system stamped (the
// ChangeTime of a file written then): each path git lists there now,
// tracked or untracked (ignored files aside), or that one of the trees
// before holds (TakeSnapshot's states of wt, which a stop compares
// against: so a deletion shows), whose entry's change time is t0 or
// later, or, for one now missing, its nearest existing directory's. The
// kernel sets a change time on every write, rename, link and chmod, and
// no call sets it back (touch -d sets the other times); a file that only
// had its metadata changed is listed too. A write stamped before t0, on a
// working tree whose file system keeps a coarser time than the state
// directory's, is missed: it stays blamed on the workers.
func ChangedSince(ctx context.Context, wt string, t0 time.Time, before []string) ([]string, error) {
	trees := slices.Compact(slices.Sorted(slices.Values(before)))
	if len(trees) == 0 {
		trees = []string{""}
	}
	seen := map[string]bool{}
	dirs := map[string]bool{}
	var changed []string
	for _, tree := range trees {
		args := []string{"ls-files", "-z", "--cached", "--others", "--exclude-standard"}
		if tree != "" {
			args = append(args, "--with-tree="+tree)
		}
		out, err := gitOut(ctx, wt, nil, args...)
		if err != nil {
			return nil, err
		}
		for _, b := range bytes.Split(out, []byte{0}) {
			p := string(b)
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			if changedSince(filepath.Join(wt, filepath.FromSlash(p)), t0, dirs) {
				changed = append(changed, p)
			}
		}
	}
	return changed, nil
}

// changedSince reports whether abs, or when it is missing its nearest
// existing directory (an entry's removal changes its directory), changed
// at t0 or later; dirs caches the directories' answers.
func changedSince(abs string, t0 time.Time, dirs map[string]bool) bool {
	if ct, ok := ChangeTime(abs); ok {
		return !ct.Before(t0)
	}
	var missing []string
	d := filepath.Dir(abs)
	for {
		v, ok := dirs[d]
		if !ok {
			var ct time.Time
			if ct, ok = ChangeTime(d); ok {
				v = !ct.Before(t0)
			} else if up := filepath.Dir(d); up != d {
				missing = append(missing, d)
				d = up
				continue
			} else {
				v, ok = true, true
			}
		}
		for _, m := range missing {
			dirs[m] = v
		}
		dirs[d] = v
		return v
	}
}

// changedPaths lists the paths (slash-separated, relative to the working
// tree) that differ between two state trees of wt.
func changedPaths(ctx context.Context, wt, from, to string) ([]string, error) {
	out, err := gitOut(ctx, wt, nil, "diff-tree", "-r", "--name-only", "--no-renames", "-z", from, to)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	return paths, nil
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
