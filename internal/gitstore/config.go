package gitstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Config is the merged git configuration of a repository, read the way git
// reads it: system, global (XDG, then ~/.gitconfig), local, worktree, then
// the command line's (git -c); later ones win. The files are read here;
// when one of them has an [include] or [includeIf] section, whose
// conditions (gitdir:, onbranch:, hasconfig:) only git evaluates as git
// does, the whole configuration is what `git config --list --includes`
// prints instead.
type Config struct {
	vars []configVar // every file's variables, in the order git lists them
	// includes: a file read has an include section.
	includes bool
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
	if c.includes && r != nil {
		if vars, err := listConfig(r); err == nil {
			c.vars = vars
			return c
		}
	}
	c.addEnv()
	return c
}

// listConfig is the configuration git itself reads for r, includes
// followed, from `git config --list -z --includes`: one entry per
// "key\nvalue" (a key alone is a bare true) ended by a NUL. Reading the
// configuration takes no caller's context (it is read once, at Open), so
// the process is bounded here.
func listConfig(r *Repo) ([]configVar, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := Command(ctx, "git", "--git-dir="+r.GitDir, "config", "--list", "-z", "--includes")
	cmd.Dir = r.GitDir
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	c := &Config{}
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		key, value, _ := strings.Cut(rec, "\n")
		c.addKey(key, value)
	}
	return c.vars, nil
}

// addEnv adds, after the files so that they win as in git, the settings
// git hands a subcommand in its environment: GIT_CONFIG_COUNT with
// GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n>, then GIT_CONFIG_PARAMETERS,
// which `git -c key=value ideate …` sets. An entry git would refuse is
// skipped.
func (c *Config) addEnv() {
	if n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := 0; i < n; i++ {
			k, ok := os.LookupEnv("GIT_CONFIG_KEY_" + strconv.Itoa(i))
			v, vok := os.LookupEnv("GIT_CONFIG_VALUE_" + strconv.Itoa(i))
			if ok && vok {
				c.addKey(k, v)
			}
		}
	}
	if p := os.Getenv("GIT_CONFIG_PARAMETERS"); p != "" {
		for _, kv := range parseConfigParameters(p) {
			c.addKey(kv[0], kv[1])
		}
	}
}

// addKey adds the dotted key "section[.subsection].name" with value.
func (c *Config) addKey(key, value string) {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first <= 0 || last == len(key)-1 {
		return
	}
	sub := ""
	if first < last {
		sub = key[first+1 : last]
	}
	c.vars = append(c.vars, configVar{key[:first], sub, key[last+1:], value})
}

// parseConfigParameters reads GIT_CONFIG_PARAMETERS: single-quoted words
// separated by spaces (a quote inside a word is written as quote,
// backslash, quote, quote), each either
// 'key'='value' (git 2.31 and later; 'key'= alone when there is no
// value) or 'key=value'; a key with no value is true. It returns the pairs it read before anything it cannot.
func parseConfigParameters(p string) [][2]string {
	var out [][2]string
	for {
		p = strings.TrimLeft(p, " \t\n")
		if p == "" {
			return out
		}
		word, rest, ok := sqWord(p)
		if !ok {
			return out
		}
		if strings.HasPrefix(rest, "=") {
			if !strings.HasPrefix(rest[1:], "'") { // 'key'= alone: no value, true
				out, p = append(out, [2]string{word, "true"}), rest[1:]
				continue
			}
			value, after, ok := sqWord(rest[1:])
			if !ok {
				return out
			}
			out, p = append(out, [2]string{word, value}), after
			continue
		}
		if k, v, found := strings.Cut(word, "="); found {
			out = append(out, [2]string{k, v})
		} else {
			out = append(out, [2]string{word, "true"})
		}
		p = rest
	}
}

// sqWord reads one single-quoted word at the start of p, the way git's
// sq_quote writes it, and returns it with what follows.
func sqWord(p string) (string, string, bool) {
	if !strings.HasPrefix(p, "'") {
		return "", p, false
	}
	var b strings.Builder
	for i := 1; i < len(p); i++ {
		if p[i] != '\'' {
			b.WriteByte(p[i])
			continue
		}
		// '\'' and '\!' put a quote or a ! between two quoted parts.
		if i+3 < len(p) && p[i+1] == '\\' && (p[i+2] == '\'' || p[i+2] == '!') && p[i+3] == '\'' {
			b.WriteByte(p[i+2])
			i += 3
			continue
		}
		return b.String(), p[i+1:], true
	}
	return "", p, false
}

func (c *Config) add(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if vars, ok := parseConfig(b); ok {
		c.vars = append(c.vars, vars...)
		for _, v := range vars {
			if strings.EqualFold(v.section, "include") || strings.EqualFold(v.section, "includeif") {
				c.includes = true
			}
		}
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
