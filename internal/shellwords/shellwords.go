package shellwords

import "strings"

// Split splits a shell line into simple commands, each a list of words with
// the quoting removed. Empty commands are dropped; a quoted empty string
// (” or "") is a word.
func Split(line string) [][]string {
	cs := Commands(line)
	if len(cs) == 0 {
		return nil
	}
	out := make([][]string, len(cs))
	for i, c := range cs {
		out[i] = c.Words
	}
	return out
}

// A Command is one simple command of a line: its words, quoting removed,
// and how many parentheses (subshells, or the groups of a command
// substitution) enclose it, so a reader can tell where a `cd` stops
// applying.
type Command struct {
	Words []string
	Depth int
}

// Commands splits a shell line into its simple commands as Split does,
// with each command's parenthesis depth (never below zero: a stray ')'
// is ignored).
func Commands(line string) []Command {
	var cmds []Command
	depth, start := 0, 0
	var words []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, Command{Words: words, Depth: start})
			words = nil
		}
		start = depth
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\':
			if i+1 < len(line) {
				i++
				if line[i] != '\n' { // a backslash-newline joins lines
					w.WriteByte(line[i])
					inWord = true
				}
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				w.WriteString(line[i+1:])
				i = len(line)
			} else {
				w.WriteString(line[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`\n", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
		case c == '#' && !inWord:
			for i < len(line) && line[i] != '\n' {
				i++
			}
			endCmd()
		case c == '(' || c == ')':
			endCmd()
			if c == '(' {
				depth++
			} else if depth > 0 {
				depth--
			}
			start = depth
		case c == ';' || c == '&' || c == '|' || c == '\n':
			endCmd()
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// wrappers are the commands TrimPrefixes looks through: each runs the
// command that follows it.
var wrappers = []string{"command", "exec", "nohup", "time", "env", "sudo", "!"}

// TrimPrefixes drops what stands before a simple command's program:
// leading VAR=value assignments and the wrappers command, env, exec, nohup, sudo, time and ! with their own options
// ("env FOO=1 sudo -E make" → "make"; an option's argument is not skipped). It returns the rest of words,
// empty when nothing runs.
func TrimPrefixes(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case IsAssignment(w):
			words = words[1:]
		case isWrapper(w):
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") && words[0] != "-" {
				words = words[1:] // the wrapper's own options
			}
		default:
			return words
		}
	}
	return words
}

func isWrapper(w string) bool {
	for _, x := range wrappers {
		if w == x {
			return true
		}
	}
	return false
}

// IsAssignment reports whether a word is a shell variable assignment,
// NAME=value with NAME a letter or underscore followed by letters, digits
// and underscores.
func IsAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
