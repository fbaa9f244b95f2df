package gates

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ideate/git-ideate/internal/confine"
)

// A gate runs code the workers wrote: their tests, and the production
// code those tests call. confinedStart starts such a process where the
// operating system confines it (confine.Start, as a worker's own commands
// are): it may write only where the run itself writes (the directory the
// tests run in, the run's temporary directories) and the build caches of
// the user's runners, so a test whose code writes the main checkout,
// another worktree or the repository's git directory (hooks, config,
// refs, objects) is refused by the kernel, not trusted.
func confinedStart(cmd *exec.Cmd, writable []string) error {
	w := append([]string(nil), writable...)
	if c := goBuildCache(); c != "" {
		w = append(w, c)
	}
	// The places a project's runner also writes (a cache under the home
	// directory), named by the user; a worker cannot change this
	// environment, which is the gate's own.
	for _, d := range filepath.SplitList(os.Getenv(WritableEnv)) {
		if filepath.IsAbs(d) {
			if _, err := os.Stat(d); err == nil {
				w = append(w, d)
			}
		}
	}
	return confine.Start(cmd, w)
}

// WritableEnv names the environment variable that lists (as PATH does)
// further directories a gate's test run may write into.
const WritableEnv = "GIT_IDEATE_GATE_WRITABLE"

// goBuildCache is the Go build cache the go command uses here ("" for
// none), made when missing, as go would.
func goBuildCache() string {
	c := os.Getenv("GOCACHE")
	if c == "off" {
		return ""
	}
	if c == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		c = filepath.Join(base, "go-build")
	}
	if os.MkdirAll(c, 0o777) != nil {
		return ""
	}
	return c
}
