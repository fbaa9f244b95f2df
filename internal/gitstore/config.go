package gitstore

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/osproc"
)

// Config is the merged git configuration of a repository as git itself
// reads it (`git config --list -z --includes`: every file, includes and
// their conditions, `git -c`), read once, so it cannot disagree with git.
type Config struct {
	vars []configVar // in the order git lists them
	// files are the repository's config files and every file a value
	// came from, as stat saw them (see Changed).
	files map[string]fileKey
	err   error // git could not read the configuration (Err)
}

// Err is why git could not read the configuration; nil when it could.
func (c *Config) Err() error { return c.err }

type configVar struct {
	section, sub, key, value string
}

// LoadConfig reads the configuration that applies to r. One git refuses
// to read is not taken for an empty one (which would turn the steering
// gate off and commit under the fallback identity): Err reports it. What
// git printed is kept under a stamp of the environment and of every file
// it may come from (stamp): a command under the same stamp reads it
// back instead of running git, a fifth of a CLI write's time.
func LoadConfig(r *Repo) *Config {
	cache := filepath.Join(r.GitDir, "ideate", "config-cache")
	if data, err := osproc.ReadRegular(cache, configCacheMax); err == nil {
		if stamp, out, ok := strings.Cut(string(data), "\n"); ok {
			if c := parseConfig(r, []byte(out)); c.stamp() == stamp {
				return c
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := gitProc(ctx, r.GitDir, "--git-dir="+r.GitDir, "config", "--list", "-z", "--includes", "--show-origin").Output()
	if err != nil {
		// Without a git on PATH there is nothing to ask: the stores write
		// without git, under the defaults and the fallback identity. A git
		// that ran and refused is an error.
		c := parseConfig(r, nil)
		if ee, ok := err.(*exec.ExitError); ok {
			c.err = apperr.Wrap(GitFailed, err, "git cannot read this repository's configuration: %s", firstLine(string(ee.Stderr), err))
		}
		return c
	}
	c := parseConfig(r, out)
	// A file changed so recently that a change in the same clock tick
	// would not show in its mtime is not trusted to a stamp.
	for _, k := range c.files {
		if k.exists && time.Since(time.Unix(0, k.mtime)) < 2*time.Second {
			return c
		}
	}
	_ = atomicfile.Replace(cache, []byte(c.stamp()+"\n"+string(out)), atomicfile.Options{})
	return c
}

// configCacheMax bounds the kept configuration.
const configCacheMax = 4 << 20

// parseConfig reads what `git config --list -z --show-origin` printed (an
// origin, "file:<path>" or "command line:", and a "key\nvalue" per NUL; a
// key alone is a bare key, true), with the state of every file a value
// came from and of every file git may read the configuration from, present
// or not (a global file made later must be seen), and HEAD, which an
// onbranch: include depends on.
func parseConfig(r *Repo, out []byte) *Config {
	c := &Config{files: map[string]fileKey{}}
	ps := []string{filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree"), filepath.Join(r.GitDir, "HEAD"), "/etc/gitconfig"}
	if home := os.Getenv("HOME"); home != "" {
		ps = append(ps, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		ps = append(ps, filepath.Join(x, "git", "config"))
	}
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if p := os.Getenv(k); filepath.IsAbs(p) {
			ps = append(ps, p)
		}
	}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		if p, ok := strings.CutPrefix(recs[i], "file:"); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(r.GitDir, p)
			}
			ps = append(ps, p)
		}
		// "section[.subsection].name", then the value
		key, value, ok := strings.Cut(recs[i+1], "\n")
		if !ok {
			value = "true"
		}
		first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
		if first <= 0 || last == len(key)-1 {
			continue
		}
		sub := ""
		if first < last {
			sub = key[first+1 : last]
		}
		c.vars = append(c.vars, configVar{key[:first], sub, key[last+1:], value})
	}
	for _, p := range ps {
		if _, seen := c.files[p]; !seen {
			c.files[p], _ = statKey(p)
		}
	}
	return c
}

// stamp names the environment git reads the configuration under (HOME,
// XDG_CONFIG_HOME, every GIT_CONFIG* variable, `git -c` included) and the
// state of every file of c, as stat sees them now.
func (c *Config) stamp() string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || k == "XDG_CONFIG_HOME" || strings.HasPrefix(k, "GIT_CONFIG") {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	b := []byte(strings.Join(env, "\x00"))
	for _, p := range slices.Sorted(maps.Keys(c.files)) {
		k := c.files[p]
		b = fmt.Appendf(b, "\x00%d %d %d %t %q", k.ino, k.size, k.mtime, k.exists, p)
	}
	return fmt.Sprintf("ideate config cache 2 %x", sha256.Sum256(b))
}

// Changed reports whether a file c was read from, or one git would read,
// differs now from when it was read: a long-lived process reads the
// configuration again only then.
func (c *Config) Changed() bool {
	for p, k := range c.files {
		if now, _ := statKey(p); now != k {
			return true
		}
	}
	return false
}

// Get returns the last value of section.key, and whether it is set.
// Section and key names are case-insensitive.
func (c *Config) Get(section, key string) (string, bool) { return c.GetSub(section, "", key) }

// GetSub is Get for a key inside a subsection: the last value git lists.
func (c *Config) GetSub(section, sub, key string) (string, bool) {
	vals := c.GetAllSub(section, sub, key)
	if len(vals) == 0 {
		return "", false
	}
	return vals[len(vals)-1], true
}

// HasSection reports whether any key of section (in any subsection) is set.
func (c *Config) HasSection(section string) bool {
	for _, v := range c.vars {
		if strings.EqualFold(v.section, section) {
			return true
		}
	}
	return false
}

// GetAllSub returns every value of section.sub.key, in the order git
// lists them (the files from system to worktree, each top to bottom); nil
// when it is not set.
func (c *Config) GetAllSub(section, sub, key string) []string {
	var vals []string
	for _, v := range c.vars {
		if v.sub == sub && strings.EqualFold(v.section, section) && strings.EqualFold(v.key, key) {
			vals = append(vals, v.value)
		}
	}
	return vals
}

// AddLocalConfig adds a value to key ("section.sub.key") in the
// repository's own config file (`git config --local --add`); the Store's
// Config does not see it. A failure is apperr.Write.
func (s *Store) AddLocalConfig(ctx context.Context, key, value string) error {
	_, err := s.RunGit(ctx, "", "--git-dir="+s.repo.CommonDir, "config", "--local", "--add", key, value)
	if err != nil && ctx.Err() == nil {
		return apperr.Wrap(apperr.Write, err, "git config --add %s %s failed", key, value)
	}
	return err
}

// Bool reads a git boolean (true/yes/on/1, false/no/off/0; a bare key is true).
func (c *Config) Bool(section, key string, def bool) bool {
	v, ok := c.Get(section, key)
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1":
		return true
	case "false", "no", "off", "0":
		return false
	}
	return def
}

// Int reads an integer with git's k/m/g suffixes (ParseInt); a value
// that is not one is def.
func (c *Config) Int(section, key string, def int64) int64 {
	if v, ok := c.Get(section, key); ok {
		if n, ok := ParseInt(v); ok {
			return n
		}
	}
	return def
}

// ParseInt parses an integer the way git does: decimal with an optional
// k, m or g suffix; ok is false for anything else, overflow included.
func ParseInt(v string) (int64, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	for i, suffix := range []string{"k", "m", "g"} {
		if rest, ok := strings.CutSuffix(v, suffix); ok {
			mult, v = 1<<(10*(i+1)), rest
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, false
	}
	return n * mult, true
}
