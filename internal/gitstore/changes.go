package gitstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Change statuses, as `git diff --name-status` prints them.
const (
	Added       = "A"
	Deleted     = "D"
	Modified    = "M" // content or executable bit
	TypeChanged = "T" // file, symlink and submodule turned into one another
	Renamed     = "R" // exact: the deleted path's content, byte for byte
)

// Change is one path whose state in a worktree differs from a base commit.
type Change struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	// From is the old path of a rename.
	From    string `json:"from,omitempty"`
	OldMode string `json:"old_mode,omitempty"`
	NewMode string `json:"new_mode,omitempty"`
	OldHash Hash   `json:"-"`
	NewHash Hash   `json:"-"` // zero for an added path whose content was not needed
	// Committed: the worktree's HEAD differs from the base at this path.
	Committed bool `json:"committed"`
	// Uncommitted: the index or the working tree differ from HEAD here.
	Uncommitted bool `json:"uncommitted"`
	// Undone: HEAD changed this path, but the working tree holds base's
	// state again (Status and modes are then HEAD's change).
	Undone bool `json:"undone,omitempty"`
}

// Changes is what a worktree changed against its base.
type Changes struct {
	Base Hash     // the base commit
	Head Hash     // the worktree's HEAD commit (ZeroHash on an unborn branch)
	List []Change // sorted by path
}

// Paths returns every path the changes touch: each path, and the old path
// of a rename too.
func (c *Changes) Paths() []string {
	out := make([]string, 0, len(c.List))
	for _, ch := range c.List {
		if ch.From != "" {
			out = append(out, ch.From)
		}
		out = append(out, ch.Path)
	}
	sort.Strings(out)
	return out
}

// WorktreeChanges lists the paths the worktree at dir changed against the
// commit base: committed (HEAD's tree against base's) and uncommitted (the
// worktree's state as `git add -A` would stage it, content filters
// applied). Deletions, mode and type changes and exact renames are
// reported. git builds that state in a copy of the worktree's index
// (workingIndex) and compares it with base; neither the worktree's index
// nor the object database is written.
func (s *Store) WorktreeChanges(ctx context.Context, base Hash, dir string) (*Changes, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "cannot resolve %s", dir)
	}
	wt, err := discoverUp(abs)
	if err != nil {
		return nil, err
	}
	if wt.WorkTree == "" {
		return nil, apperr.New(apperr.NotARepo, "%s has no working tree", dir)
	}
	if wt.CommonDir != s.repo.CommonDir {
		return nil, apperr.New(apperr.Schema, "%s belongs to another repository (%s, not %s)", dir, wt.CommonDir, s.repo.CommonDir)
	}
	baseTree, err := s.treeOf(base)
	if err != nil {
		return nil, err
	}
	wts := OpenRepo(wt, Options{Config: s.cfg})
	defer wts.Close()
	head, err := wts.Head()
	if err != nil {
		return nil, err
	}
	headTree, err := s.treeOf(head)
	if err != nil {
		return nil, err
	}
	// base → HEAD
	committed := map[string]*Change{}
	err = s.DiffTrees(baseTree, headTree, func(path string, o, n TreeEntry) error {
		committed[path] = &Change{Path: path, OldMode: o.Mode, NewMode: n.Mode, OldHash: o.Hash, NewHash: n.Hash}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// base → the working state
	idx, err := s.workingIndex(ctx, wt)
	if err != nil {
		return nil, err
	}
	defer os.Remove(idx)
	out, err := s.runGitEnv(ctx, wt.WorkTree, []string{"GIT_INDEX_FILE=" + idx}, nil, "diff-index", "--cached", "-z", "--no-renames", "--no-abbrev", base.String())
	if err != nil {
		return nil, err
	}
	net := map[string]*Change{}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		// :<old mode> <new mode> <old name> <new name> <status>, then the path
		f := strings.Fields(strings.TrimPrefix(recs[i], ":"))
		if len(f) != 5 {
			return nil, apperr.New(apperr.Internal, "git diff-index printed %q", recs[i])
		}
		c := &Change{Path: recs[i+1], OldMode: present(f[0]), NewMode: present(f[1])}
		c.OldHash, _ = ParseHash(f[2])
		c.NewHash, _ = ParseHash(f[3])
		net[c.Path] = c
	}
	// A path HEAD changed is uncommitted where the working state is not
	// HEAD's; where it is base's again, the change was committed, then
	// undone without committing.
	for p, c := range committed {
		n, ok := net[p]
		if !ok {
			n = c
			n.Uncommitted, n.Undone = true, true
			net[p] = n
		}
		n.Committed = true
		n.Uncommitted = n.Uncommitted || n.NewMode != c.NewMode || n.NewHash != c.NewHash
	}
	for _, n := range net {
		n.Status = status(n.OldMode, n.NewMode)
		n.Uncommitted = n.Uncommitted || !n.Committed
	}
	pairRenames(net)
	res := &Changes{Base: base, Head: head}
	for _, p := range slices.Sorted(maps.Keys(net)) {
		res.List = append(res.List, *net[p])
	}
	return res, nil
}

