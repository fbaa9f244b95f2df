package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/pathglob"
)

// ignoreRule is one line of a .gitignore-style file.
type ignoreRule struct {
	pat      string // wildmatch pattern
	neg      bool   // "!": re-include
	dirOnly  bool   // trailing "/": directories only
	anchored bool   // contains '/': matched against the path from base
}

// ignoreList is the rules of one file, and the directory ("" = the top,
// else "a/b/") its patterns are relative to.
type ignoreList struct {
	base  string
	rules []ignoreRule
}

// parseIgnore reads gitignore syntax: blank lines and '#' comments are
// skipped, trailing unquoted spaces dropped, "\#" and "\!" quote a leading
// '#' or '!'.
func parseIgnore(data []byte, base string) ignoreList {
	l := ignoreList{base: base}
	for _, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSuffix(string(line), "\r")
		if s == "" || s[0] == '#' {
			continue
		}
		// Trailing spaces go unless quoted with a backslash.
		for len(s) > 0 && s[len(s)-1] == ' ' && !(len(s) > 1 && s[len(s)-2] == '\\') {
			s = s[:len(s)-1]
		}
		if strings.HasSuffix(s, `\ `) {
			s = s[:len(s)-2] + " "
		}
		var r ignoreRule
		if s[0] == '!' {
			r.neg, s = true, s[1:]
		} else if strings.HasPrefix(s, `\!`) || strings.HasPrefix(s, `\#`) {
			s = s[1:]
		}
		if strings.HasSuffix(s, "/") {
			r.dirOnly, s = true, strings.TrimRight(s, "/")
		}
		if s == "" {
			continue
		}
		if strings.Contains(s, "/") {
			r.anchored, s = true, strings.TrimPrefix(s, "/")
		}
		r.pat = s
		l.rules = append(l.rules, r)
	}
	return l
}

// match decides path (relative to the top, with name its last component)
// by this list alone: the last matching rule wins. decided is false when no
// rule matches.
func (l *ignoreList) match(path, name string, isDir bool) (ignored, decided bool) {
	rel := strings.TrimPrefix(path, l.base)
	for i := len(l.rules) - 1; i >= 0; i-- {
		r := &l.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.anchored {
			ok = pathglob.Match(r.pat, rel)
		} else {
			ok = pathglob.Match(r.pat, name)
		}
		if ok {
			return !r.neg, true
		}
	}
	return false, false
}

// ignorer decides whether untracked paths are ignored, with git's
// precedence: the .gitignore files from the deepest directory up, then
// $GIT_COMMON_DIR/info/exclude, then core.excludesFile. A path inside an
// ignored directory is never asked about: the walk does not enter it.
type ignorer struct {
	global []ignoreList // lowest precedence first: excludesFile, info/exclude
	stack  []ignoreList // .gitignore files, top directory first
}

func newIgnorer(cfg *Config, commonDir string) *ignorer {
	ig := &ignorer{}
	excl, ok := cfg.Get("core", "excludesfile")
	if !ok {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			if home, err := os.UserHomeDir(); err == nil {
				xdg = filepath.Join(home, ".config")
			}
		}
		if xdg != "" {
			excl = filepath.Join(xdg, "git", "ignore")
		}
	} else if strings.HasPrefix(excl, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			excl = filepath.Join(home, excl[2:])
		}
	}
	if excl != "" {
		if b, err := os.ReadFile(excl); err == nil {
			ig.global = append(ig.global, parseIgnore(b, ""))
		}
	}
	if b, err := os.ReadFile(filepath.Join(commonDir, "info", "exclude")); err == nil {
		ig.global = append(ig.global, parseIgnore(b, ""))
	}
	return ig
}

// ignored reports whether path (name its last component) is ignored.
func (ig *ignorer) ignored(path, name string, isDir bool) bool {
	for i := len(ig.stack) - 1; i >= 0; i-- {
		if ign, ok := ig.stack[i].match(path, name, isDir); ok {
			return ign
		}
	}
	for i := len(ig.global) - 1; i >= 0; i-- {
		if ign, ok := ig.global[i].match(path, name, isDir); ok {
			return ign
		}
	}
	return false
}
