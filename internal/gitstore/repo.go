package gitstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
)

// Repo locates one repository on disk. It is cheap to build and holds no
// open files.
type Repo struct {
	// GitDir is the per-worktree git directory (where HEAD lives).
	GitDir string
	// CommonDir holds objects, refs, packed-refs and config. It equals
	// GitDir except inside a linked worktree.
	CommonDir string
	// WorkTree is the top of the working tree, "" for a bare repository.
	WorkTree string
}

// Discover finds the repository containing dir, the way git does: $GIT_DIR
// when set, else the nearest ancestor with a ".git" directory or gitfile, or
// a bare repository. A directory outside any repository is apperr.NotARepo.
func Discover(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotARepo, err, "cannot resolve %s", dir)
	}
	if gd := os.Getenv("GIT_DIR"); gd != "" {
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(abs, gd)
		}
		r, err := fromGitDir(gd)
		if err != nil {
			return nil, err
		}
		if wt := os.Getenv("GIT_WORK_TREE"); wt != "" {
			r.WorkTree = wt
		}
		return r, nil
	}
	return discoverUp(abs)
}

// discoverUp finds the repository containing the absolute directory abs
// by looking up from it, whatever $GIT_DIR says: a worktree named
// explicitly (a task's) is found by where it is.
func discoverUp(abs string) (*Repo, error) {
	for d := abs; ; {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			var gd string
			if fi.IsDir() {
				gd = dotgit
			} else if gd, err = readGitfile(dotgit); err != nil {
				return nil, err
			}
			r, err := fromGitDir(gd)
			if err != nil {
				return nil, err
			}
			r.WorkTree = d
			return r, nil
		}
		if isGitDir(d) {
			return fromGitDir(d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return nil, apperr.New(apperr.NotARepo, "%s is not inside a git repository", abs)
}

// smallFileMax bounds the one-line files of a git directory read here
// (HEAD, the .git file, commondir, a worktree's gitdir) and the
// alternates list.
const smallFileMax = 64 << 10

// packedRefsMax bounds packed-refs (about 90 bytes a ref).
const packedRefsMax = 1 << 30

func readGitfile(path string) (string, error) {
	b, err := osproc.ReadRegular(path, smallFileMax)
	if err != nil {
		return "", apperr.Wrap(apperr.NotARepo, err, "cannot read %s", path)
	}
	line := strings.TrimSpace(string(b))
	gd, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", apperr.New(apperr.NotARepo, "%s is not a valid gitfile", path)
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(path), gd)
	}
	return gd, nil
}

func isGitDir(d string) bool {
	if _, err := os.Stat(filepath.Join(d, "HEAD")); err != nil {
		return false
	}
	_, errO := os.Stat(filepath.Join(d, "objects"))
	_, errC := os.Stat(filepath.Join(d, "commondir"))
	return errO == nil || errC == nil
}

func fromGitDir(gd string) (*Repo, error) {
	gd = filepath.Clean(gd)
	if !isGitDir(gd) {
		return nil, apperr.New(apperr.NotARepo, "%s is not a git directory", gd)
	}
	r := &Repo{GitDir: gd, CommonDir: gd}
	if b, err := osproc.ReadRegular(filepath.Join(gd, "commondir"), smallFileMax); err == nil {
		cd := strings.TrimSpace(string(b))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		r.CommonDir = filepath.Clean(cd)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, apperr.Wrap(apperr.NotARepo, err, "cannot read %s/commondir", gd)
	}
	if err := checkFormat(r.CommonDir); err != nil {
		return nil, err
	}
	return r, nil
}

// UnsupportedRepo is the code of a repository git ideate cannot write
// without corrupting it: SHA-256 object names, or reftable refs, where a
// ref written as a loose file is invisible to git.
const UnsupportedRepo apperr.Code = "UNSUPPORTED_REPOSITORY"

// checkFormat refuses, at discovery, a repository whose common config
// asks for SHA-256 objects or another ref storage than files; git reads
// the file only when it names either extension.
func checkFormat(common string) error {
	path := filepath.Join(common, "config")
	b, err := osproc.ReadRegular(path, configCacheMax)
	low := strings.ToLower(string(b))
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && !strings.Contains(low, "objectformat") && !strings.Contains(low, "refstorage"):
		return nil
	case errors.Is(err, osproc.ErrNotRegular):
		return apperr.New(apperr.NotARepo, "%s is not a regular file", path)
	}
	// It names an extension, or is too large to scan here: git decides.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := Command(ctx, "git", "config", "--file", path, "-z", "--get-regexp", `^extensions\.(objectformat|refstorage)$`).Output()
	for _, rec := range strings.Split(string(out), "\x00") {
		key, v, _ := strings.Cut(rec, "\n")
		switch val := strings.ToLower(strings.TrimSpace(v)); key {
		case "extensions.objectformat":
			if val != "sha1" {
				return apperr.New(UnsupportedRepo, "%s uses %s object names (extensions.objectFormat); git ideate reads and writes SHA-1 repositories only", common, v)
			}
		case "extensions.refstorage":
			if val != "files" {
				return apperr.New(UnsupportedRepo, "%s keeps its refs in %s (extensions.refStorage); git ideate writes refs as files, which git would not see there", common, v)
			}
		}
	}
	return nil
}

// StateDir is the per-clone directory for caches and telemetry
// (<common dir>/ideate). Nothing in it is the only copy of anything.
func (r *Repo) StateDir() string { return filepath.Join(r.CommonDir, "ideate") }

// MainWorkTree is the top of the repository's main working tree, the one
// whose git directory is the common directory (from inside a linked
// worktree, the main checkout). ok is false when the common directory is
// not a working tree's ".git" (a bare repository, $GIT_DIR elsewhere).
func (r *Repo) MainWorkTree() (string, bool) {
	if r.GitDir == r.CommonDir && r.WorkTree != "" {
		return r.WorkTree, true
	}
	if filepath.Base(r.CommonDir) != ".git" {
		return "", false
	}
	top := filepath.Dir(r.CommonDir)
	if st, err := os.Stat(top); err != nil || !st.IsDir() {
		return "", false
	}
	return top, true
}
