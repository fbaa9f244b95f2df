package gitstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Config is the merged git configuration of a repository, read the way git
// reads it: system, global (XDG, then ~/.gitconfig), local, worktree; later
// files win. Includes are not followed.
type Config struct {
	vars []configVar // every file's variables, in the order git lists them
}

type configVar struct {
	section, sub, key, value string
}

// LoadConfig reads the configuration that applies to r.
func LoadConfig(r *Repo) *Config {
	c := &Config{}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		sys := os.Getenv("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		c.add(sys)
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		c.add(g)
	} else {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		home, _ := os.UserHomeDir()
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			c.add(filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			c.add(filepath.Join(home, ".gitconfig"))
		}
	}
	if r != nil {
		c.add(filepath.Join(r.CommonDir, "config"))
		if r.GitDir != r.CommonDir && c.Bool("extensions", "worktreeconfig", false) {
			c.add(filepath.Join(r.GitDir, "config.worktree"))
		}
	}
	return c
}

func (c *Config) add(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if vars, ok := parseConfig(b); ok {
		c.vars = append(c.vars, vars...)
	}
}

// Get returns the last value of section[.subsection].key, and whether it is
// set. Section and key names are case-insensitive; "a.b.c" style keys are
// passed as section "a", key "c" with subsection "b" via GetSub.
func (c *Config) Get(section, key string) (string, bool) { return c.GetSub(section, "", key) }

// GetSub is Get for a key inside a subsection: the last value git lists.
func (c *Config) GetSub(section, sub, key string) (string, bool) {
	vals := c.GetAllSub(section, sub, key)
	if len(vals) == 0 {
		return "", false
	}
	return vals[len(vals)-1], true
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
// repository's own config file, beside any values it has, with
// `git config --local --add`. The Store's Config, read when it was
// opened, does not see the new value. A failure is apperr.Write.
func (s *Store) AddLocalConfig(ctx context.Context, key, value string) error {
	cmd := s.git(ctx, "config", "--local", "--add", key, value)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return apperr.Wrap(apperr.Write, err, "git config --add %s %s failed: %s", key, value, firstLine(errb.String(), err))
	}
	return nil
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

// Int reads an integer with git's k/m/g suffixes.
func (c *Config) Int(section, key string, def int64) int64 {
	v, ok := c.Get(section, key)
	if !ok {
		return def
	}
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, v[:len(v)-1]
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, v[:len(v)-1]
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n * mult
}