// status is the change from oldMode to newMode ("": absent).
func status(oldMode, newMode string) string {
	switch {
	case oldMode == "":
		return Added
	case newMode == "":
		return Deleted
	case modeType(oldMode) != modeType(newMode):
		return TypeChanged
	}
	return Modified
}

// present is mode, or "" for git's "000000" (absent).
func present(mode string) string {
	if strings.Trim(mode, "0") == "" {
		return ""
	}
	return mode
}

// workingIndex writes a copy of the worktree's index holding what `git
// add -A` would stage, and returns its path (the caller removes it): the
// paths `git status` names go through `git update-index --info-only`,
// which hashes them as `git add` would and writes no object.
func (s *Store) workingIndex(ctx context.Context, wt *Repo) (string, error) {
	f, err := os.CreateTemp("", "ideate-index-*")
	if err != nil {
		return "", apperr.Wrap(apperr.Write, err, "cannot create a temporary index")
	}
	path := f.Name()
	src, err := os.Open(filepath.Join(wt.GitDir, "index"))
	var fi os.FileInfo
	if err == nil {
		if _, err = io.Copy(f, src); err == nil {
			fi, err = src.Stat()
		}
		src.Close()
	} else if errors.Is(err, os.ErrNotExist) {
		err = os.Remove(path) // git starts an empty index where there is none
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && fi != nil {
		// The copy keeps the index's time, by which git tells an entry
		// whose file may have changed in the same instant ("racily clean").
		err = os.Chtimes(path, fi.ModTime(), fi.ModTime())
	}
	if err != nil {
		os.Remove(path)
		return "", apperr.Wrap(apperr.Write, err, "cannot copy the index of %s", wt.WorkTree)
	}
	env := []string{"GIT_INDEX_FILE=" + path}
	// git status names the changed paths, then the untracked ones: in
	// that order, a file turned into a directory leaves the index before
	// the files inside are added.
	out, err := s.runGitEnv(ctx, wt.WorkTree, env, nil, "--no-optional-locks", "status", "--porcelain=v2", "-z",
		"--untracked-files=all", "--no-renames", "--ignore-submodules=dirty")
	if err == nil && len(out) > 0 {
		var paths bytes.Buffer
		for _, rec := range strings.Split(string(out), "\x00") {
			var p string
			switch {
			case strings.HasPrefix(rec, "1 "): // 1 XY sub mH mI mW hH hI path
				p = field(rec, 9)
			case strings.HasPrefix(rec, "u "): // u XY sub m1 m2 m3 mW h1 h2 h3 path
				p = field(rec, 11)
			case strings.HasPrefix(rec, "? "):
				p = rec[2:]
			}
			if p == "" {
				continue
			}
			if dir, ok := strings.CutSuffix(p, "/"); ok {
				// A repository inside: git adds it as a submodule at its
				// HEAD, and refuses one with no commit, left out.
				if _, err := s.RunGit(ctx, filepath.Join(wt.WorkTree, dir), "rev-parse", "-q", "--verify", "HEAD"); err != nil {
					continue
				}
				p = dir
			}
			paths.WriteString(p + "\x00")
		}
		_, err = s.runGitEnv(ctx, wt.WorkTree, env, &paths, "update-index", "--add", "--remove", "--replace", "--info-only", "-z", "--stdin")
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// field is the nth space-separated field of rec, the last taking the rest
// (a path may hold spaces), or "".
func field(rec string, n int) string {
	if f := strings.SplitN(rec, " ", n); len(f) == n {
		return f[n-1]
	}
	return ""
}

// modeType is the kind of object a mode names: "f" file (either mode),
// "l" symlink, "g" submodule.
func modeType(m string) string {
	switch m {
	case "120000":
		return "l"
	case "160000":
		return "g"
	}
	return "f"
}

// pairRenames turns a deletion and an addition of the same content (and
// kind) into one rename, pairing in path order.
func pairRenames(net map[string]*Change) {
	type key struct {
		h Hash
		t string
	}
	gone := map[key][]string{}
	var added []string
	for _, p := range slices.Sorted(maps.Keys(net)) {
		switch c := net[p]; {
		case c.Undone:
		case c.Status == Deleted && c.OldHash != ZeroHash:
			k := key{c.OldHash, modeType(c.OldMode)}
			gone[k] = append(gone[k], p)
		case c.Status == Added && c.NewHash != ZeroHash:
			added = append(added, p)
		}
	}
	for _, p := range added {
		c := net[p]
		k := key{c.NewHash, modeType(c.NewMode)}
		ps := gone[k]
		if len(ps) == 0 {
			continue
		}
		from := net[ps[0]]
		gone[k] = ps[1:]
		delete(net, from.Path)
		c.Status, c.From, c.OldMode, c.OldHash = Renamed, from.Path, from.OldMode, from.OldHash
		c.Committed = c.Committed || from.Committed
		c.Uncommitted = c.Uncommitted || from.Uncommitted
	}
}
