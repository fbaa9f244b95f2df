package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/fsmonitor"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// MonitorSubdir is where a worktree's file-system monitor keeps its lock
// and cookies, inside the worktree's own git directory (so `git worktree
// prune` removes whatever a killed monitor leaves).
const MonitorSubdir = "ideate/fsmonitor"

// MonitorIdle ends a monitor nobody asked for this long.
const MonitorIdle = 30 * time.Minute

// monitorWait bounds a query to a monitor (connect, cookie, answer).
const monitorWait = 2 * time.Second

// MonitorDir is the state directory of the monitor of the worktree whose
// git directory is gitDir.
func MonitorDir(gitDir string) string {
	return filepath.Join(gitDir, filepath.FromSlash(MonitorSubdir))
}

// RunMonitor serves the file-system monitor of the worktree at dir against
// the commit base until it ends (see fsmonitor.Serve): its seed is
// WorktreeChanges; a write of the worktree's index names the paths whose
// index entry changed; a change of a .gitignore or .gitattributes in the
// tree, or of the repository's config or info/exclude or info/attributes,
// seeds it again. A second monitor of the same worktree returns
// fsmonitor.ErrRunning at once.
func RunMonitor(ctx context.Context, git *gitstore.Store, dir string, base gitstore.Hash, idle time.Duration, ready func()) error {
	r, err := gitstore.Discover(dir)
	if err != nil {
		return err
	}
	var keys map[string]string
	o := fsmonitor.Options{
		Root: r.WorkTree, StateDir: MonitorDir(r.GitDir), Key: base.String(),
		Skip: []string{".git"}, Reseed: []string{".gitignore", ".gitattributes"},
		Idle: idle, Ready: ready, QueueLimit: MonitorTestHooks.QueueLimit, EventDelay: MonitorTestHooks.EventDelay,
	}
	o.Seed = func(ctx context.Context) ([]string, error) {
		// The index first: a write after this read is an event.
		k, err := gitstore.IndexKeys(r.GitDir)
		if err != nil {
			return nil, err
		}
		keys = k
		ch, err := git.WorktreeChanges(ctx, base, r.WorkTree)
		if err != nil {
			return nil, err
		}
		return ch.Paths(), nil
	}
	reseed := func(context.Context, string) ([]string, bool, error) { return nil, true, nil }
	o.Extras = []fsmonitor.Extra{
		{Dir: r.GitDir, Names: []string{"index"}, OnChange: func(ctx context.Context, _ string) ([]string, bool, error) {
			k, err := gitstore.IndexKeys(r.GitDir)
			if errors.Is(err, os.ErrNotExist) {
				k, err = map[string]string{}, nil
			}
			if err != nil {
				return nil, false, err
			}
			var changed []string
			for p, v := range k {
				if keys[p] != v {
					changed = append(changed, p)
				}
			}
			for p := range keys {
				if _, ok := k[p]; !ok {
					changed = append(changed, p)
				}
			}
			keys = k
			return changed, false, nil
		}},
		{Dir: r.CommonDir, Names: []string{"config", "info"}, OnChange: reseed},
	}
	// info/ is made if missing (as git init makes it), so it can be watched
	// before an exclude or attributes file appears in it.
	info := filepath.Join(r.CommonDir, "info")
	if err := os.MkdirAll(info, 0o777); err != nil {
		return err
	}
	o.Extras = append(o.Extras, fsmonitor.Extra{Dir: info, Names: []string{"exclude", "attributes"}, OnChange: reseed})
	return fsmonitor.Serve(ctx, o)
}

// WorktreeChanges is git.WorktreeChanges through the worktree's monitor
// when one answers (only the paths it names are read; Changes.Watched is
// then true), else the full scan. The result is the same either way.
func WorktreeChanges(ctx context.Context, git *gitstore.Store, base gitstore.Hash, dir string) (*gitstore.Changes, error) {
	if gd, err := gitstore.WorktreeGitDir(dir); err == nil {
		if paths, err := fsmonitor.Query(ctx, MonitorDir(gd), dir, base.String(), monitorWait); err == nil {
			return git.WorktreeChangesAmong(ctx, base, dir, paths)
		}
	}
	return git.WorktreeChanges(ctx, base, dir)
}

// startMonitor starts the worktree's monitor with m.MonitorCommand, when
// set; one already running makes the new one exit at once. A monitor that
// cannot start costs speed only, so its failure is not the caller's.
func (m *Manager) startMonitor(ctx context.Context, c *Contract) {
	if len(m.MonitorCommand) == 0 || !fsmonitor.Supported() {
		return
	}
	argv := append(append([]string{}, m.MonitorCommand...), "--worktree", c.Path, "--base", c.Base)
	fsmonitor.Spawn(ctx, argv, monitorEnv())
}

// monitorEnv is this process's environment without the variables that
// would point the monitor's git reads at another repository or index
// (a hook's GIT_DIR, GIT_INDEX_FILE).
func monitorEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// stopMonitor asks the worktree's monitor to end, if one runs.
func (m *Manager) stopMonitor(ctx context.Context, c *Contract) {
	if gd, err := gitstore.WorktreeGitDir(c.Path); err == nil {
		fsmonitor.Stop(ctx, MonitorDir(gd), monitorWait)
	}
}

// MonitorTestHooks are the test hooks of the monitors this process
// serves (fsmonitor.Options.QueueLimit and EventDelay).
var MonitorTestHooks struct {
	QueueLimit int
	EventDelay time.Duration
}
